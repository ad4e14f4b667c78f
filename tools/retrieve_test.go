package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// hideFromHybrid makes the emulator's semantic and hybrid searches (r2r_search's request and the
// one R2R's RAG runs) miss the file at path, as R2R 3.6.6's full-text leg misses a chunk
// that lacks one of the question's words; full-text-only searches and searches narrowed to
// chosen chunk ids see it.
func hideFromHybrid(path string) r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, c *r2r.Call) (*r2r.Response, error) {
			if c.Method != http.MethodPost || !strings.HasPrefix(c.Path, "/v3/retrieval/") {
				return next(ctx, c)
			}
			var body map[string]any
			if err := json.Unmarshal(c.Body, &body); err != nil {
				return nil, err
			}
			s, _ := body["search_settings"].(map[string]any)
			if s == nil || s["use_semantic_search"] != true || strings.Contains(string(c.Body), `"id":{"$in"`) {
				return next(ctx, c)
			}
			s["filters"] = map[string]any{"$and": []any{s["filters"], map[string]any{kbsync.MetaSourcePath: map[string]any{"$ne": path}}}}
			cc := *c
			var err error
			if cc.Body, err = json.Marshal(body); err != nil {
				return nil, err
			}
			return next(ctx, &cc)
		}
	}
}

// TestIdentifierQuestionFindsItsChunk: a question naming identifiers finds the file that
// holds them even when the hybrid search misses it (a second, full-text request for the
// identifiers, fused by rank), in r2r_search and in the context r2r_rag_query answers from;
// a question without identifiers, and a basic search, cost one request.
func TestIdentifierQuestionFindsItsChunk(t *testing.T) {
	e := newEnv(t, withMiddleware(hideFromHybrid("src/lru.py")))
	filler := strings.Repeat("This part explains how the cache library evicts items and why an empty cache matters. ", 4)
	files := map[string]string{"src/lru.py": "class LRUCache(Cache):\n    def popitem(self):\n        raise KeyError('%s is empty' % type(self).__name__)\n"}
	for _, f := range []string{"docs/intro.md", "docs/eviction.md", "docs/faq.md"} {
		files[f] = "# " + f + "\n\n" + filler + "\n"
	}
	for f, text := range files {
		e.write(f, text)
		e.ok("r2r_ingest_document", map[string]any{"file_path": f, "run_async": false})
	}
	const question = "what error does LRUCache.popitem raise on an empty cache?"
	for _, tc := range []struct {
		name, query, mode string
		found             bool
		requests          int
	}{
		{"identifiers, advanced", question, "advanced", true, 2},
		{"identifiers, basic", question, "basic", false, 1},
		{"no identifiers", "what error is raised on an empty cache?", "advanced", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.r2r.ResetCounts()
			var so SearchOutput
			structured(t, e.ok("r2r_search", map[string]any{"query": tc.query, "search_mode": tc.mode}), &so)
			titles := make([]string, len(so.Results))
			for i, h := range so.Results {
				titles[i] = h.Title
			}
			if slices.Contains(titles, "src/lru.py") != tc.found {
				t.Errorf("results %v: src/lru.py found = %v, want %v", titles, !tc.found, tc.found)
			}
			if n := e.r2r.Count("POST /v3/retrieval/search"); n != tc.requests {
				t.Errorf("%d search requests, want %d", n, tc.requests)
			}
		})
	}
	var ro RAGOutput
	structured(t, e.ok("r2r_rag_query", map[string]any{"question": question}), &ro)
	if !slices.ContainsFunc(ro.Sources, func(s RAGSource) bool { return s.Title == "src/lru.py" }) {
		t.Errorf("RAG sources %+v: no src/lru.py", ro.Sources)
	}
}
