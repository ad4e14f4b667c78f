package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestCancelDuringTitleLookupCachesNothing: a search or RAG call cancelled while its titles
// are looked up stores nothing; the repeat asks R2R again and gets a complete result (its
// query, mode and titles), and only then is it cached. The title is remembered: a later
// miss on the same document is one R2R request.
func TestCancelDuringTitleLookupCachesNothing(t *testing.T) {
	entered := make(chan struct{}, 1)
	var block atomic.Bool
	// searches counts the request that answers each tool: a search, or a RAG (r2r_rag_query
	// also searches for superseded memories first, which is not what is counted here).
	var searches, rags, lookups atomic.Int64
	e := newEnv(t, withCache(t), withProjectName("demo-app"), withMiddleware(func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, call *r2r.Call) (*r2r.Response, error) {
			route := call.Method + " " + call.Path
			switch {
			case call.Method == "GET" && (call.Path == "/v3/documents" || strings.HasSuffix(call.Path, "/documents")):
				lookups.Add(1)
				if block.Load() {
					entered <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}
			case route == searchRoute:
				searches.Add(1)
			case route == "POST /v3/retrieval/rag":
				rags.Add(1)
			}
			return next(ctx, call)
		}
	}))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "payout-backlog.md"),
		[]byte("# Payout backlog\n\nScale the payout workers when the payout queue backs up."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.r2r.SeedInto(r2rtest.AdminEmail, dir, "claude-code-demo-app"); err != nil {
		t.Fatal(err)
	}
	e.ok("r2r_list_collections", nil) // resolve the project's collection before counting
	lookups.Store(0)                  // the listing counted the project's documents

	for _, tc := range []struct {
		tool, arg string
		answers   *atomic.Int64
	}{{"r2r_search", "query", &searches}, {"r2r_rag_query", "question", &rags}} {
		args := map[string]any{tc.arg: "payout queue backs up"}
		e.deps.titleMemory().forget() // the search before remembered the title
		block.Store(true)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *mcp.CallToolResult, 1)
		go func() {
			res, _ := e.invoke(ctx, tc.tool, args)
			done <- res
		}()
		select {
		case <-entered:
		case <-time.After(10 * time.Second): // only when broken
			t.Fatalf("%s: no title lookup", tc.tool)
		}
		cancel()
		if res := <-done; res == nil || !res.IsError {
			t.Fatalf("%s: the cancelled call did not fail: %+v", tc.tool, res)
		}
		block.Store(false)

		before := tc.answers.Load()
		for i, wantCached := range []bool{false, true} {
			res := e.ok(tc.tool, args)
			validateStructured(t, e.tools[tc.tool], res)
			var title string
			cached := false
			switch tc.tool {
			case "r2r_search":
				o := decode[SearchOutput](t, res)
				if o.Query != args[tc.arg] || o.SearchMode != "advanced" || o.Count == 0 {
					t.Fatalf("repeat %d: %+v", i, o)
				}
				title, cached = o.Results[0].Title, o.Cached
			default:
				o := decode[RAGOutput](t, res)
				if o.Question != args[tc.arg] || len(o.Sources) == 0 {
					t.Fatalf("repeat %d: %+v", i, o)
				}
				title, cached = o.Sources[0].Title, o.Cached
			}
			if cached != wantCached || title != "payout-backlog.md" {
				t.Fatalf("%s repeat %d: cached %v, title %q", tc.tool, i, cached, title)
			}
		}
		if n := tc.answers.Load() - before; n != 1 {
			t.Fatalf("%s: %d requests after the cancel, want 1 (then a hit)", tc.tool, n)
		}
	}
	// Per tool: the cancelled lookup, then one on the repeat, then none (remembered).
	if n := lookups.Load(); n != 4 {
		t.Fatalf("%d title lookups, want 4", n)
	}
	// A miss on a remembered document is one R2R request.
	before, lookupsBefore := searches.Load(), lookups.Load()
	if o := decode[SearchOutput](t, e.ok("r2r_search", map[string]any{"query": "payout workers"})); o.Cached || o.Count == 0 ||
		o.Results[0].Title != "payout-backlog.md" || searches.Load()-before != 1 || lookups.Load() != lookupsBefore {
		t.Fatalf("miss after the titles were remembered: %+v, %d searches, %d lookups", o, searches.Load()-before, lookups.Load()-lookupsBefore)
	}
}
