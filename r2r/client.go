// Package r2r is a typed client for the R2R v3 HTTP API (the parts r2r-mcp uses).
//
// Every method takes a context, sends exactly one logical request through a single choke
// point (where middleware such as retry and a circuit breaker plug in) and returns an
// *Error for every non-2xx response and transport failure.
package r2r

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultUserAgent is sent when Options.UserAgent is empty.
const DefaultUserAgent = "r2r-mcp/dev"

// DefaultMaxResponseBytes caps how much of a response body is read (64 MiB). A larger
// response (for example a huge document download) fails with ErrResponseTooLarge.
const DefaultMaxResponseBytes = 64 << 20

// Options configure a Client.
type Options struct {
	// BaseURL is R2R's address, with or without a trailing slash or /v3 (or /v3/).
	BaseURL string
	// Credentials authenticate requests; nil = Anonymous.
	Credentials Credentials
	// HTTPClient sends the requests; nil = one process-wide client with connection reuse
	// that refuses redirects to another host (they would leak the credential headers).
	HTTPClient *http.Client
	// UserAgent is sent on every request; default DefaultUserAgent. cmd passes
	// "r2r-mcp/<version>".
	UserAgent string
	// Logger receives one debug line per request (op, method, path, status, duration);
	// nil = discard. Bodies and headers are never logged.
	Logger *slog.Logger
	// MaxResponseBytes caps the bytes read from a response body; 0 = DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// BodyBudget bounds the bytes of response bodies read at once by all Clients sharing
	// it; nil = one process-wide budget of DefaultBodyBudget.
	BodyBudget *BodyBudget
	// Middleware wraps the request path, first element outermost. Each attempt of the
	// innermost handler applies the credentials, sends the request and reads the response,
	// so a middleware may call next several times (retry) or not at all (circuit breaker).
	// The chain is built once in New and shared by WithCredentials copies. When the
	// credentials cannot be applied, the innermost handler returns an error that is not (and
	// wraps no) *Error: nothing reached R2R, so middleware should pass it on untouched; the
	// caller gets it as an *Error matching ErrCredentials.
	Middleware []Middleware
}

// Call describes one logical R2R request. Its body is a byte slice so the request can be
// replayed (token refresh, retries). Middleware must treat a Call as read-only.
type Call struct {
	Op          string     // human name of the operation, e.g. "search"; used in errors and logs
	Method      string     // HTTP method
	Path        string     // escaped path starting with /v3/
	Query       url.Values // nil = none
	Body        []byte     // nil = no body
	ContentType string     // Content-Type of Body
	// Idempotent marks calls that may safely be sent twice (GET, search, rag).
	Idempotent bool
	// NoAuth marks public endpoints (login, refresh-token): no credentials are applied and
	// a 401 never triggers a token refresh.
	NoAuth bool

	creds Credentials
}

// Response is a successful (2xx) response with its body fully read.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// Handler performs one attempt of a Call. It returns a *Response for 2xx answers and an
// error (an *Error for HTTP and transport failures) otherwise.
type Handler func(ctx context.Context, call *Call) (*Response, error)

// Middleware wraps a Handler, e.g. with retries or a circuit breaker.
type Middleware func(next Handler) Handler

// StatusOf is the HTTP status a Handler's result carries: the response's, an *Error's, or
// 0 when R2R did not answer.
func StatusOf(resp *Response, err error) int {
	var re *Error
	switch {
	case resp != nil:
		return resp.StatusCode
	case errors.As(err, &re):
		return re.StatusCode
	}
	return 0
}

// Client talks to one R2R server. It is safe for concurrent use.
type Client struct {
	base     string
	creds    Credentials
	hc       *http.Client
	ua       string
	log      *slog.Logger
	maxBody  int64
	budget   *BodyBudget
	handler  Handler
	identity string
}

