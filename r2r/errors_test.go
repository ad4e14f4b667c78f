package r2r

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// newTestClient starts an httptest server running h and a client pointing at it.
func newTestClient(t testing.TB, h http.HandlerFunc, opts Options) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestErrorBodyShapes(t *testing.T) {
	long := strings.Repeat("x", 700)
	tests := []struct {
		name       string
		status     int
		ctype      string
		header     map[string]string
		body       string
		wantMsg    string
		wantType   string
		wantRetry  time.Duration
		sentinel   error
		retryable  bool
		notInError string
	}{
		{name: "401 without the hosted-service advice", status: 401, ctype: "application/json",
			body:    `{"message":"No credentials provided. Create an account at https://app.sciphi.ai and set your API key using ` + "`r2r configure key`" + ` OR change your base URL to a custom deployment.","error_type":"R2RException"}`,
			wantMsg: "No credentials provided.", wantType: "R2RException", sentinel: ErrUnauthorized, notInError: "sciphi"},
		{name: "R2RException message", status: 404, ctype: "application/json",
			body:    `{"message":"Document not found.","error_type":"R2RException"}`,
			wantMsg: "Document not found.", wantType: "R2RException", sentinel: ErrNotFound},
		{name: "detail string 429", status: 429, ctype: "application/json",
			header:  map[string]string{"Retry-After": "7"},
			body:    `{"detail":"Global per-minute rate limit exceeded"}`,
			wantMsg: "Global per-minute rate limit exceeded", wantRetry: 7 * time.Second,
			sentinel: ErrRateLimited, retryable: true},
		{name: "detail object 500", status: 500, ctype: "application/json",
			body:    `{"detail":{"message":"An error 'boom' occurred during search_app","error":"boom","error_type":"ValueError"}}`,
			wantMsg: "An error 'boom' occurred during search_app", wantType: "ValueError"},
		{name: "detail object without message", status: 500, ctype: "application/json",
			body: `{"detail":{"error":"boom","error_type":"KeyError"}}`, wantMsg: "boom", wantType: "KeyError"},
		{name: "422 validation list", status: 422, ctype: "application/json",
			body: `{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 1000","input":"5000"},` +
				`{"type":"missing","loc":["body",0],"msg":"Field required","input":"secret-input"}]}`,
			wantMsg:    "query.limit: Input should be less than or equal to 1000; body.0: Field required",
			notInError: "secret-input"},
		{name: "html from proxy", status: 502, ctype: "text/html",
			body:    "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>",
			wantMsg: "Bad Gateway", sentinel: ErrUnavailable, retryable: true},
		{name: "html without content type", status: 504, body: "<!DOCTYPE html><p>timeout</p>",
			wantMsg: "Gateway Timeout", sentinel: ErrUnavailable, retryable: true},
		{name: "plain text capped", status: 400, ctype: "text/plain", body: "  " + long + "  ",
			wantMsg: strings.Repeat("x", maxRawMessage) + "…"},
		{name: "empty body", status: 503, wantMsg: "Service Unavailable", sentinel: ErrUnavailable, retryable: true},
		{name: "401 unauthorized", status: 401, ctype: "application/json",
			body:    `{"message":"Invalid token or API key","error_type":"R2RException"}`,
			wantMsg: "Invalid token or API key", wantType: "R2RException", sentinel: ErrUnauthorized},
		{name: "403 forbidden", status: 403, ctype: "application/json",
			body: `{"message":"You do not have access to this collection."}`, wantMsg: "You do not have access to this collection.",
			sentinel: ErrForbidden},
		{name: "409 conflict", status: 409, ctype: "application/json",
			body: `{"message":"Document is already assigned to the collection"}`, wantMsg: "Document is already assigned to the collection",
			sentinel: ErrConflict},
		{name: "json without known keys", status: 400, ctype: "application/json", body: `{"foo":1}`, wantMsg: `{"foo":1}`},
		{name: "empty message falls back to detail", status: 400, ctype: "application/json",
			body: `{"message":"","detail":"Invalid schema name format"}`, wantMsg: "Invalid schema name format"},
		{name: "invalid utf8", status: 400, ctype: "text/plain", body: "bad \xff byte", wantMsg: "bad \uFFFD byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				}
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}, Options{Credentials: APIKey("sk-very-secret")})
			_, err := c.GetDocument(t.Context(), "doc-1")
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if e.StatusCode != tt.status || e.Message != tt.wantMsg || e.ErrorType != tt.wantType || e.RetryAfter != tt.wantRetry {
				t.Fatalf("got status=%d msg=%q type=%q retry=%v; want %d %q %q %v",
					e.StatusCode, e.Message, e.ErrorType, e.RetryAfter, tt.status, tt.wantMsg, tt.wantType, tt.wantRetry)
			}
			if e.Op != "get document" || e.Method != "GET" || e.Path != "/v3/documents/doc-1" {
				t.Fatalf("op/method/path = %q %q %q", e.Op, e.Method, e.Path)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.sentinel)
			}
			if e.Retryable() != tt.retryable {
				t.Fatalf("Retryable() = %v, want %v", e.Retryable(), tt.retryable)
			}
			want := fmt.Sprintf("R2R get document: %d %s", tt.status, tt.wantMsg)
			if err.Error() != want {
				t.Fatalf("Error() = %q, want %q", err.Error(), want)
			}
			if strings.Contains(err.Error(), "sk-very-secret") || strings.Contains(err.Error(), "127.0.0.1") {
				t.Fatalf("error leaks secret or host: %q", err.Error())
			}
			if tt.notInError != "" && strings.Contains(err.Error(), tt.notInError) {
				t.Fatalf("error contains %q: %q", tt.notInError, err.Error())
			}
		})
	}
}

