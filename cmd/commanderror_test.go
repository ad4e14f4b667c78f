package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestCommandErrorsNameNextStep: a command whose R2R call fails says why and what to do,
// as the tools do (R2R down: start it or point r2r-mcp at it; no credential: log in), not
// a transport error or R2R's bare "401 No credentials provided.".
func TestCommandErrorsNameNextStep(t *testing.T) {
	auth.MockKeyring()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	locked := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	down := closedURL(t)
	root := statusProject(t, "demo", "")
	tests := []struct {
		name, url string
		args      []string
		want      []string
	}{
		{"sync, R2R down", down, []string{"sync", root}, []string{"Cannot reach R2R at " + down, "Start R2R"}},
		{"memory list, R2R down", down, []string{"memory", "list", "--dir", root}, []string{"Cannot reach R2R at " + down, "Start R2R"}},
		{"index create, R2R down", down, []string{"index", "create"}, []string{"Cannot reach R2R at " + down, "Start R2R"}},
		{"sync, no login", locked.URL, []string{"sync", root}, []string{"R2R requires authentication (401)", "r2r-mcp login", "run the command again"}},
		{"memory list, no login", locked.URL, []string{"memory", "list", "--dir", root}, []string{"R2R requires authentication (401)", "r2r-mcp login"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := t.TempDir()
			var out, errOut bytes.Buffer
			rootCmd := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
				Getenv: func(k string) string {
					if k == auth.ConfigDirEnv {
						return config
					}
					return ""
				}})
			rootCmd.SetArgs(append(tt.args, "--url", tt.url))
			err := rootCmd.ExecuteContext(context.Background())
			if err == nil {
				t.Fatalf("no error; stdout %q stderr %q", out.String(), errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}
