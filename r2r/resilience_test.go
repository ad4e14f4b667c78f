package r2r

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// fastRetry keeps real backoff waits in the millisecond range.
var fastRetry = RetryPolicy{MaxRetries: 3, InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond}

const searchRoute = "POST /v3/retrieval/search"

// resilientClient returns a client for url with breaker b → Retry(p) → extra → transport.
func resilientClient(t testing.TB, url string, p RetryPolicy, b *Breaker, extra ...Middleware) *Client {
	t.Helper()
	mw := append(Resilient(ResilienceOptions{Retry: p, Breaker: b}), extra...)
	c, err := New(Options{BaseURL: url, Middleware: mw})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// attempts counts the attempts that reach the transport.
func attempts(n *atomic.Int32) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, call *Call) (*Response, error) {
			n.Add(1)
			return next(ctx, call)
		}
	}
}

func wantState(t *testing.T, b *Breaker, state string, failures uint32) BreakerState {
	t.Helper()
	st := b.State()
	if st.State != state || st.ConsecutiveFailures != failures {
		t.Fatalf("breaker %s with %d failures, want %s with %d (%s)", st.State, st.ConsecutiveFailures, state, failures, st)
	}
	return st
}

func wantCircuitOpen(t *testing.T, err error) *Error {
	t.Helper()
	e, ok := errors.AsType[*Error](err)
	if !ok || !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	if e.RetryAfter <= 0 || e.Retryable() || e.StatusCode != 0 || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("open error %+v: want RetryAfter > 0, not retryable, status 0, ErrUnavailable", e)
	}
	return e
}

// waitHalfOpen polls until the cooldown has passed (bounded).
func waitHalfOpen(t *testing.T, b *Breaker) {
	t.Helper()
	for range 1000 {
		if b.State().State == "half-open" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("breaker still %s", b.State())
}

func TestRetrySurvivesFlakyR2R(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{FailRate: 0.3})
	// The whole Resilient chain with the default breaker (5 failed calls open it). With 3
	// retries a search fails with p = 0.3^4 ≈ 0.8%, and 5 failed searches in a row
	// (p ≈ 0.8%^5) do not happen, so the breaker stays closed. Were it counting attempts,
	// a run of 5 failed attempts (p ≈ 0.3^5 per attempt, over ~270 attempts) would open it
	// now and then and fail every search for a minute. The emulator draws its failures
	// from a fixed-seed generator, one draw per request, so this sequential run is
	// reproducible (199/200 with 266 requests today).
	b := NewBreaker(srv.URL, BreakerSettings{}, nil)
	c := resilientClient(t, srv.URL, fastRetry, b)
	ok := 0
	for i := range 200 {
		_, err := c.Search(t.Context(), SearchRequest{Query: fmt.Sprintf("ledger reconciliation %d", i)})
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrUnavailable):
			t.Fatalf("search %d: unexpected error %v", i, err)
		}
	}
	sent := srv.Count(searchRoute)
	t.Logf("%d/200 searches succeeded with %d requests", ok, sent)
	if ok < 198 {
		t.Fatalf("only %d/200 searches succeeded", ok)
	}
	if sent <= 200 || sent > 800 {
		t.Fatalf("%d requests for 200 searches: want retries, at most 3 per search", sent)
	}
	if st := b.State(); st.State != "closed" || len(st.Transitions) != 0 {
		t.Fatalf("breaker %s with transitions %v: a flaky R2R must not open it", st, st.Transitions)
	}
}

