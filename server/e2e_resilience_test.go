package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// End-to-end tests of the cache, retries, circuit breaker, deadlines, cancellation and rate
// limits: the built binary over real stdio against the emulator and its fault knobs.

const (
	searchRoute = "POST /v3/retrieval/search"
	uploadRoute = "POST /v3/documents"

	ledgerText = "# Ledger\n\nThe ledger records every settlement batch as double-entry postings.\n"
	payoutText = "# Payouts\n\nPayouts are computed from each settlement batch after the ledger closes.\n"
)

// num reads a JSON number from structured content.
func num(m map[string]any, key string) float64 {
	f, _ := m[key].(float64)
	return f
}

// mustOK calls a tool and fails the test unless it succeeded.
func mustOK(ctx context.Context, t *testing.T, s session, name string, args map[string]any) toolResult {
	t.Helper()
	r, err := s.call(ctx, name, args)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if r.IsError {
		t.Fatalf("%s: %s", name, r.Text)
	}
	return r
}

// hasDoc reports whether a search result lists a hit from document id.
func hasDoc(r toolResult, id string) bool {
	hits, _ := r.Structured["results"].([]any)
	for _, h := range hits {
		if m, ok := h.(map[string]any); ok && m["document_id"] == id {
			return true
		}
	}
	return false
}

// TestE2ECache: a repeated search within the TTL makes no second R2R request and says it
// was cached; after an ingest into the same collection the same search reaches R2R again
// and finds the new document.
func TestE2ECache(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "ledgerline", map[string]string{"docs/ledger.md": ledgerText, "docs/payouts.md": payoutText})
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 60*time.Second)
	s := connectMCPGo(ctx, t, p, clientOpts{legacy: true})
	defer s.close()

	ledger := mustOK(ctx, t, s, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"}).str("document_id")
	query := map[string]any{"query": "settlement batch"}
	first := mustOK(ctx, t, s, "r2r_search", query)
	if first.Structured["cached"] != false || !hasDoc(first, ledger) || emu.Count(searchRoute) != 1 {
		t.Fatalf("first search (%d requests): %s", emu.Count(searchRoute), first.Text)
	}
	again := mustOK(ctx, t, s, "r2r_search", map[string]any{"query": "settlement batch", "limit": 10, "search_mode": "advanced"})
	if n := emu.Count(searchRoute); n != 1 {
		t.Fatalf("the repeated search reached R2R (%d requests)", n)
	}
	if again.Structured["cached"] != true || !strings.HasPrefix(again.Text, "(cached)") {
		t.Fatalf("repeat not marked cached: %v\n%s", again.Structured["cached"], again.Text)
	}

	payouts := mustOK(ctx, t, s, "r2r_ingest_document", map[string]any{"file_path": "docs/payouts.md"}).str("document_id")
	after := mustOK(ctx, t, s, "r2r_search", query)
	if n := emu.Count(searchRoute); n != 2 {
		t.Fatalf("the search after the ingest did not reach R2R (%d requests)", n)
	}
	if after.Structured["cached"] != false || !hasDoc(after, payouts) || !hasDoc(after, ledger) {
		t.Fatalf("search after the ingest misses the new document:\n%s", after.Text)
	}

	st := mustOK(ctx, t, s, "r2r_status", nil)
	cache, _ := st.Structured["cache"].(map[string]any)
	if cache["enabled"] != true || num(cache, "hits") < 1 || num(cache, "misses") < 2 || num(cache, "max_bytes") != 16<<20 {
		t.Fatalf("status cache = %v", cache)
	}
	if !strings.Contains(st.Text, "Cache: ") {
		t.Fatalf("status text lacks the cache line:\n%s", st.Text)
	}
}

