package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realR2RBlock is the shell block of the README's "Try it with a real R2R".
func realR2RBlock(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "### Try it with a real R2R")
	if !ok {
		t.Fatal("README.md has no \"Try it with a real R2R\" section")
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the section has no sh block")
	}
	return block
}

// The README's real-R2R block is safe to paste whole: when make r2r-real fails it says so
// and neither prints the environment (a bare export) nor runs anything else; when it
// succeeds, doctor sees the three variables; it never stops the R2R it has just started.
func TestReadmeRealR2RBlockIsSafeToPaste(t *testing.T) {
	block := realR2RBlock(t)
	for _, shell := range []string{"sh", "bash"} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		for _, tc := range []struct {
			name, make string
			want       []string
		}{
			{"r2r-real fails", `echo "r2r-real: FAILED at step \"postgres\": initdb failed" >&2; exit 1`,
				[]string{"did not start R2R"}},
			{"r2r-real starts", `echo "r2r-real: progress" >&2; echo "R2R_API_URL=http://127.0.0.1:7999 R2R_EMAIL=admin@example.com R2R_PASSWORD=pw-Xy_9"`,
				[]string{"doctor saw http://127.0.0.1:7999 admin@example.com pw-Xy_9"}},
		} {
			t.Run(shell+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				calls := filepath.Join(dir, "calls")
				write := func(path, body string) {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				write(filepath.Join(dir, "fakebin", "make"), `echo "make $*" >>`+calls+`; [ "$2" = r2r-real ] || exit 0; `+tc.make)
				write(filepath.Join(dir, "bin", "r2r-mcp"), `echo "r2r-mcp $*" >>`+calls+`; echo "doctor saw $R2R_API_URL $R2R_EMAIL $R2R_PASSWORD"`)
				cmd := exec.Command(shell)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader(block)
				cmd.Env = []string{"PATH=" + filepath.Join(dir, "fakebin") + ":" + os.Getenv("PATH"), "HOME=" + dir,
					"README_SENTINEL=must-not-be-printed"}
				out, _ := cmd.CombinedOutput()
				for _, w := range tc.want {
					if !strings.Contains(string(out), w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				if strings.Contains(string(out), "README_SENTINEL") {
					t.Errorf("the block printed the environment:\n%s", out)
				}
				log, _ := os.ReadFile(calls)
				if strings.Contains(string(log), "r2r-real-down") {
					t.Errorf("pasting the block stops R2R at once:\n%s", log)
				}
				if ran := strings.Contains(string(log), "r2r-mcp doctor"); ran != (tc.name == "r2r-real starts") {
					t.Errorf("doctor ran: %v\n%s", ran, log)
				}
			})
		}
	}
}

// up.sh names a missing prerequisite before it starts anything (a missing runuser used to
// be reported as "initdb failed").
func TestUpShNamesAMissingPrerequisite(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	// A PATH with what up.sh needs to get going and python3, go and sha256sum, but no curl.
	bin := t.TempDir()
	for _, tool := range []string{"bash", "dirname", "date", "id", "python3", "go", "sha256sum", "setsid", "runuser", "useradd", "chown"} {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := t.TempDir()
	cmd := exec.Command(bash, "../testdata/r2r-real/up.sh")
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir(), "R2R_REAL_RUN=" + run, "R2R_REAL_CACHE=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("up.sh without curl succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "missing on PATH: curl (apt-get install curl)") {
		t.Errorf("up.sh without curl:\n%s", out)
	}
	if entries, _ := os.ReadDir(run); len(entries) != 0 {
		t.Errorf("up.sh started something before checking its prerequisites: %v", entries)
	}
}