func TestRetryOnlyIdempotentCalls(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	b := NewBreaker(srv.URL, BreakerSettings{Failures: 100}, nil)
	c := resilientClient(t, srv.URL, fastRetry, b)
	ctx := t.Context()
	doc, err := c.CreateDocument(ctx, DocumentCreate{RawText: "settlement batches close at 18:00 UTC"})
	if err != nil {
		t.Fatal(err)
	}
	id := doc.DocumentID
	tests := []struct {
		name   string
		route  string
		status int
		call   func() error
		sent   int // requests that reach the emulator
		ok     bool
	}{
		{"create document", "POST /v3/documents", 502, func() error {
			_, err := c.CreateDocument(ctx, DocumentCreate{RawText: "chargebacks are reviewed daily"})
			return err
		}, 1, false},
		{"patch metadata", "PATCH /v3/documents/{id}/metadata", 503, func() error {
			_, err := c.PatchDocumentMetadata(ctx, id, []map[string]any{{"team": "payments"}})
			return err
		}, 1, false},
		{"delete document", "DELETE /v3/documents/{id}", 504, func() error { return c.DeleteDocument(ctx, id) }, 1, false},
		{"create collection", "POST /v3/collections", 503, func() error {
			_, err := c.CreateCollection(ctx, "payments", "")
			return err
		}, 1, false},
		{"get document", "GET /v3/documents/{id}", 502, func() error {
			_, err := c.GetDocument(ctx, id)
			return err
		}, 3, true},
		{"search", searchRoute, 503, func() error {
			_, err := c.Search(ctx, SearchRequest{Query: "settlement"})
			return err
		}, 3, true},
		{"rag", "POST /v3/retrieval/rag", 504, func() error {
			_, err := c.RAG(ctx, RAGRequest{Query: "when do settlement batches close?"})
			return err
		}, 3, true},
		{"list documents", "GET /v3/documents", 429, func() error {
			_, err := c.ListDocuments(ctx, ListParams{})
			return err
		}, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv.ResetCounts()
			// One forced failure: a retry would succeed, so a single request proves there was
			// none. Two for idempotent calls: both are retried away.
			forced := 1
			if tc.ok {
				forced = 2
			}
			srv.ForceStatus(tc.route, tc.status, forced)
			err := tc.call()
			if got := srv.Count(tc.route); got != tc.sent {
				t.Fatalf("%d requests reached %s, want %d", got, tc.route, tc.sent)
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("want success after retries, got %v", err)
				}
				return
			}
			if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != tc.status {
				t.Fatalf("err = %v, want the %d unretried", err, tc.status)
			}
		})
	}
}

func TestClientErrorsNeitherRetriedNorCounted(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	ctx := t.Context()
	const missing = "9f1c3a52-0000-4000-8000-000000000000"
	tests := []struct {
		name   string
		route  string
		force  int // 0 = the emulator's own answer
		status int
		call   func(c *Client) error
	}{
		{"404 not found", "GET /v3/documents/{id}", 0, 404, func(c *Client) error {
			_, err := c.GetDocument(ctx, missing)
			return err
		}},
		{"422 invalid id", "GET /v3/documents/{id}", 0, 422, func(c *Client) error {
			_, err := c.GetDocument(ctx, "not-a-uuid")
			return err
		}},
		{"401 rejected credentials", "GET /v3/users/me", 401, 401, func(c *Client) error {
			_, err := c.Me(ctx)
			return err
		}},
		{"400 bad search", searchRoute, 400, 400, func(c *Client) error {
			_, err := c.Search(ctx, SearchRequest{Query: "x"})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBreaker(srv.URL, BreakerSettings{}, nil)
			c := resilientClient(t, srv.URL, fastRetry, b)
			// Four failed calls (each a GET tried four times), one short of opening.
			srv.ForceStatus("GET /v3/documents/{id}", 502, 16)
			for range 4 {
				if _, err := c.GetDocument(ctx, missing); !errors.Is(err, ErrUnavailable) {
					t.Fatalf("setup: %v", err)
				}
			}
			wantState(t, b, "closed", 4)

			srv.ResetCounts()
			if tc.force != 0 {
				srv.ForceStatus(tc.route, tc.force, 1)
			}
			err := tc.call(c)
			if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != tc.status {
				t.Fatalf("err = %v, want %d", err, tc.status)
			}
			if n := srv.Count(tc.route); n != 1 {
				t.Fatalf("%d requests for a %d, want 1 (no retry)", n, tc.status)
			}
			// R2R answered, so the failure run is over: one more 5xx does not open it.
			wantState(t, b, "closed", 0)
			srv.ForceStatus("POST /v3/documents", 503, 1)
			if _, err := c.CreateDocument(ctx, DocumentCreate{RawText: "t"}); err == nil {
				t.Fatal("forced 503 succeeded")
			}
			wantState(t, b, "closed", 1)
		})
	}
}

