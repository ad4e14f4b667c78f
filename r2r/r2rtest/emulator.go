package r2rtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Options configures an Emulator. The zero value is a usable no-auth emulator without faults.
type Options struct {
	// RequireAuth false = requests without credentials act as the default superuser.
	RequireAuth bool
	// TokenTTL is the access token lifetime (default 60 minutes).
	TokenTTL time.Duration
	// RefreshTTL is the refresh token lifetime (default 7 days).
	RefreshTTL time.Duration
	// IngestDelay is the time each ingestion state step takes; 0 = synchronous ingestion.
	IngestDelay time.Duration
	// Latency is added to every request (the wait honours the request context).
	Latency time.Duration
	// FailRate is the fraction of requests answered 502/503/504 (rotating), as a reverse
	// proxy in front of an unhealthy R2R would.
	FailRate float64
	// RateLimit is the per-minute POST/DELETE limit for non-superusers; 0 = off. As in R2R,
	// a request is refused with 429 once more than RateLimit requests were logged in the
	// last minute, so RateLimit+1 requests pass; GETs are checked but not counted.
	RateLimit int
	// Logger receives one line per request (method, path, status, duration; never bodies or
	// headers); nil = none. It must be safe for concurrent use.
	Logger io.Writer
	// ChunkSize is the maximum chunk length in characters (default 1024).
	ChunkSize int
	// ChunkOverlap is how many characters of a chunk's end the next chunk may repeat.
	// Zero means R2R's shipped 512 with the default ChunkSize, and none with another
	// ChunkSize (R2R would refuse an overlap above the size); negative = none.
	// ingestion_config.chunk_size and chunk_overlap override both per document, and an
	// overlap larger than the size fails ingestion as in R2R.
	ChunkOverlap int
	// TimeFormat is how timestamps are written: TimeFormatZ (default, also for "" and
	// unknown values), TimeFormatOffset or TimeFormatNaive.
	TimeFormat string
	// Clock, when set, is the emulator's time, for tests that let time pass on a fake clock:
	// records are stamped with it (created_at, updated_at), and tokens are issued and
	// expire by it; nil = time.Now.
	Clock func() time.Time
}

// Default superuser credentials, as in R2R's shipped configuration.
const (
	AdminEmail    = "admin@example.com"
	AdminPassword = "change_me_immediately"
)

