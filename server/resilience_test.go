package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestOptionsReachTheirUse: the settings r2r_status reports are the knobs' values, and
// each package's settings reach it as they are.
func TestOptionsReachTheirUse(t *testing.T) {
	with := func(f func(*Options)) Options {
		o := DefaultOptions()
		f(&o)
		return o
	}
	tests := []struct {
		name  string
		opts  Options
		want  map[string]string
		check func(*Server) bool
	}{
		{name: "defaults", opts: DefaultOptions(), want: map[string]string{
			"cache_size": "16MiB", "cache_ttl_search": "5m0s", "cache_ttl_rag": "2m0s", "cache_ttl_list": "1m0s",
			"retry_max": "3", "retry_wait": "200ms", "breaker_failures": "5", "breaker_cooldown": "1m0s",
			"breaker_successes": "2", "rate_limit": "10", "rate_burst": "20", "rag_rate_limit": "2", "rag_rate_burst": "5",
			"timeout_search": "20s", "timeout_rag": "45s", "timeout": "15s", "max_inflight": "64", "max_request_bytes": "4MiB",
			"http": "off (stdio)",
		}, check: func(s *Server) bool {
			return s.Cache.Stats().MaxBytes == 16<<20 && s.Deps.SearchTimeout == 20*time.Second && s.Deps.RateBurst == 20 &&
				s.Breaker.Settings().Failures == 5 && s.Deps.Status.Config()["auth_mode"] == ""
		}},
		{name: "zero switches off", opts: with(func(o *Options) {
			o.Cache.MaxBytes, o.Cache.TTLRAG, o.Retry.MaxRetries, o.Tools.RateLimit, o.Tools.RAGRateLimit = 0, 0, 0, 0, 0
		}),
			want: map[string]string{"cache_size": "off", "cache_ttl_rag": "off", "cache_ttl_search": "5m0s", "retry_max": "0",
				"rate_limit": "off", "rag_rate_limit": "off"},
			check: func(s *Server) bool { return s.Cache == nil && s.Deps.Cache == nil && s.Deps.RateLimit == 0 }},
		{name: "set", opts: with(func(o *Options) {
			o.Cache.MaxBytes, o.Breaker.Failures, o.Breaker.Cooldown, o.Breaker.HalfOpenSuccesses = 3<<29, 2, time.Second, 1
			o.Tools.RateLimit, o.Tools.RateBurst, o.Tools.SearchTimeout, o.Tools.CallTimeout = 0.5, 1, 2*time.Second, time.Second
		}),
			want: map[string]string{"cache_size": "1.5GiB", "breaker_failures": "2", "breaker_cooldown": "1s",
				"breaker_successes": "1", "rate_limit": "0.5", "rate_burst": "1", "rag_rate_limit": "2",
				"timeout_search": "2s", "timeout": "1s"},
			check: func(s *Server) bool {
				return s.Deps.CallTimeout == time.Second && s.Breaker.Settings().Failures == 2 && s.Cache.Stats().MaxBytes == 3<<29
			}},
		{name: "http", opts: with(func(o *Options) {
			o.HTTP.Addr, o.HTTP.RedisURL = "127.0.0.1:8080", "redis://:secret@redis.internal:6379/0"
		}),
			want: map[string]string{"http": "127.0.0.1:8080", "auth_mode": "user", "key_ttl": "1m0s", "redis_url": "redis.internal:6379",
				"allowed_hosts": "loopback"},
			check: func(s *Server) bool { return !strings.Contains(fmt.Sprint(s.Deps.Status.Config()), "secret") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{R2RURL: "http://127.0.0.1:1", WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: tt.opts}
			s, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := s.Deps.Status.Config()
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if !tt.check(s) {
				t.Errorf("server %+v; settings %v", s.Deps.Config, got)
			}
		})
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
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user gave up"}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Cancelled() == 1 }, "R2R to see the request abandoned")

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

// holdCancelled is an Observer whose tool middleware keeps the first call whose context
// ended from returning until release is closed: the point where a cancelled call has
// finished its work and mcp-go has not yet seen it return. ended is closed when the call
// gets there.
type holdCancelled struct {
	once    sync.Once
	ended   chan struct{}
	release chan struct{}
}

func (h *holdCancelled) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := next(ctx, req)
			if ctx.Err() != nil {
				h.once.Do(func() {
					close(h.ended)
					<-h.release
				})
			}
			return res, err
		}
	}
}

func (h *holdCancelled) R2RMiddleware() r2r.Middleware { return nil }