func TestBreakerOpensAndFailsFast(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	var logs r2rtest.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	b := NewBreaker(srv.URL, BreakerSettings{Cooldown: time.Hour}, logger)
	// Breaker alone, so each call is one attempt.
	c, err := New(Options{BaseURL: srv.URL, Middleware: []Middleware{b.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	srv.Down(true)
	for i := 1; i <= 5; i++ {
		_, err := c.Search(ctx, SearchRequest{Query: "refund policy"})
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("call %d: %v, want a transport error", i, err)
		}
		if i < 5 {
			wantState(t, b, "closed", uint32(i))
		}
	}
	st := wantState(t, b, "open", 5)
	if st.RetryAfter <= 0 || st.RetryAfter > time.Hour || st.OpenedAt.IsZero() ||
		len(st.Transitions) != 1 || st.Transitions[0].From != "closed" || st.Transitions[0].To != "open" {
		t.Fatalf("state %+v", st)
	}

	// R2R is back, but the breaker keeps calls away from it until the cooldown ends.
	srv.Down(false)
	srv.ResetCounts()
	for i := range 100 {
		_, err := c.Search(ctx, SearchRequest{Query: fmt.Sprintf("refund policy %d", i)})
		e := wantCircuitOpen(t, err)
		if e.RetryAfter > time.Hour || e.Op != "search" || e.Path != "/v3/retrieval/search" {
			t.Fatalf("open error %+v", e)
		}
		if want := "R2R search: circuit breaker open after 5 consecutive failures; R2R calls are paused for "; !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("error text %q", err)
		}
	}
	if n := len(srv.Counts()); n != 0 {
		t.Fatalf("open breaker let requests through: %v", srv.Counts())
	}
	if !strings.Contains(logs.String(), "r2r circuit breaker opened") || !strings.Contains(logs.String(), "consecutive_failures=5") {
		t.Fatalf("no state-change log:\n%s", logs.String())
	}
	if got := b.Summary(); !strings.HasPrefix(got, "open (5 consecutive failures; half-open in ") {
		t.Fatalf("summary %q", got)
	}
}

func TestBreakerCountsCallsNotAttempts(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	var sent atomic.Int32
	b := NewBreaker(srv.URL, BreakerSettings{Cooldown: time.Hour}, nil)
	c := resilientClient(t, srv.URL, fastRetry, b, attempts(&sent))
	srv.Down(true)
	// Each search is tried 4 times (3 retries) and counts once: the 5th failed search, not
	// the 5th failed attempt, opens the breaker.
	for i := 1; i <= 5; i++ {
		_, err := c.Search(t.Context(), SearchRequest{Query: fmt.Sprintf("q%d", i)})
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrCircuitOpen) {
			t.Fatalf("search %d: %v, want R2R's transport error", i, err)
		}
		if n := sent.Load(); n != int32(4*i) {
			t.Fatalf("after search %d: %d attempts, want %d", i, n, 4*i)
		}
		if i < 5 {
			wantState(t, b, "closed", uint32(i))
		}
	}
	wantState(t, b, "open", 5)
	// Open: rejected before any attempt, so nothing is retried either.
	for range 3 {
		_, err := c.Search(t.Context(), SearchRequest{Query: "c"})
		wantCircuitOpen(t, err)
	}
	if n := sent.Load(); n != 20 {
		t.Fatalf("%d attempts after opening, want none beyond 20", n)
	}
}

func TestFlakyAttemptsDoNotOpenTheBreaker(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	b := NewBreaker(srv.URL, BreakerSettings{}, nil)
	c := resilientClient(t, srv.URL, fastRetry, b)
	// 3 failed attempts per call, 10 calls in a row: 30 consecutive failed attempts, yet
	// every call succeeds on its last retry and the breaker never sees a failure.
	for i := range 10 {
		srv.ForceStatus(searchRoute, 503, 3)
		if _, err := c.Search(t.Context(), SearchRequest{Query: fmt.Sprintf("q%d", i)}); err != nil {
			t.Fatalf("search %d: %v", i, err)
		}
		wantState(t, b, "closed", 0)
	}
	if n := srv.Count(searchRoute); n != 40 {
		t.Fatalf("%d requests, want 40", n)
	}
}