// Emulator is an in-memory R2R v3 server. It is an http.Handler and safe for concurrent use.
type Emulator struct {
	mux    *http.ServeMux
	secret []byte

	mu    sync.Mutex // guards everything below
	opts  Options
	clock time.Time // last timestamp handed out; keeps created_at strictly increasing
	rng   *rand.Rand
	st    *store

	counts     map[string]int
	last       map[string]*RecordedRequest
	forced     map[string][]forcedResponse
	cancelled  int
	failSeq    int
	down       bool
	maxBody    int64
	rateLog    map[string][]time.Time
	jobs       map[*ingestJob]struct{} // running background ingestions
	jobStarted signal                  // the next background ingestion started (IngestionStarted)
	changed    signal                  // the next request or cancellation was counted (Changed)
	started    time.Time               // what GET /v3/system/status reports (New, Restart)
	// accessNotBefore: access tokens issued at or before this instant are expired (ExpireTokens).
	accessNotBefore time.Time

	ctx    context.Context // cancelled by Close; stops background ingestion
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type forcedResponse struct {
	status      int
	contentType string
	body        []byte
	remaining   int
}

// RecordedRequest is what the emulator saw of a request (for assertions in tests).
type RecordedRequest struct {
	Method string
	Path   string
	Query  url.Values
	// Header is the raw request header, credentials included (tests only).
	Header http.Header
	// Form holds urlencoded or multipart form fields (file parts excluded).
	Form url.Values
	// FileName and File are the multipart part named "file", if any.
	FileName        string
	File            []byte
	FileContentType string
	// Body is the raw request body.
	Body []byte
	// ContentType is the request's media type without parameters.
	ContentType string
	// Truncated is set when Body, File or the form values were cut to MaxRecordedBody bytes,
	// or when the body of a request to an unknown route was dropped.
	Truncated bool

	hasFile bool // a part named "file" was present, even with an empty name
}

// JSON decodes the recorded body into v.
func (r *RecordedRequest) JSON(v any) error {
	return jsonUnmarshal(r.Body, v)
}

// New returns an emulator with the default superuser (admin@example.com /
// change_me_immediately) already created.
func New(opts Options) *Emulator {
	ctx, cancel := context.WithCancel(context.Background())
	e := &Emulator{
		mux:     http.NewServeMux(),
		secret:  randomBytes(32),
		opts:    normalise(opts),
		rng:     rand.New(rand.NewPCG(1, 2)),
		st:      newStore(),
		counts:  map[string]int{},
		last:    map[string]*RecordedRequest{},
		forced:  map[string][]forcedResponse{},
		rateLog: map[string][]time.Time{},
		jobs:    map[*ingestJob]struct{}{},
		maxBody: maxBody,
		ctx:     ctx,
		cancel:  cancel,
	}
	e.routes()
	e.CreateUser(AdminEmail, AdminPassword, true)
	e.mu.Lock()
	e.started = e.nowLocked()
	e.mu.Unlock()
	return e
}

func normalise(o Options) Options {
	if o.TokenTTL <= 0 {
		o.TokenTTL = 60 * time.Minute
	}
	if o.RefreshTTL <= 0 {
		o.RefreshTTL = 7 * 24 * time.Hour
	}
	if o.ChunkOverlap == 0 && o.ChunkSize <= 0 {
		o.ChunkOverlap = 512
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 1024
	}
	o.ChunkOverlap = max(o.ChunkOverlap, 0)
	if _, ok := timeLayouts[o.TimeFormat]; !ok {
		o.TimeFormat = TimeFormatZ
	}
	return o
}

// Close stops background ingestion. Documents still being ingested stay in their current state.
func (e *Emulator) Close() {
	e.cancel()
	e.wg.Wait()
}

// Configure changes options at run time (thread-safe), e.g.
// e.Configure(func(o *Options) { o.FailRate = 1 }).
func (e *Emulator) Configure(f func(*Options)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.opts
	f(&o)
	e.opts = normalise(o)
}

// Options returns a copy of the current options.
func (e *Emulator) Options() Options {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.opts
}

// Count returns how many requests reached route, e.g. Count("POST /v3/documents") or
// Count("GET /v3/documents/{id}"). Requests no route matches (404, 405, a trailing-slash
// redirect) count under METHOD + " (unknown)", e.g. Count("GET (unknown)"), so scanners and
// typos cannot grow the counters without bound. Count("cancelled") is the same as Cancelled().
func (e *Emulator) Count(route string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if route == "cancelled" {
		return e.cancelled
	}
	return e.counts[route]
}

// Counts returns a copy of all request counters.
func (e *Emulator) Counts() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.counts))
	for k, v := range e.counts {
		out[k] = v
	}
	return out
}

// ResetCounts zeroes the request counters and the cancelled-request counter.
func (e *Emulator) ResetCounts() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.counts = map[string]int{}
	e.cancelled = 0
}

// Cancelled returns how many requests the client abandoned (context cancelled) while the
// emulator was still delaying or processing them.
func (e *Emulator) Cancelled() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cancelled
}

// LastRequest returns the last request seen on route, or nil. Route names are those of
// Count; for METHOD + " (unknown)" only the method, path, query and header are kept. Body,
// File and the form values keep at most MaxRecordedBody bytes each (Truncated tells).
func (e *Emulator) LastRequest(route string) *RecordedRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last[route]
}

// ForceStatus makes the next n requests on route answer status without reaching the handler.
// The body has the shape a client would see for that status: R2R's error shape for 4xx/500,
// {"detail":...} for 429, and a proxy's HTML page for 502/503/504.
func (e *Emulator) ForceStatus(route string, status, n int) {
	ct, body := defaultBody(status)
	e.ForceResponse(route, status, ct, body, n)
}

// ForceResponse makes the next n requests on route answer status with the given body.
func (e *Emulator) ForceResponse(route string, status int, contentType string, body []byte, n int) {
	if n <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forced[route] = append(e.forced[route], forcedResponse{status, contentType, body, n})
}

// ExpireTokens makes every access token issued so far expired. Refresh tokens stay valid.
func (e *Emulator) ExpireTokens() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accessNotBefore = e.timeLocked()
}

// Down true makes the emulator close every connection without answering (R2R unreachable
// while the port stays open); false restores normal service.
func (e *Emulator) Down(down bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.down = down
}

// timeLocked is the emulator's time: Options.Clock, or time.Now.
func (e *Emulator) timeLocked() time.Time {
	if e.opts.Clock != nil {
		return e.opts.Clock()
	}
	return time.Now()
}

// now returns a strictly increasing UTC timestamp with microsecond precision.
func (e *Emulator) nowLocked() time.Time {
	t := e.timeLocked().UTC().Truncate(time.Microsecond)
	if !t.After(e.clock) {
		t = e.clock.Add(time.Microsecond)
	}
	e.clock = t
	return t
}