// New validates opts and builds a Client.
func New(opts Options) (*Client, error) {
	base, err := NormalizeBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:    base,
		creds:   opts.Credentials,
		hc:      opts.HTTPClient,
		ua:      opts.UserAgent,
		log:     opts.Logger,
		maxBody: opts.MaxResponseBytes,
		budget:  opts.BodyBudget,
	}
	if c.budget == nil {
		c.budget = defaultBodyBudget
	}
	if c.creds == nil {
		c.creds = Anonymous()
	}
	c.identity = c.creds.Identity()
	if c.hc == nil {
		c.hc = sharedHTTPClient()
	}
	if c.ua == "" {
		c.ua = DefaultUserAgent
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	h := c.send
	for i := len(opts.Middleware) - 1; i >= 0; i-- {
		if opts.Middleware[i] != nil {
			h = opts.Middleware[i](h)
		}
	}
	c.handler = h
	return c, nil
}

// BaseURL returns the normalised base URL: no trailing slash, no /v3.
func (c *Client) BaseURL() string { return c.base }

// Identity returns the non-secret identity of the client's credentials.
func (c *Client) Identity() string { return c.identity }

// Credentials returns the credentials the client applies.
func (c *Client) Credentials() Credentials { return c.creds }

// WithCredentials returns a shallow copy using cr (nil = Anonymous) that shares the HTTP
// client, its connection pool and the middleware chain.
func (c *Client) WithCredentials(cr Credentials) *Client {
	if cr == nil {
		cr = Anonymous()
	}
	cp := *c
	cp.creds = cr
	cp.identity = cr.Identity()
	return &cp
}

// NormalizeBaseURL accepts "http://host:7272", "http://host:7272/", ".../v3" and ".../v3/"
// and returns "http://host:7272". It rejects other schemes, a missing host, a query or
// fragment, and user info (credentials do not belong in URLs).
func NormalizeBaseURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("%w: empty R2R base URL", ErrInvalidRequest)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: R2R base URL does not parse", ErrInvalidRequest)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: R2R base URL must start with http:// or https://", ErrInvalidRequest)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: R2R base URL has no host", ErrInvalidRequest)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: R2R base URL must not contain user info; use an API key", ErrInvalidRequest)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return "", fmt.Errorf("%w: R2R base URL must not have a query or fragment", ErrInvalidRequest)
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	p = strings.TrimSuffix(p, "/v3")
	p = strings.TrimRight(p, "/")
	// Host names are case-insensitive; lower-casing makes one R2R one breaker, one keyring
	// entry and one cache namespace however the URL was typed.
	return u.Scheme + "://" + strings.ToLower(u.Host) + p, nil
}

var sharedHTTPClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: newTransport(), CheckRedirect: sameHostRedirect}
})

// newTransport is http.DefaultTransport's configuration (proxy from the environment,
// HTTP/2) with a larger per-host idle pool: r2r-mcp talks to one host, often concurrently.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// sameHostRedirect follows at most 5 redirects and only to the same host without an
// https→http downgrade: net/http forwards custom headers such as X-API-Key on redirects.
func sameHostRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return http.ErrUseLastResponse
	}
	return nil
}

// do is the single choke point every method goes through. It runs the middleware chain
// and, when the credentials can refresh themselves, renews them once after a 401 and
// replays the request once.
func (c *Client) do(ctx context.Context, call *Call) (*Response, error) {
	call.creds = c.creds
	// Read the credential's generation before sending, so that after a 401 a caller whose
	// token another caller has already replaced retries with the new one instead of
	// refreshing (and rotating) again.
	gr, generational := c.creds.(GenerationRefresher)
	var gen uint64
	if generational {
		gen = gr.Generation()
	}
	resp, err := c.handle(ctx, call)
	if err == nil || call.NoAuth {
		return resp, err
	}
	r, ok := c.creds.(Refresher)
	if !ok {
		return nil, err
	}
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != http.StatusUnauthorized {
		return nil, err
	}
	refresh := r.Refresh
	if generational {
		refresh = func(ctx context.Context) error { return gr.RefreshFrom(ctx, gen) }
	}
	if rerr := refresh(ctx); rerr != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, &Error{Op: call.Op, Method: call.Method, Path: call.Path, Err: cerr}
		}
		// The refresh error may come from anywhere (keyring, R2R); the caller gets R2R's
		// 401, which says what to do (log in again), and the log gets the refresh cause.
		c.log.LogAttrs(ctx, slog.LevelWarn, "r2r token refresh failed",
			slog.String("op", call.Op), slog.String("error", rerr.Error()))
		return nil, err
	}
	return c.handle(ctx, call)
}