func TestBreakerRecovers(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	var logs r2rtest.SyncBuffer
	b := NewBreaker(srv.URL, BreakerSettings{Cooldown: 50 * time.Millisecond}, slog.New(slog.NewTextHandler(&logs, nil)))
	c, err := New(Options{BaseURL: srv.URL, Middleware: []Middleware{b.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	trip := func() {
		t.Helper()
		srv.Down(true)
		for range 5 {
			_ = c.Health(ctx)
		}
		wantState(t, b, "open", 5)
	}

	trip()
	srv.Down(false)
	waitHalfOpen(t, b)
	if err := c.Health(ctx); err != nil {
		t.Fatalf("first probe: %v", err)
	}
	wantState(t, b, "half-open", 0)
	if err := c.Health(ctx); err != nil {
		t.Fatalf("second probe: %v", err)
	}
	wantState(t, b, "closed", 0)

	// A failed probe opens it again at once.
	trip()
	waitHalfOpen(t, b)
	err = c.Health(ctx)
	if errors.Is(err, ErrCircuitOpen) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("probe: %v", err)
	}
	wantState(t, b, "open", 1)
	_, err = c.Search(ctx, SearchRequest{Query: "q"})
	if !strings.Contains(wantCircuitOpen(t, err).Message, "after a failed probe") {
		t.Fatalf("message %q", err)
	}

	var path []string
	for _, tr := range b.State().Transitions {
		path = append(path, tr.From+">"+tr.To)
	}
	want := "closed>open open>half-open half-open>closed closed>open open>half-open half-open>open"
	if strings.Join(path, " ") != want {
		t.Fatalf("transitions %v, want %s", path, want)
	}
	for _, msg := range []string{"r2r circuit breaker opened", "r2r circuit breaker half-open", "r2r circuit breaker closed"} {
		if !strings.Contains(logs.String(), msg) {
			t.Fatalf("log lacks %q:\n%s", msg, logs.String())
		}
	}
}

func TestBreakerHalfOpenAdmitsOnlyProbes(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		arrived <- struct{}{}
		<-release
		io.WriteString(w, `{"results":{"message":"ok"}}`)
	}))
	defer srv.Close()
	var once sync.Once
	defer once.Do(func() { close(release) }) // runs before srv.Close: no handler stays blocked
	b := NewBreaker(srv.URL, BreakerSettings{Cooldown: 50 * time.Millisecond}, nil)
	c, err := New(Options{BaseURL: srv.URL, Middleware: []Middleware{b.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_ = c.Health(t.Context())
	}
	wantState(t, b, "open", 5)
	failing.Store(false)
	waitHalfOpen(t, b)

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() { errs <- c.Health(t.Context()) })
	}
	<-arrived
	<-arrived
	// Both probe slots are taken: a third call is turned away without reaching R2R.
	e := wantCircuitOpen(t, c.Health(t.Context()))
	if e.RetryAfter != halfOpenRetryAfter || !strings.Contains(e.Message, "half-open") {
		t.Fatalf("half-open rejection %+v", e)
	}
	once.Do(func() { close(release) })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
	}
	wantState(t, b, "closed", 0)
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		failures   int // 429s before a 200
		wantWaits  []time.Duration
		wantErr    bool
	}{
		{"honoured", "7", 1, []time.Duration{7 * time.Second}, false},
		{"honoured twice", "2", 2, []time.Duration{2 * time.Second, 2 * time.Second}, false},
		{"longer than MaxRetryAfter ends retries", "45", 1, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if int(n.Add(1)) <= tc.failures {
					w.Header().Set("Retry-After", tc.retryAfter)
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				io.WriteString(w, `{"results":{"chunk_search_results":[]}}`)
			}))
			defer srv.Close()
			var waits []time.Duration
			p := RetryPolicy{MaxRetries: 3, sleep: func(_ context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}}
			c := resilientClient(t, srv.URL, p, NewBreaker(srv.URL, BreakerSettings{}, nil))
			_, err := c.Search(t.Context(), SearchRequest{Query: "q"})
			if tc.wantErr {
				e, ok := errors.AsType[*Error](err)
				if !ok || e.StatusCode != 429 || e.RetryAfter != 45*time.Second || n.Load() != 1 {
					t.Fatalf("err = %v after %d requests", err, n.Load())
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(waits) != fmt.Sprint(tc.wantWaits) {
				t.Fatalf("waits %v, want %v", waits, tc.wantWaits)
			}
		})
	}
}