// projectName is what R2R accepts in x-project-name (a Postgres schema name).
var projectName = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

var proxyStatuses = []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

func defaultBody(status int) (string, []byte) {
	switch {
	case status == http.StatusTooManyRequests:
		return "application/json", mustJSON(map[string]any{"detail": "Global per-minute rate limit exceeded"})
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return "text/html", proxyPage(status)
	case status == http.StatusInternalServerError:
		return "application/json", mustJSON(map[string]any{"detail": map[string]any{
			"message": "An error 'forced failure' occurred during emulator", "error": "forced failure", "error_type": "Exception"}})
	default:
		return "application/json", mustJSON(map[string]any{"message": http.StatusText(status), "error_type": "R2RException"})
	}
}

func proxyPage(status int) []byte {
	text := fmt.Sprintf("%d %s", status, http.StatusText(status))
	return []byte("<html>\r\n<head><title>" + text + "</title></head>\r\n<body>\r\n<center><h1>" + text +
		"</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// maxBody caps request bodies the emulator buffers (every upload limit of §9 fits).
const maxBody = 64 << 20

// MaxRecordedBody is the most LastRequest keeps of a request's body and of its file part;
// the long-running r2r-emulator would otherwise hold up to 64 MiB per route.
const MaxRecordedBody = 1 << 20

// ServeHTTP implements http.Handler.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e.mu.Lock()
	down, limit := e.down, e.maxBody
	e.mu.Unlock()
	if down {
		hangUp(w)
		return
	}

	route, h := e.match(r)
	body, _ := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	if int64(len(body)) > limit {
		// R2R itself has no body cap; answer as the reverse proxy in front of it would.
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write(proxyPage(http.StatusRequestEntityTooLarge))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var rec *RecordedRequest
	if h != nil { // unknown route: keep no body
		rec = &RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
			Header: r.Header.Clone(), Form: url.Values{}, Truncated: len(body) > 0}
	} else {
		rec = record(r, body)
	}

	e.mu.Lock()
	e.counts[route]++
	e.changed.fire()
	e.last[route] = rec.forRetention()
	opts := e.opts
	var forced *forcedResponse
	if q := e.forced[route]; len(q) > 0 {
		f := q[0]
		forced = &f
		q[0].remaining--
		if q[0].remaining <= 0 {
			e.forced[route] = q[1:]
		}
	}
	fail := 0
	if forced == nil && opts.FailRate > 0 && e.rng.Float64() < opts.FailRate {
		fail = proxyStatuses[e.failSeq%len(proxyStatuses)]
		e.failSeq++
	}
	e.mu.Unlock()

	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if opts.Logger != nil {
			status := sw.status
			if status == 0 {
				status = 499 // client went away before an answer was written
			}
			fmt.Fprintf(opts.Logger, "%s %s %s %d %s\n", start.Format(time.RFC3339), r.Method, r.URL.Path, status,
				time.Since(start).Round(time.Microsecond))
		}
	}()

	if opts.Latency > 0 {
		t := time.NewTimer(opts.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			e.noteCancelled()
			return
		}
	}
	switch {
	case forced != nil:
		sw.Header().Set("Content-Type", forced.contentType)
		sw.WriteHeader(forced.status)
		_, _ = sw.Write(forced.body)
		return
	case fail != 0:
		ct, b := defaultBody(fail)
		sw.Header().Set("Content-Type", ct)
		sw.WriteHeader(fail)
		_, _ = sw.Write(b)
		return
	}
	c := &call{e: e, w: sw, r: r, body: body, rec: rec, route: route}
	if p := r.Header.Get("X-Project-Name"); p != "" && !projectName.MatchString(p) {
		c.detail(http.StatusBadRequest, "Invalid schema name format")
		return
	}
	if h != nil {
		h(c)
	} else {
		e.mux.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), callKey{}, c)))
	}
	if r.Context().Err() != nil {
		e.noteCancelled()
	}
}

func (e *Emulator) noteCancelled() {
	e.mu.Lock()
	e.cancelled++
	e.changed.fire()
	e.mu.Unlock()
}

// Changed returns a channel closed when the emulator next counts a request (Count) or a
// cancellation (Cancelled), for Await.
func (e *Emulator) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed.wait()
}

// hangUp closes the connection without writing a response.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	// Not hijackable (HTTP/2 or a recorder): abort the handler, which resets the stream.
	panic(http.ErrAbortHandler)
}

