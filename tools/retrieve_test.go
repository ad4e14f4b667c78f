package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
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

// legFaults fails the keyword (full-text only) leg of an advanced search with the emulator's
// fault injection, after the hybrid request has returned so that the forced status reaches
// the keyword request and no other; hybrid forces a status on the hybrid request instead.
// cancel, when set, is called as the keyword request is sent (the caller giving up).
type legFaults struct {
	mu      sync.Mutex
	srv     *r2rtest.Server
	keyword int // status forced on the keyword request; 0 = none
	hybrid  int // status forced on the hybrid request; 0 = none
	cancel  context.CancelFunc
	done    chan struct{} // closed when the hybrid request returned
}

func (f *legFaults) set(keyword, hybrid int, cancel context.CancelFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyword, f.hybrid, f.cancel, f.done = keyword, hybrid, cancel, make(chan struct{})
}

func (f *legFaults) middleware(next r2r.Handler) r2r.Handler {
	return func(ctx context.Context, c *r2r.Call) (*r2r.Response, error) {
		if c.Method != http.MethodPost || c.Path != "/v3/retrieval/search" {
			return next(ctx, c)
		}
		f.mu.Lock()
		keyword, hybrid, cancel, done := f.keyword, f.hybrid, f.cancel, f.done
		f.mu.Unlock()
		if !strings.Contains(string(c.Body), `"use_semantic_search":false`) {
			if hybrid != 0 {
				f.srv.ForceStatus("POST /v3/retrieval/search", hybrid, 1)
			}
			defer close(done)
			return next(ctx, c)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if cancel != nil {
			cancel()
		}
		if keyword != 0 {
			f.srv.ForceStatus("POST /v3/retrieval/search", keyword, 1)
		}
		return next(ctx, c)
	}
}

// TestKeywordLegIsBestEffort: when the identifier (keyword) request of an advanced search
// fails, r2r_search answers from the hybrid search alone and does not cache that answer (the
// next call asks both again, and that one is cached); a failing hybrid search, and the
// caller's cancellation, still end the search.
func TestKeywordLegIsBestEffort(t *testing.T) {
	faults := &legFaults{}
	e := newEnv(t, withMiddleware(faults.middleware), withCache(t))
	faults.srv = e.r2r
	e.write("src/lru.py", "class LRUCache(Cache):\n    def popitem(self):\n        raise KeyError('cache is empty')\n")
	e.ok("r2r_ingest_document", map[string]any{"file_path": "src/lru.py", "run_async": false})
	for i, tc := range []struct {
		name            string
		keyword, hybrid int
		wantErr         bool
	}{
		{"keyword leg fails with 500", 500, 0, false},
		{"keyword leg unavailable", 503, 0, false},
		{"keyword query refused", 400, 0, false},
		{"hybrid search fails", 0, 500, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faults.set(tc.keyword, tc.hybrid, nil)
			query := fmt.Sprintf("what does LRUCache.popitem raise on an empty cache (%d)?", i)
			res := e.call("r2r_search", map[string]any{"query": query, "search_mode": "advanced"})
			if res.IsError != tc.wantErr {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.wantErr, text(res))
			}
			if tc.wantErr {
				return
			}
			var so SearchOutput
			structured(t, res, &so)
			if len(so.Results) == 0 || so.Results[0].Title != "src/lru.py" {
				t.Errorf("results %+v: want src/lru.py from the hybrid search", so.Results)
			}
			faults.set(0, 0, nil)
			for _, wantCached := range []bool{false, true} {
				e.r2r.ResetCounts()
				structured(t, e.ok("r2r_search", map[string]any{"query": query, "search_mode": "advanced"}), &so)
				if so.Cached != wantCached {
					t.Errorf("the call after the degraded one: cached = %v, want %v", so.Cached, wantCached)
				}
				if n, want := e.r2r.Count("POST /v3/retrieval/search"), map[bool]int{false: 2, true: 0}[wantCached]; n != want {
					t.Errorf("the call after the degraded one sent %d searches, want %d", n, want)
				}
			}
		})
	}
	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		faults.set(0, 0, cancel)
		_, _, err := e.deps.retrieve(ctx, "what does LRUCache.popitem raise?", r2r.SearchModeAdvanced, nil, 10)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want the cancellation", err)
		}
	})
}

