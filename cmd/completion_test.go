package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runRoot(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Getenv: func(string) string { return "" }})
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}

func TestCompletionScripts(t *testing.T) {
	tests := []struct {
		args []string
		want []string // markers of the shell's script
	}{
		{[]string{"completion", "bash"}, []string{"# bash completion V2 for r2r-mcp", "complete -o default -F __start_r2r-mcp r2r-mcp"}},
		{[]string{"completion", "bash", "--no-descriptions"}, []string{"# bash completion V2 for r2r-mcp", "__r2r-mcp_get_completion_results"}},
		{[]string{"completion", "zsh"}, []string{"#compdef r2r-mcp", "compdef _r2r-mcp r2r-mcp"}},
		{[]string{"completion", "fish"}, []string{"# fish completion for r2r-mcp", "complete -c r2r-mcp"}},
		{[]string{"completion", "powershell"}, []string{"Register-ArgumentCompleter", "-CommandName 'r2r-mcp'"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			out, errOut, err := runRoot(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("script lacks %q", w)
				}
			}
			if errOut != "" {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
	t.Run("unsupported shell", func(t *testing.T) {
		if _, _, err := runRoot(t, "completion", "tcsh"); err == nil || !strings.Contains(err.Error(), `unsupported shell "tcsh"`) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestCompletionBashLoads sources the generated script in a real bash and checks it registers
// a completion function for r2r-mcp.
func TestCompletionBashLoads(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	script, _, err := runRoot(t, "completion", "bash")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r2r-mcp.bash")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1" && complete -p r2r-mcp`, "bash", path).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "__start_r2r-mcp") {
		t.Errorf("complete -p: %s", out)
	}
}

// TestCompletionCandidates asks cobra's hidden __complete command, which every generated
// script calls, for the values the scripts will offer.
func TestCompletionCandidates(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish", "powershell"}},
		{[]string{"__complete", "install", ""}, []string{"claude-desktop\t", "claude-code\t", "cursor\t", "vscode\t"}},
		{[]string{"__complete", "install", "cursor", "--scope", ""}, []string{"user", "project", "local"}},
		{[]string{"__complete", "ins"}, []string{"install\t"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			out, _, err := runRoot(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("candidates %q lack %q", out, w)
				}
			}
		})
	}
}
