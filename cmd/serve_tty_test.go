//go:build linux

package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// TestServeAtATerminalHints: serve started by hand at a terminal says, on stderr, that it
// speaks MCP on stdio and how to add it to a client, then serves as always; started by a
// client (stdin a pipe) or with --http it says nothing.
func TestServeAtATerminalHints(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	tests := []struct {
		name string
		in   io.Reader
		args []string
		hint bool
	}{
		{"terminal", tty, nil, true},
		{"pipe", strings.NewReader(""), nil, false},
		{"terminal, --http", tty, []string{"--http", "127.0.0.1:0"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"R2R_API_URL": closedURL(t), auth.ConfigDirEnv: t.TempDir()}
			var errOut bytes.Buffer
			ran := false
			deps := Deps{IO: IOStreams{In: tt.in, Out: &bytes.Buffer{}, ErrOut: &errOut}, Getenv: func(k string) string { return env[k] }}
			c := newServeCmd(deps, func(context.Context, server.Config) error { ran = true; return nil })
			c.SetArgs(append([]string{"--project-dir", t.TempDir()}, tt.args...))
			if err := c.Execute(); err != nil || !ran {
				t.Fatalf("serve: %v (ran %v)", err, ran)
			}
			got := errOut.String()
			if hinted := strings.Contains(got, "speaks MCP on stdin/stdout"); hinted != tt.hint {
				t.Fatalf("hint %v, want %v; stderr %q", hinted, tt.hint, got)
			}
			if tt.hint && (strings.Count(got, "\n") != 1 || !strings.Contains(got, "r2r-mcp install claude-code")) {
				t.Errorf("the hint is not one line naming how to add serve to a client: %q", got)
			}
		})
	}
}
