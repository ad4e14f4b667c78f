package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// flippingR2R is the emulator behind a switch: while down, every request gets 503.
type flippingR2R struct {
	URL  string
	down atomic.Bool
}

func newFlippingR2R(t *testing.T) *flippingR2R {
	emu := r2rtest.New(r2rtest.Options{})
	f := &flippingR2R{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		emu.ServeHTTP(w, r)
	}))
	f.URL = srv.URL
	t.Cleanup(func() { srv.Close(); emu.Close() })
	return f
}

func callText(t *testing.T, c *pipeConn, id int, call string) (text string, isError bool) {
	t.Helper()
	c.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/call","params":{"name":`+call+`}}`)
	res, _ := c.recv(t)["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	return text, res["isError"] == true
}

// TestBreakerEndsWithHealthyStatus: with R2R back, r2r_status's successful health check
// ends the open breaker (an hour's cooldown notwithstanding): the status shows it closed,
// never "healthy" beside "paused", and the next call succeeds.
func TestBreakerEndsWithHealthyStatus(t *testing.T) {
	r2r := newFlippingR2R(t)
	cfg := overloadConfig(t, r2r.URL)
	cfg.Options.Breaker.Failures, cfg.Options.Breaker.Cooldown = 1, time.Hour
	cfg.Options.Tools.CallTimeout, cfg.Options.Tools.SearchTimeout = DefaultOptions().Tools.CallTimeout, DefaultOptions().Tools.SearchTimeout
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)

	r2r.down.Store(true)
	if _, isErr := callText(t, c, 2, `"r2r_list_collections","arguments":{}`); !isErr {
		t.Fatal("a call to a failing R2R succeeded")
	}
	if text, _ := callText(t, c, 3, `"r2r_list_collections","arguments":{}`); !strings.Contains(text, "paused") && !strings.Contains(text, "breaker") {
		t.Fatalf("with the breaker open: %q", text)
	}
	r2r.down.Store(false)
	text, _ := callText(t, c, 4, `"r2r_status","arguments":{}`)
	if !strings.Contains(text, "healthy") || strings.Contains(text, "open (") || strings.Contains(text, "paused") {
		t.Fatalf("status after R2R came back:\n%s", text)
	}
	if text, isErr := callText(t, c, 5, `"r2r_list_collections","arguments":{}`); isErr {
		t.Fatalf("the first call after a passing health check failed: %s", text)
	}
}
