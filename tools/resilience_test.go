package tools

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

const searchRoute = "POST /v3/retrieval/search"

// withCache gives the env a real result cache.
func withCache(t *testing.T) envOption {
	return withDeps(func(d *Deps) {
		c, err := cache.New(cache.Config{MaxBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		d.Cache = c
	})
}

// decode reads a result's structured content.
func decode[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	structured(t, res, &v)
	return v
}

// TestCacheServesRepeatsUntilAWrite: a repeated read within its TTL makes no second R2R
// request and says it was cached; equivalent arguments (defaults spelled out) share the
// entry; an ingest into the collection invalidates what depends on it, and the next
// search sees the new document.
func TestCacheServesRepeatsUntilAWrite(t *testing.T) {
	e := newEnv(t, withCache(t))
	e.write("docs/ledger.md", ledgerDoc)
	e.write("runbooks/failover.txt", runbookDoc)
	ing := decode[IngestOutput](t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"}))

	type read struct {
		tool  string
		args  map[string]any
		same  map[string]any // the same request with defaults spelled out
		route string
	}
	reads := []read{
		{"r2r_search", map[string]any{"query": "failover replica promote"},
			map[string]any{"query": "failover replica promote", "limit": 10, "search_mode": "advanced"}, searchRoute},
		{"r2r_rag_query", map[string]any{"question": "How are payouts computed?"},
			map[string]any{"question": "How are payouts computed?", "max_tokens": 500, "temperature": 0.7, "include_sources": true}, "POST /v3/retrieval/rag"},
		{"r2r_list_documents", map[string]any{}, map[string]any{"offset": 0, "limit": 50, "status_filter": "all"}, "GET /v3/collections/{id}/documents"},
		{"r2r_list_collections", map[string]any{}, map[string]any{"offset": 0, "limit": 20}, "GET /v3/collections"},
		{"r2r_get_document", map[string]any{"document_id": ing.DocumentID},
			map[string]any{"document_id": ing.DocumentID, "offset": 0, "max_chars": 8000}, "GET /v3/documents/{id}/chunks"},
	}
	for _, r := range reads {
		first := e.ok(r.tool, r.args)
		sent := e.r2r.Count(r.route)
		if sent == 0 || decode[map[string]any](t, first)["cached"] != false || strings.HasPrefix(text(first), cachedMarker) {
			t.Fatalf("%s: first call: %d requests, %s", r.tool, sent, text(first))
		}
		for _, args := range []map[string]any{r.args, r.same} {
			again := e.ok(r.tool, args)
			if n := e.r2r.Count(r.route); n != sent {
				t.Fatalf("%s%v: a repeat reached R2R (%d requests, want %d)", r.tool, args, n, sent)
			}
			sc := decode[map[string]any](t, again)
			if sc["cached"] != true || !strings.HasPrefix(text(again), cachedMarker) {
				t.Fatalf("%s: repeat not marked cached: %v / %q", r.tool, sc["cached"], text(again))
			}
			delete(sc, "cached")
			fresh := decode[map[string]any](t, first)
			delete(fresh, "cached")
			if fmt.Sprint(sc) != fmt.Sprint(fresh) {
				t.Fatalf("%s: cached result differs:\n%v\n%v", r.tool, sc, fresh)
			}
		}
	}
	// The live status is never cached.
	e.ok("r2r_monitor_task", map[string]any{"document_id": ing.DocumentID})
	e.ok("r2r_monitor_task", map[string]any{"document_id": ing.DocumentID})
	if n := e.r2r.Count("GET /v3/documents/{id}"); n < 3 { // ingest, get_document, 2 × monitor
		t.Fatalf("monitor_task was served without asking R2R (%d document reads)", n)
	}

	// A write: the runbook is new, so the same search now finds it.
	before := decode[SearchOutput](t, e.ok("r2r_search", reads[0].args))
	for _, h := range before.Results {
		if h.Title == "runbooks/failover.txt" {
			t.Fatalf("the runbook is found before it was ingested: %+v", h)
		}
	}
	e.ok("r2r_ingest_document", map[string]any{"file_path": "runbooks/failover.txt"})
	for _, r := range reads[:4] {
		sent := e.r2r.Count(r.route)
		res := e.ok(r.tool, r.args)
		if e.r2r.Count(r.route) != sent+1 || decode[map[string]any](t, res)["cached"] != false {
			t.Fatalf("%s after an ingest was served from the cache", r.tool)
		}
	}
	after := decode[SearchOutput](t, e.ok("r2r_search", reads[0].args))
	if !after.Cached || after.Count == 0 || after.Results[0].Title != "runbooks/failover.txt" {
		t.Fatalf("search after the ingest = %+v", after)
	}
	colls := decode[ListCollectionsOutput](t, e.ok("r2r_list_collections", nil))
	if colls.Collections[0].DocumentCount != 2 || !colls.Collections[0].CurrentProject {
		t.Fatalf("collection list after the ingest = %+v", colls)
	}

	st := decode[StatusOutput](t, e.ok("r2r_status", nil))
	if st.Cache == nil || !st.Cache.Enabled || st.Cache.Hits < 10 || st.Cache.Misses == 0 || st.Cache.Entries == 0 {
		t.Fatalf("status cache = %+v", st.Cache)
	}
}

// TestErrorsAreNotCached: a failed read is answered as an error once; the next call asks
// R2R again.
func TestErrorsAreNotCached(t *testing.T) {
	e := newEnv(t, withCache(t))
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	args := map[string]any{"query": "ledger"}
	e.r2r.ForceStatus(searchRoute, http.StatusInternalServerError, 1)
	if _, info := e.fail("r2r_search", args); info.Status != 500 {
		t.Fatalf("%+v", info)
	}
	if res := decode[SearchOutput](t, e.ok("r2r_search", args)); res.Cached || res.Count == 0 {
		t.Fatalf("after the error: %+v", res)
	}
	if res := decode[SearchOutput](t, e.ok("r2r_search", args)); !res.Cached {
		t.Fatal("the good result was not cached")
	}
	if n := e.r2r.Count(searchRoute); n != 2 {
		t.Fatalf("%d searches reached R2R, want 2", n)
	}
}

// TestCacheBypassedWhileIngesting: while R2R processes a document this server uploaded,
// reads of its collection go to R2R every time (a result from before the document is
// searchable must not be kept, nor a listing showing it in progress); once
// r2r_monitor_task sees it finished, caching resumes and the document is found.
func TestCacheBypassedWhileIngesting(t *testing.T) {
	e := newEnv(t, withCache(t), withEmulator(r2rtest.Options{IngestDelay: time.Hour}))
	e.write("a.md", ledgerDoc)
	e.write("b.md", runbookDoc)
	ing := decode[IngestOutput](t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}))
	if ing.Status != "pending" {
		t.Fatalf("ingest = %+v", ing)
	}
	args := map[string]any{"query": "ledger double-entry"}
	for range 3 {
		if res := decode[SearchOutput](t, e.ok("r2r_search", args)); res.Cached || res.Count != 0 {
			t.Fatalf("search during ingestion = %+v", res)
		}
	}
	if n := e.r2r.Count(searchRoute); n != 3 {
		t.Fatalf("%d searches reached R2R, want 3", n)
	}
	for range 2 {
		if docs := decode[ListDocumentsOutput](t, e.ok("r2r_list_documents", nil)); docs.Cached {
			t.Fatalf("listing during ingestion = %+v", docs)
		}
	}

	// A second collection whose document R2R finishes quickly.
	e.r2r.Configure(func(o *r2rtest.Options) { o.IngestDelay = time.Millisecond })
	coll, err := e.client.CreateCollection(context.Background(), "runbooks", "")
	if err != nil {
		t.Fatal(err)
	}
	ingB := decode[IngestOutput](t, e.ok("r2r_ingest_document", map[string]any{"file_path": "b.md", "collection_id": coll.ID}))
	argsB := map[string]any{"query": "failover replica", "collection_id": coll.ID}
	sent := e.r2r.Count(searchRoute)
	for range 2 {
		if res := decode[SearchOutput](t, e.ok("r2r_search", argsB)); res.Cached {
			t.Fatalf("search before the ingestion was seen finished = %+v", res)
		}
	}
	if n := e.r2r.Count(searchRoute); n != sent+2 {
		t.Fatalf("%d searches reached R2R, want %d", n, sent+2)
	}
	select {
	case <-e.r2r.IngestionEnded(ingB.DocumentID):
	case <-time.After(10 * time.Second):
		t.Fatal("R2R did not finish the second collection's document")
	}
	if m := decode[MonitorOutput](t, e.ok("r2r_monitor_task", map[string]any{"document_id": ingB.DocumentID})); !m.Done {
		t.Fatalf("ingestion ended in R2R, monitor says %+v", m)
	}
	if res := decode[SearchOutput](t, e.ok("r2r_search", argsB)); res.Cached || res.Count == 0 || res.Results[0].DocumentID != ingB.DocumentID {
		t.Fatalf("search after ingestion = %+v", res)
	}
	if res := decode[SearchOutput](t, e.ok("r2r_search", argsB)); !res.Cached || res.Count == 0 {
		t.Fatalf("repeat after ingestion = %+v", res)
	}
	// The first collection is still busy.
	if res := decode[SearchOutput](t, e.ok("r2r_search", args)); res.Cached {
		t.Fatalf("search of the busy collection = %+v", res)
	}
}

// fakeClock is a settable clock for rate-limit tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestRateLimits: each tool has its own token bucket; a call over the limit is refused at
// once with -32004 and the time until a token is back, takes no token, and never reaches
// R2R.
func TestRateLimits(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := newEnv(t, withDeps(func(d *Deps) {
		d.Now = clock.now
		d.RateLimit, d.RateBurst, d.RAGRateLimit, d.RAGRateBurst = 1, 2, 0.5, 1
	}))
	const list = "r2r_list_collections"
	e.ok(list, nil)
	e.ok(list, nil)
	tests := []struct {
		name      string
		tool      string
		advance   time.Duration
		wantAfter float64 // 0 = admitted
	}{
		{"burst used up", list, 0, 1},
		{"half a token back: the refusal took none", list, 500 * time.Millisecond, 0.5},
		{"a token back", list, 500 * time.Millisecond, 0},
		{"steady rate", list, time.Second, 0},
		{"another tool has its own bucket", "r2r_rag_query", 0, 0},
		{"its own, slower rate", "r2r_rag_query", time.Second, 1},
	}
	for _, tc := range tests {
		clock.add(tc.advance)
		var args map[string]any
		if tc.tool == "r2r_rag_query" { // an explicit collection: the call reaches R2R
			args = map[string]any{"question": "How are payouts computed?", "collection_id": "00000000-0000-4000-8000-000000000001"}
		}
		e.r2r.ResetCounts()
		res := e.call(tc.tool, args)
		info, isErr := toolerr.Of(res)
		if tc.wantAfter == 0 {
			if isErr && info.Code == toolerr.CodeRateLimited {
				t.Fatalf("%s: refused: %s", tc.name, info.Message)
			}
			continue
		}
		if !isErr || info.Code != toolerr.CodeRateLimited || info.Type != "rate_limited" || !info.Retryable ||
			info.RetryAfter == nil || *info.RetryAfter != tc.wantAfter || !strings.Contains(info.Message, tc.tool) {
			t.Fatalf("%s: %+v", tc.name, info)
		}
		if n := len(e.r2r.Counts()); n != 0 {
			t.Fatalf("%s: a refused call reached R2R: %v", tc.name, e.r2r.Counts())
		}
	}
	st := decode[StatusOutput](t, e.ok("r2r_status", nil))
	if st.RateLimits[list]["rejected"] != 2.0 || st.RateLimits["r2r_rag_query"]["rejected"] != 1.0 {
		t.Fatalf("status rate limits = %v", st.RateLimits)
	}
}

func TestDefaultRateLimits(t *testing.T) {
	r := defaultConfig().rateLimits()
	if r.For("") != (RateLimit{10, 20}) || r.For(RateLLM) != (RateLimit{2, 5}) {
		t.Fatalf("%+v", r)
	}
	if (RateLimits{}).For("").Rate != 0 || testConfig().rateLimits().For(RateLLM).Rate != 0 {
		t.Fatal("the zero RateLimits and a rate of 0 must limit nothing")
	}
}

// TestToolDeadlines: each tool's deadline (Tool.Deadline, or the call timeout without one)
// and the flag that sets it, by default and as configured.
func TestToolDeadlines(t *testing.T) {
	client, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	projects := project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-"})
	def := defaultConfig()
	d := &Deps{Config: def, Client: client, Projects: projects}
	set := &Deps{Client: client, Projects: projects, Config: Config{CallTimeout: time.Second, SearchTimeout: 2 * time.Second,
		RAGTimeout: 3 * time.Second, IngestSyncTimeout: 4 * time.Second}}
	deadlines := func(d *Deps) map[string]func(mcp.CallToolRequest) (time.Duration, string) {
		m := map[string]func(mcp.CallToolRequest) (time.Duration, string){}
		for _, tl := range Registry(d) {
			m[tl.Def.Name] = tl.Deadline
			if tl.Deadline == nil {
				m[tl.Def.Name] = d.callDeadline
			}
		}
		return m
	}
	byDefault, configured := deadlines(d), deadlines(set)
	tests := []struct {
		tool     string
		args     map[string]any
		def, set time.Duration
		flag     string
	}{
		{"r2r_search", nil, 20 * time.Second, 2 * time.Second, "--timeout-search"},
		{"r2r_rag_query", nil, 45 * time.Second, 3 * time.Second, "--timeout-rag"},
		{"r2r_ingest_document", map[string]any{"run_async": false}, 45 * time.Second, 4 * time.Second, ""},
		{"r2r_ingest_document", map[string]any{"run_async": true}, 15 * time.Second, time.Second, "--timeout"},
		{"r2r_ingest_document", nil, 15 * time.Second, time.Second, "--timeout"},
		{"r2r_list_documents", nil, 15 * time.Second, time.Second, "--timeout"},
		{"r2r_status", nil, 15 * time.Second, time.Second, "--timeout"},
	}
	for _, tc := range tests {
		req := mcp.CallToolRequest{}
		req.Params.Arguments = tc.args
		if got, flag := byDefault[tc.tool](req); got != tc.def || flag != tc.flag {
			t.Errorf("%s %v: default %v %q, want %v %q", tc.tool, tc.args, got, flag, tc.def, tc.flag)
		}
		if got, _ := configured[tc.tool](req); got != tc.set {
			t.Errorf("%s %v: configured %v, want %v", tc.tool, tc.args, got, tc.set)
		}
	}
	for _, v := range []time.Duration{def.CallTimeout, def.SearchTimeout, def.RAGTimeout, def.IngestSyncTimeout} {
		if v >= 50*time.Second {
			t.Errorf("default deadline %v: every tool must answer within 50 s", v)
		}
	}
	if def.IngestWait >= def.IngestSyncTimeout {
		t.Error("the ingest wait must fit inside the waiting ingest's deadline")
	}
}

// TestDeadlineAndCancellation: against an R2R that never answers, a call ends at its
// deadline with a timeout result that names the tool, the limit and the flag; a call the
// client cancels ends at once as cancelled, not as a timeout.
func TestDeadlineAndCancellation(t *testing.T) {
	url := r2rtest.NewHangingServer(t)
	e := newEnv(t, withDeps(func(d *Deps) { d.SearchTimeout = 150 * time.Millisecond }))
	sent := make(chan struct{}, 1) // a request went to R2R
	c, err := r2r.New(r2r.Options{BaseURL: url, HTTPClient: &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		select {
		case sent <- struct{}{}:
		default:
		}
		return http.DefaultTransport.RoundTrip(req)
	})}})
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Client = c
	collID := "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"
	args := map[string]any{"query": "ledger", "collection_id": collID}

	start := time.Now()
	_, info := e.fail("r2r_search", args)
	took := time.Since(start)
	if info.Type != "timeout" || !info.Retryable || info.Code != toolerr.CodeR2RAPI ||
		!strings.Contains(info.Message, "did not answer r2r_search within 150 ms") || !strings.Contains(info.Message, "--timeout-search") {
		t.Fatalf("%+v", info)
	}
	if took > 150*time.Millisecond+time.Second { // functional bound: it must not hang
		t.Fatalf("answered after %v", took)
	}

	select {
	case <-sent: // the timed-out call's
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sent // the call waits on R2R: the client cancels it now
		cancel()
	}()
	res, err := e.invoke(ctx, "r2r_search", args)
	if err != nil {
		t.Fatal(err)
	}
	if info := errInfo(res); info.Type != "cancelled" {
		t.Fatalf("cancelled call answered %+v", info)
	}
}