// TestE2EFlakyR2R: with 30% of R2R's answers a 502/503/504, 200 distinct searches almost
// all succeed (retries; the breaker, counting calls, stays closed), and an ingest is never
// retried: one upload per ingest call, also when R2R answers 502.
func TestE2EFlakyR2R(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	files := map[string]string{"docs/ledger.md": ledgerText}
	for i := range 10 {
		files[fmt.Sprintf("notes/n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nSettlement note number %d.\n", i, i)
	}
	proj := servertest.GitProject(t, "flaky", files)
	// No rate limit (200 calls in a row) and short retry waits keep the run quick; retries
	// and the breaker keep their defaults (3 retries, 5 failed calls).
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve", "--rate-limit", "0", "--retry-wait", "2ms")
	ctx := ctxFor(t, 120*time.Second)
	s := connectMCPGo(ctx, t, p, clientOpts{legacy: true})
	defer s.close()
	mustOK(ctx, t, s, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"})

	emu.Configure(func(o *r2rtest.Options) { o.FailRate = 0.3 })
	emu.ResetCounts()
	ok := 0
	for i := range 200 {
		r, err := s.call(ctx, "r2r_search", map[string]any{"query": fmt.Sprintf("settlement batch %d", i)})
		if err != nil {
			t.Fatalf("search %d: protocol error %v", i, err)
		}
		if !r.IsError {
			ok++
		} else if code := num(r.Err, "code"); code != -32001 {
			t.Fatalf("search %d failed with code %v (want only R2R errors, no open breaker): %s", i, code, r.Text)
		}
	}
	sent := emu.Count(searchRoute)
	t.Logf("%d/200 searches succeeded with 30%% of R2R answers failing; %d requests reached R2R", ok, sent)
	if ok < 198 {
		t.Fatalf("only %d/200 searches succeeded", ok)
	}
	if sent <= 200 {
		t.Fatalf("%d requests for 200 searches: no retries happened", sent)
	}
	st := mustOK(ctx, t, s, "r2r_status", nil)
	if bs, _ := st.Structured["breaker_state"].(map[string]any); bs["state"] != "closed" {
		t.Fatalf("breaker after the flaky run: %v", bs)
	}

	// Ingests: R2R healthy again, but the upload answers 502 now and then.
	emu.Configure(func(o *r2rtest.Options) { o.FailRate = 0 })
	emu.ResetCounts()
	failed := 0
	for i := range 10 {
		if i%3 == 0 {
			emu.ForceStatus(uploadRoute, 502, 1)
		}
		r, err := s.call(ctx, "r2r_ingest_document", map[string]any{"file_path": fmt.Sprintf("notes/n%02d.md", i)})
		if err != nil {
			t.Fatalf("ingest %d: %v", i, err)
		}
		if r.IsError {
			failed++
			if num(r.Err, "status") != 502 {
				t.Fatalf("ingest %d: %s", i, r.Text)
			}
		}
		if n := emu.Count(uploadRoute); n != i+1 {
			t.Fatalf("after %d ingest calls, %d uploads reached R2R: an ingest was retried", i+1, n)
		}
	}
	if failed != 4 {
		t.Fatalf("%d ingests failed, want the 4 forced 502s", failed)
	}
}

// TestE2EBreaker: R2R stops; after 5 failing calls the breaker opens; the next 100 calls
// fail at once with -32003 and retry_after and none reaches R2R (only the breaker's own
// health probes do, at most one a second); once R2R is back, a probe or the cooldown ends
// the breaker and calls succeed. r2r_status shows every step.
func TestE2EBreaker(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "breaker", map[string]string{"docs/ledger.md": ledgerText})
	const cooldown = time.Second
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve", "--rate-limit", "0", "--retry-max", "1", "--retry-wait", "5ms",
		"--breaker-cooldown", cooldown.String())
	ctx := ctxFor(t, 60*time.Second)
	s := connectMCPGo(ctx, t, p, clientOpts{legacy: true})
	defer s.close()
	mustOK(ctx, t, s, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"})

	breaker := func() map[string]any {
		t.Helper()
		st := mustOK(ctx, t, s, "r2r_status", nil)
		bs, _ := st.Structured["breaker_state"].(map[string]any)
		if bs == nil || !strings.Contains(st.Text, "Circuit breaker: ") {
			t.Fatalf("status without the breaker: %s", st.Text)
		}
		return bs
	}
	search := func(i int) toolResult {
		t.Helper()
		r, err := s.call(ctx, "r2r_search", map[string]any{"query": fmt.Sprintf("settlement %d", i)})
		if err != nil {
			t.Fatalf("search %d: protocol error %v", i, err)
		}
		return r
	}

	emu.Down(true)
	for i := 1; i <= 5; i++ {
		r := search(i)
		if !r.IsError || num(r.Err, "code") != -32001 {
			t.Fatalf("call %d with R2R down: %v %s", i, r.Err, r.Text)
		}
		if i == 4 {
			if bs := breaker(); bs["state"] != "closed" || num(bs, "consecutive_failures") != 4 {
				t.Fatalf("after 4 failed calls: %v", bs)
			}
		}
	}
	bs := breaker()
	if bs["state"] != "open" || num(bs, "consecutive_failures") != 5 || num(bs, "retry_after") < 1 {
		t.Fatalf("after 5 failed calls: %v", bs)
	}

	emu.ResetCounts()
	opened := time.Now()
	n := 0
	// Up to 100 calls, all well inside the cooldown (a busy machine makes fewer).
	for i := 0; i < 100 && time.Since(opened) < cooldown/2; i++ {
		n++
		r := search(100 + i)
		if !r.IsError || num(r.Err, "code") != -32003 || r.Err["type"] != "breaker_open" ||
			num(r.Err, "retry_after") < 1 || r.Err["retryable"] != true {
			t.Fatalf("call %d with the breaker open: %v", i, r.Err)
		}
		if i == 0 && !strings.Contains(r.Text, "failed 5 times in a row") {
			t.Fatalf("open-breaker text: %s", r.Text)
		}
	}
	took := time.Since(opened)
	t.Logf("%d rejected calls took %v", n, took.Round(time.Millisecond))
	for req, k := range emu.Counts() {
		if req != "GET /v3/health" || k > int(took/time.Second)+1 {
			t.Fatalf("the open breaker let requests reach R2R: %v", emu.Counts())
		}
	}
	emu.Down(false)

	// After the cooldown the breaker probes R2R (half-open); two good calls close it.
	var r toolResult
	for i := 0; ; i++ {
		if r = search(1000 + i); !r.IsError {
			break
		}
		if num(r.Err, "code") != -32003 || i == 100 {
			t.Fatalf("after the cooldown: %v", r.Err)
		}
		time.Sleep(time.Duration(num(r.Err, "retry_after")*float64(time.Second)) / 4)
	}
	mustOK(ctx, t, s, "r2r_search", map[string]any{"query": "settlement again"})
	bs = breaker()
	var path []string
	for _, tr := range bs["transitions"].([]any) {
		m := tr.(map[string]any)
		path = append(path, fmt.Sprint(m["from"], ">", m["to"]))
	}
	if p := strings.Join(path, " "); bs["state"] != "closed" || !strings.HasPrefix(p, "closed>open ") || !strings.HasSuffix(p, ">closed") {
		t.Fatalf("breaker after recovery: %v (transitions %v)", bs, path)
	}
	if !strings.Contains(p.Stderr.String(), "r2r circuit breaker opened") || !strings.Contains(p.Stderr.String(), "r2r circuit breaker closed") {
		t.Fatalf("state changes not logged:\n%s", p.Stderr.String())
	}
}

// TestE2ECancel: a client's notifications/cancelled during a slow search aborts the HTTP
// request to R2R (the emulator sees the client leave), no response comes for the
// cancelled id, and the server keeps serving.
func TestE2ECancel(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "cancel", map[string]string{"docs/ledger.md": ledgerText})
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	c := servertest.NewRawConn(p)
	const limit = 20 * time.Second
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := c.Next(limit); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_ingest_document","arguments":{"file_path":"docs/ledger.md"}}}`)
	if m := c.Next(limit); m["id"] != 2.0 || m["result"].(map[string]any)["isError"] == true {
		t.Fatalf("ingest: %v", m)
	}

	emu.Configure(func(o *r2rtest.Options) { o.Latency = 5 * time.Minute })
	c.Send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"settlement batch"}}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Count(searchRoute) == 1 }, "the search to reach R2R")
	c.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user moved on"}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Cancelled() == 1 }, "R2R to see the search abandoned")

	emu.Configure(func(o *r2rtest.Options) { o.Latency = 0 })
	c.Send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"double-entry postings"}}}`)
	c.Send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	for got := 0; got < 2; {
		m := c.Next(limit)
		switch m["id"] {
		case 7.0:
			t.Fatalf("the cancelled call got a response: %v", m)
		case 8.0:
			res, _ := m["result"].(map[string]any)
			if res == nil || res["isError"] == true {
				t.Fatalf("the search after the cancellation: %v", m)
			}
			got++
		case 9.0:
			got++
		}
	}
	if n := emu.Count(searchRoute); n != 2 {
		t.Fatalf("%d searches reached R2R, want 2 (the cancelled one was not retried)", n)
	}
}

// TestE2EDeadline: against an R2R that accepts connections and never answers, a search
// ends with a timeout result before its deadline (--timeout-search 1s) + 1 s.
func TestE2EDeadline(t *testing.T) {
	t.Parallel()
	url := r2rtest.NewHangingServer(t)
	p := servertest.Start(t, servertest.GitProject(t, "hang", nil), servertest.Env(t, url), "serve", "--timeout-search", "1s")
	ctx := ctxFor(t, 60*time.Second)
	s := connectMCPGo(ctx, t, p, clientOpts{legacy: true})
	defer s.close()
	for _, args := range []map[string]any{
		{"query": "settlement"}, // the project's collection is looked up first: that hangs
		{"query": "settlement", "collection_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"},
	} {
		begin := time.Now()
		r, err := s.call(ctx, "r2r_search", args)
		took := time.Since(begin)
		if err != nil {
			t.Fatalf("protocol error: %v", err)
		}
		t.Logf("answered after %v: %s", took.Round(time.Millisecond), r.Text)
		if !r.IsError || r.Err["type"] != "timeout" || !strings.Contains(r.Text, "did not answer r2r_search within 1 s") ||
			!strings.Contains(r.Text, "--timeout-search") {
			t.Fatalf("result: %v", r.Err)
		}
		if took > 2*time.Second { // deadline + 1 s: a functional bound, not a benchmark
			t.Fatalf("answered after %v, want before the 1 s deadline + 1 s", took)
		}
	}
	if _, err := s.listTools(ctx); err != nil {
		t.Fatalf("not serving after the timeouts: %v", err)
	}
}

// TestE2ERateLimit: 64 concurrent callers against a tool limited to 5 calls/s with bursts
// of 10: the calls over the limit fail at once with -32004 and a retry_after; the rest
// succeed; after retry_after a call succeeds again. With -race the binary is a race build.
func TestE2ERateLimit(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	p := servertest.Start(t, servertest.GitProject(t, "burst", nil), servertest.Env(t, emu.URL), "serve", "--rate-limit", "5", "--rate-burst", "10")
	ctx := ctxFor(t, 60*time.Second)
	s := connectSDK(ctx, t, p, clientOpts{legacy: true})
	defer s.close()

	var ok, limited atomic.Int32
	var maxWait atomic.Int64 // retry_after in ms
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			// Distinct pages: the limit counts calls that reach R2R, not cache hits.
			r, err := s.call(ctx, "r2r_list_collections", map[string]any{"offset": i})
			if err != nil {
				t.Errorf("call %d: protocol error %v", i, err)
				return
			}
			switch {
			case !r.IsError:
				ok.Add(1)
			case num(r.Err, "code") == -32004 && r.Err["type"] == "rate_limited" && num(r.Err, "retry_after") > 0:
				limited.Add(1)
				ms := int64(num(r.Err, "retry_after") * 1000)
				for cur := maxWait.Load(); ms > cur && !maxWait.CompareAndSwap(cur, ms); cur = maxWait.Load() {
				}
			default:
				t.Errorf("call %d: %v", i, r.Err)
			}
		})
	}
	wg.Wait()
	t.Logf("64 concurrent calls: %d served, %d refused by the rate limit", ok.Load(), limited.Load())
	if ok.Load() < 10 || limited.Load() == 0 || ok.Load()+limited.Load() != 64 {
		t.Fatalf("%d served, %d refused", ok.Load(), limited.Load())
	}
	time.Sleep(time.Duration(maxWait.Load()) * time.Millisecond)
	mustOK(ctx, t, s, "r2r_list_collections", map[string]any{})
}
