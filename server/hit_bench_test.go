package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// BenchmarkSearchHitInProcess measures one cache-hit r2r_search as the server handles a
// JSON-RPC line (validation, middleware, handler, encoding), without a transport; with
// analytics kept (as serve does) and off.
func BenchmarkSearchHitInProcess(b *testing.B) {
	b.Run("analytics", func(b *testing.B) { benchSearchHit(b, b.TempDir()) })
	b.Run("no-analytics", func(b *testing.B) { benchSearchHit(b, "") })
}

func benchSearchHit(b *testing.B, analyticsDir string) {
	emu := r2rtest.NewServer(b, r2rtest.Options{})
	if err := emu.SeedInto(r2rtest.AdminEmail, filepath.Join("..", "testdata", "docs"), "claude-code-proj"); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "proj")
	if err := mkdirAll(filepath.Join(dir, ".git")); err != nil {
		b.Fatal(err)
	}
	s, err := New(Config{R2RURL: emu.URL, WorkDir: dir, ConfigDir: b.TempDir(), AnalyticsDir: analyticsDir, Options: DefaultOptions()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	line := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"incident response"}}}`)
	out := s.MCP.HandleMessage(ctx, line)
	if b, _ := json.Marshal(out); !strings.Contains(string(b), "results") {
		panic(string(b))
	}
	b.ReportAllocs()
	for b.Loop() {
		out := s.MCP.HandleMessage(ctx, line)
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
	}
}

func mkdirAll(p string) error { return os.MkdirAll(p, 0o755) }
