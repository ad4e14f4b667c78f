package server

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

func TestOptionsResilience(t *testing.T) {
	with := func(f func(*Options)) Options {
		o := DefaultOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name  string
		opts  Options
		want  map[string]string
		check func(resilience) bool
	}{
		{name: "defaults", opts: DefaultOptions(), want: map[string]string{
			"cache_size": "16MiB", "cache_ttl_search": "5m0s", "cache_ttl_rag": "2m0s", "cache_ttl_list": "1m0s",
			"retry_max": "3", "retry_wait": "200ms", "breaker_failures": "5", "breaker_cooldown": "1m0s",
			"breaker_successes": "2", "rate_limit": "10/s burst 20", "rag_rate_limit": "2/s burst 5",
			"timeout_search": "20s", "timeout_rag": "45s", "timeout": "15s",
		}, check: func(r resilience) bool {
			return r.cacheSize == cache.DefaultMaxBytes && r.limits.For("") == tools.DefaultRateLimit &&
				r.limits.For(tools.RateLLM) == tools.DefaultRAGRateLimit && r.retry.MaxRetries == 3
		}},
		{name: "zero switches off", opts: with(func(o *Options) {
			o.CacheSize, o.CacheTTLRAG, o.RetryMax, o.RateLimit, o.RAGRateLimit = 0, 0, 0, 0, 0
		}),
			want: map[string]string{"cache_size": "off", "cache_ttl_rag": "off", "cache_ttl_search": "5m0s", "retry_max": "0",
				"rate_limit": "off", "rag_rate_limit": "off"},
			check: func(r resilience) bool {
				return r.cacheSize == 0 && r.ttlRAG == 0 && r.retry.MaxRetries < 0 && r.limits.For("").Rate == 0 && r.limits.For(tools.RateLLM).Rate == 0
			}},
		{name: "set", opts: with(func(o *Options) {
			o.CacheSize, o.BreakerFailures, o.BreakerCooldown, o.BreakerSuccesses = 3<<29, 2, time.Second, 1
			o.RateLimit, o.RateBurst, o.TimeoutSearch, o.Timeout = 0.5, 1, 2*time.Second, time.Second
		}),
			want: map[string]string{"cache_size": "1.5GiB", "breaker_failures": "2", "breaker_cooldown": "1s",
				"breaker_successes": "1", "rate_limit": "0.5/s burst 1", "rag_rate_limit": "2/s burst 5",
				"timeout_search": "2s", "timeout": "1s"},
			check: func(r resilience) bool { return r.timeoutOther == time.Second && r.breaker.Failures == 2 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{R2RURL: "http://127.0.0.1:1", WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: tt.opts}
			s, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := s.Deps.Status.Config
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if !tt.check(tt.opts.resilience()) {
				t.Errorf("resilience = %+v", tt.opts.resilience())
			}
			if (s.Cache == nil) != (tt.opts.CacheSize == 0) || (s.Deps.Cache == nil) != (s.Cache == nil) {
				t.Errorf("cache %v / deps cache %v", s.Cache, s.Deps.Cache)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0B", 512: "512B", 64 << 20: "64MiB", 3 << 29: "1.5GiB", 100_000_000: "95.37MiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestCancelledCallGetsNoResponse runs the server in-process: a client's
// notifications/cancelled aborts the slow R2R request (the emulator sees the client go
// away), no response is written for the cancelled id (MCP spec), and the server keeps
// serving.
func TestCancelledCallGetsNoResponse(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{Latency: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &r2rtest.SyncBuffer{}
	c, done := runInProcess(ctx, Config{R2RURL: emu.URL, Stderr: logs, WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: DefaultOptions()})
	c.send(t, initLine)
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	waitUntil(t, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user gave up"}}`)
	waitUntil(t, func() bool { return emu.Cancelled() == 1 }, "R2R to see the request abandoned")

	emu.Configure(func(o *r2rtest.Options) { o.Latency = 0 })
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	for seen := 0; seen < 2; {
		m := c.recv(t)
		switch m["id"] {
		case "slow-1":
			t.Fatalf("a response was written for the cancelled call: %v", m)
		case 2.0:
			if res, _ := m["result"].(map[string]any); res == nil || res["isError"] == true {
				t.Fatalf("the call after the cancellation failed: %v", m)
			}
			seen++
		case 3.0:
			seen++
		}
	}
	cancel()
	<-done
	if !strings.Contains(logs.String(), "tool call cancelled before it answered") {
		t.Errorf("no log line for the cancelled call:\n%s", logs.String())
	}
}

func TestCancelFilterPassesEverythingElse(t *testing.T) {
	cc := newCancelledCalls(nil)
	var out bytes.Buffer
	w := cc.filter(&out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cc.afterCallTool(ctx, float64(7), nil, nil)
	cc.afterCallTool(context.Background(), float64(8), nil, nil) // not cancelled
	lines := []string{
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"id":7}}`,
		`{"jsonrpc":"2.0","id":8,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`, // dropped
		`{"jsonrpc":"2.0","id":7,"result":{}}`,             // a later reuse of the id passes
	}
	for _, l := range lines {
		if n, err := w.Write([]byte(l + "\n")); err != nil || n != len(l)+1 {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	want := lines[0] + "\n" + lines[1] + "\n" + lines[3] + "\n"
	if out.String() != want {
		t.Fatalf("passed:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestShutdownKeepsAnswers: calls cut short because stdin closed are not the client's
// cancellation; they still get their (cancelled) answer.
func TestShutdownKeepsAnswers(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{Latency: time.Minute})
	c, done := runInProcess(context.Background(), Config{R2RURL: emu.URL, WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: DefaultOptions()})
	c.send(t, initLine)
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	waitUntil(t, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
	c.in.Close()
	m := c.recv(t)
	if res, _ := m["result"].(map[string]any); m["id"] != 5.0 || res["isError"] != true {
		t.Fatalf("answer at shutdown: %v", m)
	}
	<-done
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