func TestRetryBackoffGrowsWithJitter(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"results":{"chunk_search_results":[]}}`)
	}))
	defer srv.Close()
	var waits []time.Duration
	p := RetryPolicy{MaxRetries: 3, InitialInterval: 100 * time.Millisecond, Multiplier: 2, RandomizationFactor: 0.5,
		sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	c := resilientClient(t, srv.URL, p, NewBreaker(srv.URL, BreakerSettings{}, nil))
	if _, err := c.Search(t.Context(), SearchRequest{Query: "q"}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 3 {
		t.Fatalf("waits %v", waits)
	}
	for i, w := range waits {
		base := 100 * time.Millisecond << i
		if w < base/2 || w > base*3/2 {
			t.Fatalf("wait %d = %v, want %v ± 50%%", i, w, base)
		}
	}
}

func TestRetryNeverWaitsPastDeadline(t *testing.T) {
	tests := []struct {
		name   string
		header string
		status int
		policy RetryPolicy
	}{
		{"Retry-After beyond deadline", "10", 429, RetryPolicy{MaxRetries: 3}},
		{"backoff beyond deadline", "", 503, RetryPolicy{MaxRetries: 3, InitialInterval: 10 * time.Second, MaxInterval: 20 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			c := resilientClient(t, srv.URL, tc.policy, NewBreaker(srv.URL, BreakerSettings{}, nil))
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			_, err := c.Search(ctx, SearchRequest{Query: "q"})
			if ctx.Err() != nil {
				t.Fatal("returned only after the deadline")
			}
			if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != tc.status || n.Load() != 1 {
				t.Fatalf("err = %v after %d requests, want the first %d", err, n.Load(), tc.status)
			}
		})
	}
}

func TestCancellationStopsRetriesAndIsNotAFailure(t *testing.T) {
	tests := []struct {
		name       string
		policy     RetryPolicy
		hang       bool          // the second request hangs until cancelled
		timeout    time.Duration // 0 = cancel explicitly
		hangAfter  time.Duration // BreakerSettings.HangThreshold
		wantSent   int32
		wantFails  uint32
		wantCauses error
	}{
		// The breaker judges the call by how it ended: a cancelled call, or one cut short by
		// the caller's own deadline, says nothing about R2R, even after a 503 on the way.
		{name: "cancel during backoff", policy: RetryPolicy{MaxRetries: 3, InitialInterval: time.Minute},
			wantSent: 1, wantFails: 0, wantCauses: context.Canceled},
		{name: "cancel during an attempt", policy: fastRetry, hang: true,
			wantSent: 2, wantFails: 0, wantCauses: context.Canceled},
		{name: "caller's short deadline", policy: fastRetry, hang: true, timeout: 200 * time.Millisecond,
			wantSent: 2, wantFails: 0, wantCauses: context.DeadlineExceeded},
		{name: "R2R hangs past the threshold", policy: fastRetry, hang: true, timeout: 200 * time.Millisecond,
			hangAfter: time.Millisecond, wantSent: 2, wantFails: 1, wantCauses: context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			// ready is signalled when the call is where the test cancels it: in the backoff
			// wait, or with the second request in flight.
			ready := make(chan struct{}, 1)
			done := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// net/http notices a client hang-up only once the body has been read.
				_, _ = io.Copy(io.Discard, r.Body)
				if n.Add(1) == 1 || !tc.hang {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				ready <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-done:
				}
			}))
			defer srv.Close()
			defer close(done)
			p := tc.policy
			if !tc.hang {
				p.sleep = func(ctx context.Context, d time.Duration) error {
					ready <- struct{}{}
					return sleepCtx(ctx, d)
				}
			}
			b := NewBreaker(srv.URL, BreakerSettings{HangThreshold: tc.hangAfter}, nil)
			c := resilientClient(t, srv.URL, p, b)
			var ctx context.Context
			var cancel context.CancelFunc
			if tc.timeout > 0 {
				ctx, cancel = context.WithTimeout(t.Context(), tc.timeout)
			} else {
				ctx, cancel = context.WithCancel(t.Context())
				go func() {
					<-ready
					cancel()
				}()
			}
			defer cancel()
			_, err := c.Search(ctx, SearchRequest{Query: "q"})
			if !errors.Is(err, tc.wantCauses) {
				t.Fatalf("err = %v, want %v", err, tc.wantCauses)
			}
			if got := n.Load(); got != tc.wantSent {
				t.Fatalf("%d requests, want %d", got, tc.wantSent)
			}
			wantState(t, b, "closed", tc.wantFails)
		})
	}
}

func TestBreakerForSharesOneBreakerPerURL(t *testing.T) {
	a := BreakerFor("http://breaker-registry.test:7272/v3/", BreakerSettings{Failures: 9}, nil)
	if b := BreakerFor("http://breaker-registry.test:7272", BreakerSettings{}, nil); a != b {
		t.Fatal("same R2R, different breakers")
	}
	if a.Settings().Failures != 9 || a.State().URL != "http://breaker-registry.test:7272" {
		t.Fatalf("settings %+v, url %q", a.Settings(), a.State().URL)
	}
	if o := BreakerFor("http://other-breaker-registry.test:7272", BreakerSettings{}, nil); o == a {
		t.Fatal("different R2R URLs share a breaker")
	}
	// Resilient without an explicit breaker uses the shared one.
	c, err := New(Options{BaseURL: "http://breaker-registry.test:7272",
		Middleware: Resilient(ResilienceOptions{URL: "http://breaker-registry.test:7272/"})})
	if err != nil || c == nil {
		t.Fatal(err)
	}
	if s := BreakerFor("http://breaker-registry.test:7272", BreakerSettings{}, nil).Settings(); s.Failures != 9 ||
		s.Cooldown != DefaultBreakerCooldown || s.HalfOpenSuccesses != DefaultBreakerHalfOpenSuccesses {
		t.Fatalf("settings %+v", s)
	}
}

func TestBreakerStateString(t *testing.T) {
	tests := []struct {
		st   BreakerState
		want string
	}{
		{BreakerState{State: "closed"}, "closed"},
		{BreakerState{State: "closed", ConsecutiveFailures: 3}, "closed (3 consecutive failures)"},
		{BreakerState{State: "open", ConsecutiveFailures: 5, RetryAfter: 41200 * time.Millisecond}, "open (5 consecutive failures; half-open in 42s)"},
		{BreakerState{State: "open", ConsecutiveFailures: 1, RetryAfter: time.Second}, "open (1 failure; half-open in 1s)"},
		{BreakerState{State: "half-open"}, "half-open (probing R2R)"},
	}
	for _, tc := range tests {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.st, got, tc.want)
		}
	}
}

func TestR2RInternalErrorsDoNotOpenTheBreaker(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	ctx := t.Context()
	b := NewBreaker(srv.URL, BreakerSettings{Cooldown: time.Hour}, nil)
	c := resilientClient(t, srv.URL, fastRetry, b)

	// R2R answers an invalid filter with 500 and its own error body: the caller's mistake,
	// reported by an R2R that is up. Six in a row leave the breaker closed.
	bad := SearchRequest{Query: "payout", SearchSettings: &SearchSettings{
		Filters: map[string]any{"id": map[string]any{"$neq": "x"}}}}
	for range 6 {
		_, err := c.Search(ctx, bad)
		if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != 500 || e.ErrorType == "" {
			t.Fatalf("err = %v, want R2R's 500 with an error type", err)
		}
	}
	wantState(t, b, "closed", 0)

	// A bare 500 (no R2R error body, e.g. from a proxy or a crashed worker) is a failure.
	srv.ForceResponse("POST /v3/documents", 500, "text/plain", []byte("Internal Server Error"), 5)
	for range 5 {
		if _, err := c.CreateDocument(ctx, DocumentCreate{RawText: "t"}); err == nil {
			t.Fatal("forced 500 succeeded")
		}
	}
	wantState(t, b, "open", 5)
}
