package server_test

import (
	"testing"
	"time"
)

// BenchmarkInitialize measures a cold start as an MCP client sees it: spawn r2r-mcp serve,
// send initialize, read the response (then close stdin and wait for the exit, outside the
// timer). R2R is not contacted before the first tool call, so the address is never dialled.
func BenchmarkInitialize(b *testing.B) {
	binary(b) // build before the timer starts
	environ := env(b, "http://127.0.0.1:1")
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := start(b, dir, environ, "serve")
		c := newRawConn(p)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
		if m := c.next(10 * time.Second); m["result"] == nil {
			b.Fatalf("initialize: %v", m)
		}
		b.StopTimer()
		p.stdin.Close()
		if code := p.wait(10 * time.Second); code != 0 {
			b.Fatalf("exit code %d", code)
		}
		b.StartTimer()
	}
}