// credentialFailure carries a CredentialError out of send through the middleware. It has no
// Unwrap, so retry and breaker middleware see no *Error in it: they neither resend the call
// nor count R2R as failing because of the status of a login behind the credentials. handle
// turns it into the *Error the caller gets.
type credentialFailure struct{ ce *CredentialError }

func (f *credentialFailure) Error() string { return f.ce.Error() }

// handle runs the middleware chain once and converts a credential failure into its *Error.
func (c *Client) handle(ctx context.Context, call *Call) (*Response, error) {
	resp, err := c.handler(ctx, call)
	if f, ok := errors.AsType[*credentialFailure](err); ok {
		return nil, &Error{Op: call.Op, Method: call.Method, Path: call.Path, Err: f.ce}
	}
	return resp, err
}

// send is the innermost Handler: one HTTP round trip.
func (c *Client) send(ctx context.Context, call *Call) (*Response, error) {
	start := time.Now()
	target := c.base + call.Path
	if len(call.Query) > 0 {
		target += "?" + call.Query.Encode()
	}
	var body io.Reader
	if call.Body != nil {
		body = bytes.NewReader(call.Body)
	}
	req, err := http.NewRequestWithContext(ctx, call.Method, target, body)
	if err != nil {
		return nil, fmt.Errorf("r2r %s: %w: %v", call.Op, ErrInvalidRequest, err)
	}
	req.Header.Set("User-Agent", c.ua)
	req.Header.Set("Accept", "application/json")
	if call.ContentType != "" {
		req.Header.Set("Content-Type", call.ContentType)
	}
	if !call.NoAuth && call.creds != nil {
		if err := call.creds.Apply(ctx, req.Header); err != nil {
			if cerr := ctx.Err(); cerr != nil && (errors.Is(cerr, context.Canceled) || errors.Is(err, cerr)) {
				// The caller gave up while e.g. a login was under way: a cancellation or
				// deadline, not a credential problem. At a deadline, an error of Apply's own
				// (what the credential was waiting for) is kept instead: R2R was not asked.
				return nil, &Error{Op: call.Op, Method: call.Method, Path: call.Path, Err: cerr}
			}
			return nil, &credentialFailure{&CredentialError{Identity: call.creds.Identity(), Err: err}}
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.logged(ctx, call, start, c.transportError(ctx, call, err))
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		drain(resp.Body)
		return nil, c.logged(ctx, call, start, newStatusError(call, resp.StatusCode, resp.Header, b))
	}
	b, err := c.budget.read(resp.Body, resp.ContentLength, c.maxBody)
	if errors.Is(err, ErrBodyBudget) {
		return nil, c.logged(ctx, call, start, &Error{
			Op: call.Op, Method: call.Method, Path: call.Path, StatusCode: resp.StatusCode,
			Message: "the R2R answers being read at this moment fill r2r-mcp's memory budget of " + sizeText(c.budget.Size()) + "; retry in a moment",
			Err:     err,
		})
	}
	if err != nil && !errors.Is(err, errBodyTooLarge) {
		return nil, c.logged(ctx, call, start, c.transportError(ctx, call, err))
	}
	if err != nil {
		return nil, c.logged(ctx, call, start, &Error{
			Op: call.Op, Method: call.Method, Path: call.Path, StatusCode: resp.StatusCode,
			Message: "response exceeds the limit of " + sizeText(c.maxBody),
			Err:     ErrResponseTooLarge,
		})
	}
	drain(resp.Body)
	c.log.LogAttrs(ctx, slog.LevelDebug, "r2r request",
		slog.String("op", call.Op), slog.String("method", call.Method), slog.String("path", call.Path),
		slog.Int("status", resp.StatusCode), slog.Duration("duration", time.Since(start)))
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// drain reads a bounded remainder so the connection can be reused.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 256<<10)) }

func (c *Client) logged(ctx context.Context, call *Call, start time.Time, e *Error) *Error {
	c.log.LogAttrs(ctx, slog.LevelDebug, "r2r request failed",
		slog.String("op", call.Op), slog.String("method", call.Method), slog.String("path", call.Path),
		slog.Int("status", e.StatusCode), slog.Duration("duration", time.Since(start)),
		slog.String("error", e.Error()))
	return e
}

// transportError wraps a failure to get a response. The *url.Error layer is dropped (its
// text repeats the URL); when the caller's context ended, its error is the cause.
func (c *Client) transportError(ctx context.Context, call *Call, err error) *Error {
	if cerr := ctx.Err(); cerr != nil {
		err = cerr
	} else if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return &Error{Op: call.Op, Method: call.Method, Path: call.Path, Err: err}
}

// decodeError is returned when a 2xx body is not the JSON R2R should have sent.
func decodeError(call *Call, status int, err error) *Error {
	return &Error{Op: call.Op, Method: call.Method, Path: call.Path, StatusCode: status,
		Message: "unexpected response body", Err: err}
}

// jsonBody marshals v for a JSON request body.
func jsonBody(op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("r2r %s: %w: %v", op, ErrInvalidRequest, err)
	}
	return b, nil
}

// results runs call and decodes the "results" member of the envelope into out.
func (c *Client) results(ctx context.Context, call *Call, out any) error {
	resp, err := c.do(ctx, call)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	env := struct {
		Results any `json:"results"`
	}{Results: out}
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		return decodeError(call, resp.StatusCode, err)
	}
	return nil
}

