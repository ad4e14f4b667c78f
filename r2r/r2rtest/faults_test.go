package r2rtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLatencyHonoursCancellation(t *testing.T) {
	s := NewServer(t, Options{Latency: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	// Served directly, the handler's return is the moment it gave up on the request.
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, "GET", "/v3/health", nil))
	if time.Since(start) > 30*time.Second {
		t.Fatal("request was not abandoned")
	}
	if s.Cancelled() != 1 || s.Count("cancelled") != 1 || s.Count("GET /v3/health") != 1 {
		t.Fatalf("cancelled = %d, count = %d", s.Cancelled(), s.Count("GET /v3/health"))
	}
	s.Configure(func(o *Options) { o.Latency = time.Millisecond })
	wantStatus(t, newTC(t, s).get("/v3/health"), 200)
}

func TestFailRate(t *testing.T) {
	s := NewServer(t, Options{FailRate: 1})
	c := newTC(t, s)
	var got []int
	for i := 0; i < 4; i++ {
		r := c.get("/v3/health")
		got = append(got, r.status)
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.raw), "<html>") {
			t.Fatalf("proxy body %q (%s)", r.raw, r.header.Get("Content-Type"))
		}
	}
	if fmt.Sprint(got) != "[502 503 504 502]" {
		t.Fatalf("statuses %v", got)
	}
	s.Configure(func(o *Options) { o.FailRate = 0 })
	wantStatus(t, c.get("/v3/health"), 200)

	// A fractional rate fails some requests but not all.
	s.Configure(func(o *Options) { o.FailRate = 0.5 })
	fails := 0
	for i := 0; i < 200; i++ {
		if c.get("/v3/health").status != 200 {
			fails++
		}
	}
	if fails == 0 || fails == 200 {
		t.Fatalf("fails = %d of 200", fails)
	}
}

func TestForceStatus(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	s.ForceStatus("GET /v3/documents/{id}", 503, 2)
	path := "/v3/documents/" + uuid5("x")
	for i := 0; i < 2; i++ {
		r := c.get(path)
		wantStatus(t, r, 503)
		if !strings.Contains(string(r.raw), "503 Service Unavailable") {
			t.Fatalf("%q", r.raw)
		}
	}
	wantStatus(t, c.get(path), 404)
	wantStatus(t, c.get("/v3/health"), 200)

	s.ForceStatus("GET /v3/health", 429, 1)
	r := c.get("/v3/health")
	wantMessage(t, r, 429, "Global per-minute rate limit exceeded")
	if r.header.Get("Retry-After") != "" {
		t.Fatal("R2R sends no Retry-After")
	}
	s.ForceStatus("GET /v3/health", 500, 1)
	wantInternal(t, c.get("/v3/health"), "Exception", "forced failure")
	s.ForceStatus("GET /v3/health", 404, 1)
	wantR2RError(t, c.get("/v3/health"), 404, "Not Found")
	s.ForceResponse("GET /v3/health", 418, "text/plain", []byte("teapot"), 1)
	if r := c.get("/v3/health"); r.status != 418 || string(r.raw) != "teapot" {
		t.Fatalf("%d %q", r.status, r.raw)
	}
	s.ForceStatus("GET /v3/health", 500, 0) // no-op
	wantStatus(t, c.get("/v3/health"), 200)
}

func TestDown(t *testing.T) {
	s := NewServer(t, Options{})
	s.Down(true)
	resp, err := http.Get(s.URL + "/v3/health")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got status %d while down", resp.StatusCode)
	}
	s.Down(false)
	wantStatus(t, newTC(t, s).get("/v3/health"), 200)

	// Without a hijackable connection the handler aborts instead.
	e := New(Options{})
	defer e.Close()
	e.Down(true)
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("recovered %v", v)
		}
	}()
	e.ServeHTTP(nopWriter{}, mustRequest(t, "GET", "/v3/health"))
}

