package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// BenchmarkInitialize measures a cold start as an MCP client sees it: spawn r2r-mcp serve,
// send initialize, read the response (then close stdin and wait for the exit, outside the
// timer). R2R is not contacted before the first tool call, so the address is never dialled.
func BenchmarkInitialize(b *testing.B) {
	servertest.Build(b) // build before the timer starts
	environ := servertest.Env(b, "http://127.0.0.1:1")
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := servertest.Start(b, dir, environ, "serve")
		c := servertest.NewRawConn(p)
		c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
		if m := c.Next(10 * time.Second); m["result"] == nil {
			b.Fatalf("initialize: %v", m)
		}
		b.StopTimer()
		p.Stdin.Close()
		if code := p.Wait(10 * time.Second); code != 0 {
			b.Fatalf("exit code %d", code)
		}
		b.StartTimer()
	}
}

// benchServe starts r2r-mcp serve (no rate limit) against emu with one document ingested
// and returns a connected mcp-go client session.
func benchServe(b *testing.B, emuURL string, args ...string) session {
	b.Helper()
	servertest.Build(b)
	proj := servertest.GitProject(b, "bench", map[string]string{"docs/ledger.md": ledgerText})
	p := servertest.Start(b, proj, servertest.Env(b, emuURL), append([]string{"serve", "--rate-limit", "0"}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	s := connectMCPGo(ctx, b, p, clientOpts{legacy: true})
	b.Cleanup(func() { s.close() })
	if r, err := s.call(ctx, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"}); err != nil || r.IsError {
		b.Fatalf("ingest: %v %+v", err, r)
	}
	return s
}

// BenchmarkStdioSearch measures r2r_search round trips as an MCP client sees them (mcp-go
// client ↔ r2r-mcp over stdio pipes ↔ emulator over loopback HTTP): cached = a cache hit;
// uncached = a distinct query each time; emulator = the same search straight to the
// emulator with the bare R2R client, so uncached − emulator is r2r-mcp's overhead;
// breaker_open = the answer while the circuit breaker is open.
func BenchmarkStdioSearch(b *testing.B) {
	emu := r2rtest.NewServer(b, r2rtest.Options{})
	ctx := context.Background()
	call := func(b *testing.B, s session, q string, wantErr bool) {
		r, err := s.call(ctx, "r2r_search", map[string]any{"query": q})
		if err != nil || r.IsError != wantErr {
			b.Fatalf("err %v, result %+v", err, r)
		}
	}
	b.Run("cached", func(b *testing.B) {
		s := benchServe(b, emu.URL)
		call(b, s, "settlement batch", false)
		b.ReportAllocs()
		for b.Loop() {
			call(b, s, "settlement batch", false)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		s := benchServe(b, emu.URL)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			call(b, s, fmt.Sprintf("settlement batch %d", i), false)
		}
	})
	b.Run("emulator", func(b *testing.B) {
		c, err := r2r.New(r2r.Options{BaseURL: emu.URL})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if _, err := c.Search(ctx, r2r.SearchRequest{Query: fmt.Sprintf("settlement batch %d", i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("breaker_open", func(b *testing.B) {
		down := r2rtest.NewServer(b, r2rtest.Options{})
		s := benchServe(b, down.URL, "--breaker-failures", "1", "--breaker-cooldown", "1h", "--retry-max", "0")
		down.Down(true)
		call(b, s, "trip", true)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			call(b, s, fmt.Sprintf("settlement %d", i), true)
		}
	})
}