// TestTestsAndChangelogsRankBelowTheCode: a test file and a change log that repeat a
// question's names more densely than the code that answers it rank below that code, unless
// the question asks about tests or versions.
func TestTestsAndChangelogsRankBelowTheCode(t *testing.T) {
	e := newEnv(t)
	files := map[string]string{
		"src/lru.py":        "class LRUCache(Cache):\n    \"\"\"Least Recently Used cache.\"\"\"\n\n    def popitem(self):\n        \"\"\"Remove and return the least recently used pair.\"\"\"\n        try:\n            key = next(iter(self.__order))\n        except StopIteration:\n            raise KeyError('%s is empty' % type(self).__name__) from None\n",
		"tests/test_lru.py": "def test_lru_popitem():\n    cache = LRUCache(maxsize=2)\n    with pytest.raises(KeyError):\n        cache.popitem()\n\n\ndef test_lru_popitem_empty():\n    cache = LRUCache(maxsize=1)\n    cache.popitem  # LRUCache popitem on an empty LRUCache raises KeyError\n    with pytest.raises(KeyError):\n        LRUCache(maxsize=0).popitem()\n",
		"CHANGES.md":        "# Changes\n\n## 5.2.0\n\n- LRUCache.popitem raises KeyError on an empty LRUCache, as every LRUCache popitem should.\n",
	}
	for f, text := range files {
		e.write(f, text)
		e.ok("r2r_ingest_document", map[string]any{"file_path": f, "run_async": false})
	}
	for _, tc := range []struct{ query, want string }{
		{"what does LRUCache.popitem raise on an empty LRUCache?", "src/lru.py"},
		{"which test checks that LRUCache.popitem raises on an empty LRUCache?", "tests/test_lru.py"},
		{"which version made LRUCache.popitem raise on an empty LRUCache?", "CHANGES.md"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var so SearchOutput
			structured(t, e.ok("r2r_search", map[string]any{"query": tc.query, "search_mode": "advanced"}), &so)
			if len(so.Results) == 0 || so.Results[0].Title != tc.want {
				titles := make([]string, len(so.Results))
				for i, h := range so.Results {
					titles[i] = h.Title
				}
				t.Errorf("results %v: want %s first", titles, tc.want)
			}
		})
	}
}

// cannedSearch answers r2r_search's two requests with fixed chunk lists: hybrid for R2R's
// hybrid search, keyword for the identifier (full-text only) search.
func cannedSearch(hybrid, keyword *[]r2r.ChunkSearchResult) r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, c *r2r.Call) (*r2r.Response, error) {
			if c.Method != http.MethodPost || c.Path != "/v3/retrieval/search" {
				return next(ctx, c)
			}
			list := *hybrid
			if strings.Contains(string(c.Body), `"use_semantic_search":false`) {
				list = *keyword
			}
			body, err := json.Marshal(map[string]any{"results": r2r.SearchResult{ChunkSearchResults: list}})
			if err != nil {
				return nil, err
			}
			return &r2r.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}, nil
		}
	}
}

// TestIdentifierSearchCountsHalf: a chunk only the identifier search finds, however densely
// it repeats the question's words, does not outrank the chunk R2R's hybrid search ranks first
// and the lexical ordering second; found by the hybrid search too, it does.
func TestIdentifierSearchCountsHalf(t *testing.T) {
	chunk := func(id, text string) r2r.ChunkSearchResult {
		return r2r.ChunkSearchResult{ID: id, DocumentID: id, Text: text, Metadata: map[string]any{"title": id + ".md"}}
	}
	answer := chunk("a", "Run the development Server with the reloader on to restart it when code changes.")
	dense := chunk("b", "Server Server restart Server reloader Server code changes Server restart.")
	var hybrid, keyword []r2r.ChunkSearchResult
	e := newEnv(t, withMiddleware(cannedSearch(&hybrid, &keyword)))
	const question = "how do I restart the Server when code changes?"
	for _, tc := range []struct {
		name            string
		hybrid, keyword []r2r.ChunkSearchResult
		want            []string
	}{
		{"found by the identifier search alone", []r2r.ChunkSearchResult{answer}, []r2r.ChunkSearchResult{dense}, []string{"a", "b"}},
		{"found by both searches", []r2r.ChunkSearchResult{answer, dense}, []r2r.ChunkSearchResult{dense}, []string{"b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hybrid, keyword = tc.hybrid, tc.keyword
			got, _, err := e.deps.retrieve(context.Background(), question, r2r.SearchModeAdvanced, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, len(got))
			for i, c := range got {
				ids[i] = c.ID
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("order %v, want %v", ids, tc.want)
			}
		})
	}
}
