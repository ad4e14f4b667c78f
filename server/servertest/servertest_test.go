package servertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func TestMain(m *testing.M) { Main(m) }

// TestBinary runs the built binary through each helper once: a one-shot command, serve over
// a RawConn, and serve with the mcp-go client.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if Build(t) != Build(t) {
		t.Error("Build built twice")
	}
	emu := r2rtest.NewServer(t, r2rtest.Options{})

	t.Run("run", func(t *testing.T) {
		r := Run(t, t.TempDir(), MinimalEnv(t), "", "version")
		if r.Code != 0 || !strings.HasPrefix(r.Stdout, "r2r-mcp e2e ") {
			t.Errorf("version exited %d: %q %q", r.Code, r.Stdout, r.Stderr)
		}
		if r = Run(t, t.TempDir(), MinimalEnv(t), "", "no-such-command"); r.Code == 0 || r.Stderr == "" {
			t.Errorf("an unknown command exited %d: %q", r.Code, r.Stderr)
		}
	})

	t.Run("raw", func(t *testing.T) {
		p := Start(t, t.TempDir(), Env(t, emu.URL), "serve")
		c := NewRawConn(p)
		c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		m := c.Next(10 * time.Second)
		if res, _ := m["result"].(map[string]any); res["serverInfo"].(map[string]any)["version"] != "e2e" {
			t.Fatalf("initialize: %v", m)
		}
		c.Send("junk")
		if m := c.Next(10 * time.Second); m["error"] == nil {
			t.Errorf("junk answered with %v", m)
		}
		go c.Drain()
		p.Stdin.Close()
		if code := p.Wait(10 * time.Second); code != 0 {
			t.Errorf("exit code %d after stdin closed", code)
		}
		if out := p.StdoutText(); strings.Count(out, "\n") != 2 || !strings.Contains(out, `"serverInfo"`) {
			t.Errorf("stdout = %q", out)
		}
	})

	t.Run("session", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s := Serve(ctx, t, GitProject(t, "alpha", nil), Env(t, emu.URL))
		ok, err := s.Call(ctx, "r2r_status", map[string]any{})
		if err != nil || ok.IsError || ok.Structured == nil || !strings.Contains(ok.JSON(), `"structuredContent"`) {
			t.Errorf("r2r_status: %v %+v", err, ok)
		}
		bad, err := s.Call(ctx, "r2r_search", map[string]any{"quest": "x"})
		if err != nil || !bad.IsError || !strings.Contains(bad.Text, "quest") || bad.Meta == nil {
			t.Errorf("misspelled argument: %v %+v", err, bad)
		}
		stdout, stderr := s.Close()
		if strings.Count(stdout, "\n") < 3 || !strings.Contains(stderr, "shutting down") {
			t.Errorf("stdout %q\nstderr %q", stdout, stderr)
		}
		if again, _ := s.Close(); again != stdout {
			t.Error("a second Close returned other output")
		}
	})
}