type nopWriter struct{}

func (nopWriter) Header() http.Header         { return http.Header{} }
func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) WriteHeader(int)             {}

func mustRequest(t *testing.T, method, path string) *http.Request {
	req, err := http.NewRequest(method, "http://emulator"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestRateLimit(t *testing.T) {
	s := NewServer(t, Options{RateLimit: 2})
	user, _ := userClient(t, s, "limited@example.com")
	post := func() *resp { return user.postJSON("/v3/collections", map[string]any{"name": newUUID()}) }
	// R2R rejects once more than RateLimit requests were logged, so RateLimit+1 pass.
	for i := 0; i < 3; i++ {
		wantStatus(t, user.get("/v3/documents"), 200) // GETs are checked but not logged
		wantStatus(t, post(), 200)
	}
	r := post()
	wantMessage(t, r, 429, "Global per-minute rate limit exceeded")
	if _, isStr := r.body["detail"].(string); !isStr || r.header.Get("Retry-After") != "" {
		t.Fatalf("429 shape %s %v", r.raw, r.header)
	}
	// GETs are checked too, but login/health are not limited.
	wantStatus(t, user.get("/v3/documents"), 429)
	wantStatus(t, user.get("/v3/health"), 200)
	wantStatus(t, user.form("/v3/users/login", map[string][]string{"username": {"limited@example.com"}, "password": {"pw-limited@example.com"}}), 200)
	// Superusers are never limited.
	for i := 0; i < 5; i++ {
		wantStatus(t, newTC(t, s).postJSON("/v3/collections", map[string]any{"name": newUUID()}), 200)
	}
	// Rejected requests are not logged, and the window slides: lifting the limit restores service.
	s.Configure(func(o *Options) { o.RateLimit = 0 })
	wantStatus(t, post(), 200)
}

func TestCountersAndRecording(t *testing.T) {
	var log SyncBuffer
	s := NewServer(t, Options{Logger: &log})
	c := newTC(t, s).with("")
	c.rawText("counted", nil)
	c.get("/v3/documents?limit=5&ids=" + uuid5("a"))
	c.get("/v3/documents/" + uuid5("b"))
	r := c.get("/v3/nope")
	wantMessage(t, r, 404, "Not Found")
	r = c.do("PUT", "/v3/documents", "application/json", strings.NewReader(`{"secret":"dropped"}`))
	wantMessage(t, r, 405, "Method Not Allowed")
	wantStatus(t, c.get("/v3/collections/"+uuid5("x")+"/other"), 404)
	c.postJSON("/v3/retrieval/search", map[string]any{"query": "hello"})

	want := map[string]int{"POST /v3/documents": 1, "GET /v3/documents": 1, "GET /v3/documents/{id}": 1,
		"GET (unknown)": 2, "PUT (unknown)": 1, "POST /v3/retrieval/search": 1}
	if got := s.Counts(); !maps.Equal(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
	rec := s.LastRequest("GET /v3/documents")
	if rec.Query.Get("limit") != "5" || rec.Method != "GET" || rec.Path != "/v3/documents" || rec.Truncated {
		t.Fatalf("recorded %+v", rec)
	}
	rec = s.LastRequest("POST /v3/retrieval/search")
	var body map[string]any
	if err := rec.JSON(&body); err != nil || body["query"] != "hello" || rec.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("recorded %+v %v", rec, err)
	}
	// Unknown routes keep no body.
	if rec := s.LastRequest("PUT (unknown)"); rec == nil || rec.Path != "/v3/documents" || rec.Body != nil || !rec.Truncated {
		t.Fatalf("unknown route recorded %+v", rec)
	}
	if s.LastRequest("GET /v3/never") != nil {
		t.Fatal("unexpected record")
	}
	s.ResetCounts()
	if len(s.Counts()) != 0 {
		t.Fatal("not reset")
	}
	text := log.String()
	if lines := strings.Count(text, "\n"); lines != 7 || !strings.Contains(text, "POST /v3/documents 202") || strings.Contains(text, "counted") {
		t.Fatalf("log:\n%s", text)
	}
	if o := s.Options(); o.ChunkSize != 1024 || o.TokenTTL != time.Hour || o.TimeFormat != TimeFormatZ {
		t.Fatalf("defaults %+v", o)
	}
}

func TestUnknownRoutesDoNotGrowCounters(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	for i := range 50 {
		wantStatus(t, c.get(fmt.Sprintf("/v3/scan-%d", i)), 404)
	}
	req, _ := http.NewRequest("PROPFIND", s.URL+"/v3/x", nil)
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := map[string]int{"GET (unknown)": 50, "OTHER (unknown)": 1}
	if got := s.Counts(); !maps.Equal(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

func TestRecordedBodyIsCapped(t *testing.T) {
	s := NewServer(t, Options{IngestDelay: time.Hour}) // stays pending: chunking 1 MiB is slow
	c := newTC(t, s)
	big := bytes.Repeat([]byte("a"), MaxRecordedBody+10)
	wantStatus(t, c.upload("big.txt", big, nil), http.StatusAccepted)
	rec := s.LastRequest("POST /v3/documents")
	if !rec.Truncated || len(rec.Body) != MaxRecordedBody || len(rec.File) != MaxRecordedBody || rec.FileName != "big.txt" {
		t.Fatalf("truncated=%v body=%d file=%d name=%q", rec.Truncated, len(rec.Body), len(rec.File), rec.FileName)
	}
	// The document itself is complete: only the recording is cut.
	id := uuid5("big.txt-" + uuid5(AdminEmail))
	if d := c.get("/v3/documents/" + id).results(); d["size_in_bytes"] != float64(len(big)) {
		t.Fatalf("size %v", d["size_in_bytes"])
	}
	bigText := strings.Repeat("b ", MaxRecordedBody)
	wantStatus(t, c.form("/v3/documents", url.Values{"raw_text": {bigText}, "metadata": {`{"k":"v"}`}}), http.StatusAccepted)
	rec = s.LastRequest("POST /v3/documents")
	size := 0
	for _, vs := range rec.Form {
		for _, v := range vs {
			size += len(v)
		}
	}
	if !rec.Truncated || len(rec.Body) != MaxRecordedBody || size != MaxRecordedBody {
		t.Fatalf("form: truncated=%v body=%d form=%d", rec.Truncated, len(rec.Body), size)
	}
	wantStatus(t, c.upload("small.txt", []byte("small"), nil), http.StatusAccepted)
	if rec := s.LastRequest("POST /v3/documents"); rec.Truncated || string(rec.File) != "small" {
		t.Fatalf("small upload recorded %+v", rec)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestConcurrentRequests(t *testing.T) {
	s := NewServer(t, Options{IngestDelay: time.Millisecond})
	c := newTC(t, s)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			req, _ := http.NewRequest("POST", s.URL+"/v3/documents", strings.NewReader("raw_text=doc+"+strings.Repeat("x", i+1)))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			s.Configure(func(o *Options) { o.Latency = 0 })
			_ = s.Counts()
		}(i)
	}
	wg.Wait()
	if n := c.get("/v3/documents").body["total_entries"]; n != float64(8) {
		t.Fatalf("documents %v", n)
	}
}

func TestBodyCap(t *testing.T) {
	s := NewServer(t, Options{})
	s.mu.Lock()
	s.maxBody = 1 << 10
	s.mu.Unlock()
	wantStatus(t, newTC(t, s).upload("small.txt", bytes.Repeat([]byte("x"), 100), nil), http.StatusAccepted)
	r := newTC(t, s).upload("huge.bin", bytes.Repeat([]byte("x"), 2<<10), nil)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.raw), "413") {
		t.Fatalf("%d %.100s", r.status, r.raw)
	}
}