func record(r *http.Request, body []byte) *RecordedRequest {
	rec := &RecordedRequest{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.Query(),
		Header: r.Header.Clone(),
		Body:   body,
		Form:   url.Values{},
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	rec.ContentType = mt
	switch mt {
	case "application/x-www-form-urlencoded":
		if v, err := url.ParseQuery(string(body)); err == nil {
			rec.Form = v
		}
	case "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			data, _ := io.ReadAll(p)
			if p.FileName() != "" || p.FormName() == "file" {
				if p.FormName() == "file" {
					rec.hasFile = true
					rec.FileName = rawFileName(p)
					rec.File = data
					rec.FileContentType = p.Header.Get("Content-Type")
				}
				continue
			}
			rec.Form.Add(p.FormName(), string(data))
		}
	}
	return rec
}

// forRetention returns rec as LastRequest keeps it: Body, File and the form values (together)
// cut to MaxRecordedBody bytes each, copied so the full request buffers can be freed.
func (rec *RecordedRequest) forRetention() *RecordedRequest {
	formSize := 0
	for _, vs := range rec.Form {
		for _, v := range vs {
			formSize += len(v)
		}
	}
	if len(rec.Body) <= MaxRecordedBody && len(rec.File) <= MaxRecordedBody && formSize <= MaxRecordedBody {
		return rec
	}
	cp := *rec
	cp.Truncated = true
	if len(cp.Body) > MaxRecordedBody {
		cp.Body = bytes.Clone(cp.Body[:MaxRecordedBody])
	}
	if len(cp.File) > MaxRecordedBody {
		cp.File = bytes.Clone(cp.File[:MaxRecordedBody])
	}
	if formSize > MaxRecordedBody {
		budget := MaxRecordedBody
		cp.Form = make(url.Values, len(rec.Form))
		for k, vs := range rec.Form {
			for _, v := range vs {
				v = v[:min(len(v), budget)]
				budget -= len(v)
				cp.Form[k] = append(cp.Form[k], strings.Clone(v))
			}
		}
	}
	return &cp
}

// rawFileName returns the part's filename parameter as sent; Part.FileName would strip any
// directory, which Starlette does not do.
func rawFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return p.FileName()
	}
	return params["filename"]
}

// match finds the route pattern for r; h is non-nil only for unknown routes (404/405).
func (e *Emulator) match(r *http.Request) (string, func(*call)) {
	if _, pattern := e.mux.Handler(r); pattern != "" {
		if route := logicalRoute(pattern, r); route != "" {
			return route, nil
		}
		return unknownRoute(r), func(c *call) {
			c.writeJSON(http.StatusNotFound, map[string]any{"detail": "Not Found"})
		}
	}
	// FastAPI redirects a trailing slash to the route without it.
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		r2 := r.Clone(r.Context())
		r2.URL.Path = strings.TrimRight(p, "/")
		r2.URL.RawPath = ""
		if _, pattern := e.mux.Handler(r2); pattern != "" {
			return unknownRoute(r), func(c *call) {
				u := *r2.URL
				u.Host, u.Scheme = "", ""
				c.w.Header().Set("Location", u.String())
				c.w.WriteHeader(http.StatusTemporaryRedirect)
			}
		}
	}
	// Distinguish 405 from 404 the way FastAPI does.
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, p := e.mux.Handler(r2); p != "" {
			return unknownRoute(r), func(c *call) {
				c.writeJSON(http.StatusMethodNotAllowed, map[string]any{"detail": "Method Not Allowed"})
			}
		}
	}
	return unknownRoute(r), func(c *call) {
		c.writeJSON(http.StatusNotFound, map[string]any{"detail": "Not Found"})
	}
}

// unknownRoute is the counter key of a request no route matches: the path is left out, and
// non-standard methods are folded into OTHER, so that arbitrary requests cannot add keys.
func unknownRoute(r *http.Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return r.Method + " (unknown)"
	}
	return "OTHER (unknown)"
}

// call is one request being handled.
type call struct {
	e     *Emulator
	w     http.ResponseWriter
	r     *http.Request
	body  []byte
	rec   *RecordedRequest
	route string
	user  *user // set by auth
}

func (c *call) pathValue(name string) string { return c.r.PathValue(name) }

type callKey struct{}

func (e *Emulator) routes() {
	for _, rt := range routeTable {
		h := rt.h
		e.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			c := r.Context().Value(callKey{}).(*call)
			c.r = r
			h(c)
		})
	}
}

type routeDef struct {
	pattern string
	h       func(*call)
}

func contentType(r *http.Request) string {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return strings.ToLower(mt)
}