// TestConcurrentCallers hammers every read tool from 64 goroutines through a real mcp-go
// server with the cache, the rate limits and the resilient client (breaker + retries)
// against a flaky R2R; run with -race. Every answer is a success or a clean isError.
func TestConcurrentCallers(t *testing.T) {
	srv := "http://r2r.concurrency.test"
	b := r2r.NewBreaker(srv, r2r.BreakerSettings{}, nil)
	e := newEnv(t, withCache(t),
		withMiddleware(r2r.Resilient(r2r.ResilienceOptions{Breaker: b, Retry: r2r.RetryPolicy{MaxRetries: 3, InitialInterval: time.Millisecond}})...),
		withDeps(func(d *Deps) {
			// Tight enough that 36 calls per tool exceed it however slowly they run.
			d.RateLimit, d.RateBurst, d.RAGRateLimit, d.RAGRateBurst = 2, 5, 2, 5
			d.BreakerState = b.State
		}))
	e.write("a.md", ledgerDoc)
	ing := decode[IngestOutput](t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}))
	e.r2r.Configure(func(o *r2rtest.Options) { o.FailRate = 0.2 })
	c := e.mcpClient()
	calls := []struct {
		tool string
		args func(i int) map[string]any
	}{
		{"r2r_search", func(i int) map[string]any { return map[string]any{"query": fmt.Sprintf("ledger %d", i%8)} }},
		{"r2r_rag_query", func(i int) map[string]any { return map[string]any{"question": "How are payouts computed?"} }},
		{"r2r_list_documents", func(int) map[string]any { return map[string]any{} }},
		{"r2r_list_collections", func(int) map[string]any { return map[string]any{} }},
		{"r2r_get_document", func(int) map[string]any { return map[string]any{"document_id": ing.DocumentID} }},
		{"r2r_monitor_task", func(int) map[string]any { return map[string]any{"document_id": ing.DocumentID} }},
		{"r2r_status", func(int) map[string]any { return map[string]any{} }},
	}
	var ok, limited, failed atomic.Int32
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := range 4 {
				call := calls[(g+i)%len(calls)]
				req := mcp.CallToolRequest{}
				req.Params.Name = call.tool
				req.Params.Arguments = call.args(g + i)
				res, err := c.CallTool(context.Background(), req)
				if err != nil {
					t.Errorf("%s: protocol error %v", call.tool, err)
					return
				}
				switch {
				case !res.IsError:
					ok.Add(1)
				case strings.Contains(text(res), "r2r-mcp allows"):
					limited.Add(1)
				default:
					failed.Add(1)
					if text(res) == "" {
						t.Errorf("%s: error without text", call.tool)
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("256 calls: %d ok, %d rate limited, %d failed (flaky R2R)", ok.Load(), limited.Load(), failed.Load())
	if ok.Load() == 0 || limited.Load() == 0 {
		t.Fatalf("want both successes and rate-limit refusals")
	}
}

// failingCreds cannot be applied (a login behind them fails).
type failingCreds struct{}

func (failingCreds) Apply(context.Context, http.Header) error {
	return fmt.Errorf("log in to R2R as dev@example.com: R2R login: 401 Incorrect email or password")
}
func (failingCreds) Identity() string { return "user:test" }

func TestCredentialFailureIsAnAuthError(t *testing.T) {
	e := newEnv(t)
	c, err := r2r.New(r2r.Options{BaseURL: e.r2r.URL, Credentials: failingCreds{}})
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Client = c
	_, info := e.fail("r2r_list_collections", nil)
	if info.Code != toolerr.CodeAuth || info.Type != "authentication" || !strings.Contains(info.Message, "Incorrect email or password") ||
		!strings.Contains(info.Message, "r2r-mcp login") {
		t.Fatalf("%+v", info)
	}
	if n := len(e.r2r.Counts()); n != 0 {
		t.Fatalf("requests reached R2R: %v", e.r2r.Counts())
	}
}

// TestRateLimitSparesCacheHits: the rate limit counts only calls that reach R2R; repeats
// served from the cache are never refused, and the next miss is.
func TestRateLimitSparesCacheHits(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	e := newEnv(t, withCache(t), withDeps(func(d *Deps) {
		d.Now = clock.now
		d.RateLimit, d.RateBurst, d.RAGRateLimit, d.RAGRateBurst = 1, 1, 1, 1
	}))
	e.write("docs/ledger.md", "# Ledger\n\nThe payout ledger is double-entry.")
	e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md", "run_async": false})
	clock.add(time.Second)
	args := map[string]any{"query": "payout ledger"}
	e.ok("r2r_search", args)
	for i := range 20 {
		if o := decode[SearchOutput](t, e.ok("r2r_search", args)); !o.Cached {
			t.Fatalf("repeat %d not served from the cache", i)
		}
	}
	e.r2r.ResetCounts()
	_, info := e.fail("r2r_search", map[string]any{"query": "another query"})
	if info.Code != toolerr.CodeRateLimited || len(e.r2r.Counts()) != 0 {
		t.Fatalf("a miss over the limit: %+v, R2R saw %v", info, e.r2r.Counts())
	}
	clock.add(time.Second)
	e.ok("r2r_search", map[string]any{"query": "another query"})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
