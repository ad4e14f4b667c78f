package r2r

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func failingHandler(context.Context, *Call) (*Response, error) {
	return nil, &Error{Op: "x", StatusCode: http.StatusServiceUnavailable}
}

func okHandler(context.Context, *Call) (*Response, error) { return &Response{StatusCode: 200}, nil }

func TestBreakerHealthy(t *testing.T) {
	b := NewBreaker("http://r2r", BreakerSettings{Failures: 1, Cooldown: time.Hour}, nil)
	call := &Call{Op: "x"}
	if _, err := b.Middleware()(failingHandler)(context.Background(), call); err == nil {
		t.Fatal("failure not passed on")
	}
	if _, err := b.Middleware()(okHandler)(context.Background(), call); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("after one failure: %v, want the breaker open", err)
	}
	// A successful call through the health client ends it.
	if _, err := b.HealthProbe()(okHandler)(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	st := b.State()
	if st.State != "closed" || st.Transitions[len(st.Transitions)-1].To != "closed" {
		t.Fatalf("after a passing health check: %+v", st)
	}
	if _, err := b.Middleware()(okHandler)(context.Background(), call); err != nil {
		t.Fatalf("first call after the health check: %v", err)
	}
	b.Healthy() // closed: nothing changes
	if n := len(b.State().Transitions); n != len(st.Transitions) {
		t.Errorf("Healthy on a closed breaker recorded a transition")
	}
}

func TestBreakerOwnProbe(t *testing.T) {
	logs := make(logLines, 10)
	b := NewBreaker("http://r2r", BreakerSettings{Failures: 1, Cooldown: time.Hour}, slog.New(slog.NewTextHandler(logs, nil)))
	probed := make(chan struct{}, 10)
	b.SetProbe(func(context.Context) error { probed <- struct{}{}; return nil })
	call := &Call{Op: "x"}
	_, _ = b.Middleware()(failingHandler)(context.Background(), call)
	if _, err := b.Middleware()(okHandler)(context.Background(), call); !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("want the breaker open, got %v", err)
	}
	<-probed // the rejected call started the probe
	// The breaker logs "closed" once the probe's goroutine closed it.
	for line := ""; !strings.Contains(line, "r2r circuit breaker closed"); {
		select {
		case line = <-logs:
		case <-time.After(10 * time.Second):
			t.Fatalf("the passing probe did not close the breaker: %s", b.State())
		}
	}
	if _, err := b.Middleware()(okHandler)(context.Background(), call); err != nil {
		t.Fatalf("after the breaker's own probe passed: %v", err)
	}
}

// logLines receives each record a slog text handler writes.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}