// result runs call and decodes its {"results": …} envelope into a new T.
func result[T any](ctx context.Context, c *Client, call *Call) (*T, error) {
	var out T
	if err := c.results(ctx, call, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// page runs call and decodes a paginated envelope.
func page[T any](ctx context.Context, c *Client, call *Call) (*Page[T], error) {
	resp, err := c.do(ctx, call)
	if err != nil {
		return nil, err
	}
	p := &Page[T]{}
	if err := json.Unmarshal(resp.Body, p); err != nil {
		return nil, decodeError(call, resp.StatusCode, err)
	}
	if p.Items == nil {
		p.Items = []T{}
	}
	return p, nil
}

// listQuery encodes ListParams: ids repeated, offset and limit only when set.
func listQuery(p ListParams, withIDs bool) url.Values {
	q := url.Values{}
	if withIDs {
		for _, id := range p.IDs {
			q.Add("ids", id)
		}
	}
	if p.Offset > 0 {
		q.Set("offset", fmt.Sprint(p.Offset))
	}
	if p.Limit > 0 {
		q.Set("limit", fmt.Sprint(p.Limit))
	}
	return q
}

// pathf builds a /v3 path, escaping each argument as one path segment.
func pathf(format string, segs ...string) string {
	args := make([]any, len(segs))
	for i, s := range segs {
		args[i] = url.PathEscape(s)
	}
	return "/v3" + fmt.Sprintf(format, args...)
}

// requireID rejects an empty argument: a path argument before the request turns into a
// different route, a query before R2R is asked about nothing.
func requireID(op, what, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("r2r %s: %w: empty %s", op, ErrInvalidRequest, what)
	}
	return nil
}
