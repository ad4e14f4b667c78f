package r2r

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestBodyBudgetRead(t *testing.T) {
	tests := []struct {
		name          string
		body          string
		length, limit int64
		budget        int64
		want          error
	}{
		{"known length", "hello", 5, 10, 100, nil},
		{"unknown length", strings.Repeat("x", 100<<10), -1, 1 << 20, 1 << 20, nil},
		{"exactly the limit", "12345", -1, 5, 100, nil},
		{"announced too long", "123456", 6, 5, 100, errBodyTooLarge},
		{"streamed too long", strings.Repeat("x", 100<<10), -1, 64 << 10, 1 << 20, errBodyTooLarge},
		{"lying length", strings.Repeat("x", 100), 10, 50, 1000, errBodyTooLarge},
		{"budget too small", strings.Repeat("x", 100<<10), -1, 1 << 20, 40 << 10, ErrBodyBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBodyBudget(tt.budget)
			got, err := b.read(strings.NewReader(tt.body), tt.length, tt.limit)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && string(got) != tt.body {
				t.Errorf("read %d bytes, want %d", len(got), len(tt.body))
			}
			if !b.sem.TryAcquire(b.Size()) {
				t.Error("the budget was not given back")
			}
		})
	}
}

// endless is a body that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestBodyBudgetSharedByConcurrentCalls: many calls whose answers are endless bodies hold
// no more than the shared budget at once, all fail, and the budget is whole afterwards.
func TestBodyBudgetSharedByConcurrentCalls(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, io.LimitReader(endless{}, 64<<20))
	}))
	defer srv.Close()
	budget := NewBodyBudget(4 << 20)
	c, err := New(Options{BaseURL: srv.URL, MaxResponseBytes: 2 << 20, BodyBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	kinds := map[string]int{}
	for range 20 {
		wg.Go(func() {
			_, err := c.ListCollections(context.Background(), ListParams{})
			k := "other: " + errString(err)
			switch {
			case errors.Is(err, ErrBodyBudget):
				k = "budget"
			case errors.Is(err, ErrResponseTooLarge):
				k = "too large"
			}
			mu.Lock()
			kinds[k]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if kinds["budget"]+kinds["too large"] != 20 {
		t.Errorf("outcomes = %v, want every call refused as too large or over budget", kinds)
	}
	if !budget.sem.TryAcquire(budget.Size()) {
		t.Error("the budget was not given back")
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
