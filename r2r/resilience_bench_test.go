package r2r

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkBreakerOpenReject measures how fast an open breaker turns a call away.
func BenchmarkBreakerOpenReject(b *testing.B) {
	br := NewBreaker("http://r2r.bench:7272", BreakerSettings{Cooldown: time.Hour}, nil)
	down := func(context.Context, *Call) (*Response, error) {
		return nil, &Error{StatusCode: http.StatusBadGateway}
	}
	h := br.Middleware()(down)
	call := &Call{Op: "search", Method: http.MethodPost, Path: "/v3/retrieval/search", Idempotent: true}
	ctx := context.Background()
	for range DefaultBreakerFailures {
		_, _ = h(ctx, call)
	}
	if br.State().State != "open" {
		b.Fatal("breaker did not open")
	}
	check := func(err error) {
		if !errors.Is(err, ErrCircuitOpen) {
			b.Fatalf("err = %v", err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, err := h(ctx, call)
			check(err)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, err := h(ctx, call)
				check(err)
			}
		})
	})
	// Through the whole Resilient chain: the open breaker rejects before Retry runs.
	chain := br.Middleware()(Retry(RetryPolicy{MaxRetries: 3}, nil)(down))
	b.Run("with retry", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, err := chain(ctx, call)
			check(err)
		}
	})
}

// BenchmarkResilientSearchOverhead compares a search through the plain client with one
// through Resilient (retry + breaker) against a local server that always answers.
func BenchmarkResilientSearchOverhead(b *testing.B) {
	body := `{"results":{"chunk_search_results":[{"id":"c1","document_id":"d1","text":"settlement batches close at 18:00 UTC","score":0.9}]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	for _, bc := range []struct {
		name string
		mw   []Middleware
	}{
		{"plain", nil},
		{"resilient", Resilient(ResilienceOptions{Retry: RetryPolicy{MaxRetries: 3}, Breaker: NewBreaker(srv.URL, BreakerSettings{}, nil)})},
	} {
		c, err := New(Options{BaseURL: srv.URL, Middleware: bc.mw})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Search(context.Background(), SearchRequest{Query: "settlement"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBreakerMiddlewareClosed isolates the cost the breaker adds to a successful call.
func BenchmarkBreakerMiddlewareClosed(b *testing.B) {
	ok := &Response{StatusCode: http.StatusOK}
	next := func(context.Context, *Call) (*Response, error) { return ok, nil }
	call := &Call{Op: "search", Method: http.MethodPost, Path: "/v3/retrieval/search", Idempotent: true}
	for _, bc := range []struct {
		name string
		h    Handler
	}{
		{"bare", next},
		{"resilient", NewBreaker("http://r2r.bench:7272", BreakerSettings{}, nil).Middleware()(Retry(RetryPolicy{MaxRetries: 3}, nil)(next))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.h(context.Background(), call); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
