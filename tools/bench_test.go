package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// benchRetries are the retries of the benchmarks' client, serve's default.
const benchRetries = 3

// benchSearch returns the r2r_search handler of a registry in the call chain serve serves (cache,
// rate limits as given, Resilient client with breaker b) against the emulator at url,
// with one document ingested.
func benchSearch(b *testing.B, url string, br *r2r.Breaker, cfg Config) server.ToolHandlerFunc {
	b.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: url, Middleware: r2r.Resilient(r2r.ResilienceOptions{Breaker: br, Retry: r2r.RetryPolicy{MaxRetries: benchRetries}})})
	if err != nil {
		b.Fatal(err)
	}
	results, err := cache.New(cache.Config{MaxBytes: 16 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(results.Close)
	proj := filepath.Join(b.TempDir(), "bench")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "ledger.md"), []byte(ledgerDoc), 0o644); err != nil {
		b.Fatal(err)
	}
	d := &Deps{Config: cfg, Client: c, Projects: project.NewResolver(project.Options{WorkDir: proj, CacheFile: "-"}),
		History: NewSearchHistory(0), Cache: results}
	reg := map[string]server.ToolHandlerFunc{}
	for _, t := range Chain(d, Registry(d), Layers{}) {
		reg[t.Def.Name] = t.Handler
	}
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"file_path": "ledger.md"}
	if res, err := reg["r2r_ingest_document"](context.Background(), req); err != nil || res.IsError {
		b.Fatalf("ingest: %v %v", err, res)
	}
	return reg["r2r_search"]
}

func searchReq(q string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "r2r_search"
	req.Params.Arguments = map[string]any{"query": q}
	return req
}

// BenchmarkSearchTool measures one r2r_search call through the tool call chain (argument
// validation and parsing, scope, cache, rate limit, Resilient client) without the MCP
// transport:
// cached = a cache hit; uncached = a distinct query each time, answered by the in-process
// emulator over loopback HTTP; emulator = the same search with the bare client, to
// subtract; breaker_open = the answer while the circuit breaker is open; rate_limited =
// a miss over the rate limit.
func BenchmarkSearchTool(b *testing.B) {
	emu := r2rtest.NewServer(b, r2rtest.Options{})
	ctx := context.Background()
	check := func(b *testing.B, res *mcp.CallToolResult, err error, wantErr bool) {
		if err != nil || res.IsError != wantErr {
			b.Fatalf("err %v, result %+v", err, res)
		}
	}
	b.Run("cached", func(b *testing.B) {
		h := benchSearch(b, emu.URL, r2r.NewBreaker(emu.URL, r2r.BreakerSettings{}, nil), testConfig())
		req := searchReq("ledger double-entry")
		res, err := h(ctx, req)
		check(b, res, err, false)
		b.ReportAllocs()
		for b.Loop() {
			res, err := h(ctx, req)
			check(b, res, err, false)
		}
	})
	b.Run("uncached", func(b *testing.B) {
		h := benchSearch(b, emu.URL, r2r.NewBreaker(emu.URL, r2r.BreakerSettings{}, nil), testConfig())
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			res, err := h(ctx, searchReq(fmt.Sprintf("ledger double-entry %d", i)))
			check(b, res, err, false)
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
			if _, err := c.Search(ctx, r2r.SearchRequest{Query: fmt.Sprintf("ledger double-entry %d", i)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("breaker_open", func(b *testing.B) {
		br := r2r.NewBreaker(emu.URL, r2r.BreakerSettings{Failures: 1, Cooldown: time.Hour}, nil)
		h := benchSearch(b, emu.URL, br, testConfig())
		// Every attempt of one call (the first try and its retries) fails: the call fails
		// and, with Failures: 1, opens the breaker.
		emu.ForceStatus("POST /v3/retrieval/search", 503, 1+benchRetries)
		res, err := h(ctx, searchReq("trip the breaker"))
		check(b, res, err, true)
		if br.State().State != "open" {
			b.Fatal("breaker not open")
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			res, err := h(ctx, searchReq(fmt.Sprintf("ledger %d", i)))
			check(b, res, err, true)
		}
	})
	b.Run("rate_limited", func(b *testing.B) {
		h := benchSearch(b, emu.URL, r2r.NewBreaker(emu.URL, r2r.BreakerSettings{}, nil),
			rated(1e-9, 1))
		res, err := h(ctx, searchReq("ledger double-entry"))
		check(b, res, err, false)
		b.ReportAllocs()
		i := 0
		for b.Loop() { // misses: cache hits are never refused
			i++
			res, err := h(ctx, searchReq(fmt.Sprintf("ledger double-entry %d", i)))
			check(b, res, err, true)
		}
	})
}