func TestErrorIsMapping(t *testing.T) {
	sentinels := []error{ErrNotFound, ErrConflict, ErrUnauthorized, ErrForbidden, ErrRateLimited, ErrUnavailable}
	tests := []struct {
		err       *Error
		want      error // the only sentinel that matches; nil = none
		retryable bool
	}{
		{&Error{StatusCode: 404}, ErrNotFound, false},
		{&Error{StatusCode: 409}, ErrConflict, false},
		{&Error{StatusCode: 401}, ErrUnauthorized, false},
		{&Error{StatusCode: 403}, ErrForbidden, false},
		{&Error{StatusCode: 429}, ErrRateLimited, true},
		{&Error{StatusCode: 502}, ErrUnavailable, true},
		{&Error{StatusCode: 503}, ErrUnavailable, true},
		{&Error{StatusCode: 504}, ErrUnavailable, true},
		{&Error{Err: errors.New("connection refused")}, ErrUnavailable, true},
		{&Error{Err: context.DeadlineExceeded}, ErrUnavailable, false},
		{&Error{Err: context.Canceled}, nil, false},
		{&Error{StatusCode: 500}, nil, false},
		{&Error{StatusCode: 400}, nil, false},
		{&Error{StatusCode: 422}, nil, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%v", tt.err.StatusCode, tt.err.Err), func(t *testing.T) {
			wrapped := fmt.Errorf("tool: %w", tt.err)
			for _, s := range sentinels {
				if got := errors.Is(wrapped, s); got != (s == tt.want) {
					t.Errorf("errors.Is(%v) = %v", s, got)
				}
			}
			if tt.err.Retryable() != tt.retryable {
				t.Errorf("Retryable() = %v, want %v", tt.err.Retryable(), tt.retryable)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 11, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-3", 0},
		{"  12 ", 12 * time.Second},
		{"99999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "search", StatusCode: 500, Message: "boom"}, "R2R search: 500 boom"},
		{&Error{Op: "search", StatusCode: 418}, "R2R search: 418 I'm a teapot"},
		{&Error{Op: "search", Err: errors.New("dial tcp: refused")}, "R2R search: connection failed: dial tcp: refused"},
		{&Error{Op: "search", Err: context.Canceled}, "R2R search: context canceled"},
		{&Error{Op: "search", StatusCode: 200, Message: "unexpected response body", Err: errors.New("bad json")},
			"R2R search: 200 unexpected response body: bad json"},
		{&Error{Op: "x", Message: "plain"}, "R2R x: plain"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestTransportErrors(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c, err := New(Options{BaseURL: url, Credentials: APIKey("sk-very-secret")})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Health(t.Context())
		e, ok := errors.AsType[*Error](err)
		if !ok || e.StatusCode != 0 || e.Err == nil {
			t.Fatalf("got %#v", err)
		}
		if !errors.Is(err, ErrUnavailable) || !e.Retryable() {
			t.Fatalf("unreachable: Is(ErrUnavailable)=%v Retryable=%v", errors.Is(err, ErrUnavailable), e.Retryable())
		}
		if strings.Contains(err.Error(), "sk-very-secret") || !strings.HasPrefix(err.Error(), "R2R health: connection failed: ") {
			t.Fatalf("Error() = %q", err.Error())
		}
	})
	t.Run("cancelled and deadline", func(t *testing.T) {
		release := make(chan struct{})
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, Options{})
		t.Cleanup(func() { close(release) })

		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { _, err := c.Me(ctx); errc <- err }()
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
			t.Fatalf("cancel: %v (Is Canceled %v)", err, errors.Is(err, context.Canceled))
		}
		if e, _ := errors.AsType[*Error](err); e == nil || e.Retryable() {
			t.Fatalf("cancel must be a non-retryable *Error, got %#v", err)
		}

		ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err = c.Me(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("deadline: %v", err)
		}
	})
}