// TestCancelledCallReturningLate: a call the client cancelled is its cancellation however
// late its handler returns. The client cancels a call while R2R is slow and, once R2R saw
// the request abandoned, calls the same tool with the same arguments; the cancelled call
// returns only after that answer, and after the shutdown began where the case has one.
// It is logged as cancelled and gets no response; the next call gets its own fresh answer
// (nothing of the cancelled call was cached); and the cancelled call's in-flight slot is
// given back.
func TestCancelledCallReturningLate(t *testing.T) {
	tests := []struct {
		name     string
		shutdown func(c *pipeConn, stop context.CancelFunc) // before the cancelled call returns; nil = none
	}{
		{name: "returns before the shutdown"},
		{name: "returns after a signal", shutdown: func(_ *pipeConn, stop context.CancelFunc) { stop() }},
		{name: "returns after stdin closed", shutdown: func(c *pipeConn, _ context.CancelFunc) { c.in.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emu := r2rtest.NewServer(t, r2rtest.Options{Latency: time.Minute})
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			logs := &r2rtest.SyncBuffer{}
			hold := &holdCancelled{ended: make(chan struct{}), release: make(chan struct{})}
			opts := DefaultOptions()
			opts.MaxInflight = 2
			c, stdin, stdout := newPipeConn()
			done := make(chan error, 1)
			go func() {
				done <- Run(ctx, Config{R2RURL: emu.URL, Stderr: logs, WorkDir: t.TempDir(), ConfigDir: t.TempDir(),
					Options: opts, Tracing: hold}, stdin, stdout)
			}()
			c.send(t, initLine)
			c.recv(t)
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			c.send(t, listCall(`"slow-1"`))
			r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user gave up"}}`)
			r2rtest.Await(t, emu.Changed, func() bool { return emu.Cancelled() == 1 }, "R2R to see the request abandoned")
			<-hold.ended

			emu.Configure(func(o *r2rtest.Options) { o.Latency = 0 })
			c.send(t, listCall("2"))
			m := c.recv(t)
			res, _ := m["result"].(map[string]any)
			sc, _ := res["structuredContent"].(map[string]any)
			if m["id"] != 2.0 || res["isError"] == true || sc["cached"] != false || sc["total"] == nil {
				t.Fatalf("the call after the cancelled one: %v", m)
			}

			var out []map[string]any
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				for c.out.Scan() {
					var m map[string]any
					if json.Unmarshal(c.out.Bytes(), &m) == nil {
						out = append(out, m)
					}
				}
			}()
			if tt.shutdown != nil {
				tt.shutdown(c, stop)
				r2rtest.Await(t, logs.Changed, func() bool { return strings.Contains(logs.String(), "shutting down") }, "the shutdown")
			}
			close(hold.release)
			if tt.shutdown == nil {
				r2rtest.Await(t, logs.Changed, func() bool { return strings.Contains(logs.String(), cancelledLine) },
					"the cancelled call's log line")
				// Both slots are free again: two slow calls (of different pages, so they share
				// no load) both reach R2R, neither is turned away.
				emu.Configure(func(o *r2rtest.Options) { o.Latency = time.Minute })
				c.send(t, listCallWith("3", `{"limit":5}`))
				c.send(t, listCallWith("4", `{"limit":6}`))
				r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 4 }, "both calls to reach R2R")
				stop()
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			stdout.(interface{ Close() error }).Close()
			<-drained
			if !slices.ContainsFunc(strings.Split(logs.String(), "\n"), func(l string) bool {
				return strings.Contains(l, cancelledLine) && strings.Contains(l, `id="\"slow-1\""`)
			}) {
				t.Errorf("the cancelled call was not logged as cancelled:\n%s", logs.String())
			}
			for _, m := range out {
				if m["id"] == "slow-1" {
					t.Errorf("a response was written for the cancelled call: %v", m)
				}
				if res, _ := m["result"].(map[string]any); res != nil && res["isError"] == true &&
					strings.Contains(jsonText(m), "busy") {
					t.Errorf("a call was turned away as busy: %v", m)
				}
			}
		})
	}
}

// TestCancelCauseIsWhatEndedTheCall: a call is the client's cancellation when its context
// ended before the shutdown began, however late its handler returns; a call cut short by
// the shutdown keeps its answer.
func TestCancelCauseIsWhatEndedTheCall(t *testing.T) {
	tests := []struct {
		name                      string
		cancelled, stop, cutShort bool // cancelled before the shutdown; shutdown began; cancelled by it
		want                      bool
	}{
		{name: "cancelled, returns before the shutdown", cancelled: true, want: true},
		{name: "cancelled, returns after the shutdown began", cancelled: true, stop: true, want: true},
		{name: "cut short by the shutdown", stop: true, cutShort: true},
		{name: "answered during the shutdown", stop: true},
		{name: "answered", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc := newCancelledCalls(nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc.beforeCallTool(ctx, float64(7), nil)
			if tt.cancelled {
				cancel()
			}
			if tt.stop {
				cc.stop()
			}
			if tt.cutShort {
				cancel()
			}
			cc.afterCallTool(ctx, float64(7), nil, nil)
			if got := cc.take("7"); got != tt.want {
				t.Errorf("treated as the client's cancellation: %v, want %v", got, tt.want)
			}
			if len(cc.running) != 0 {
				t.Errorf("%d calls still followed after the last returned", len(cc.running))
			}
		})
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
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
	c.in.Close()
	m := c.recv(t)
	if res, _ := m["result"].(map[string]any); m["id"] != 5.0 || res["isError"] != true {
		t.Fatalf("answer at shutdown: %v", m)
	}
	<-done
}

// cancelledLine starts the log line of a call the client cancelled.
const cancelledLine = "tool call cancelled before it answered"

func listCall(id string) string { return listCallWith(id, `{}`) }

func listCallWith(id, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":` + args + `}}`
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
