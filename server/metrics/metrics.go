// Package metrics holds the Prometheus metrics of serve --http: tool calls, R2R requests,
// cache lookups, the circuit breaker, rate-limit refusals and calls in flight, served in
// Prometheus's text format. The package has no init work; only the HTTP mode calls New.
//
// It writes the text format itself rather than use Prometheus's client_golang: importing
// client_golang/prometheus (its default registry registers Go and process collectors at
// init, with procfs and protobuf) adds about 1 ms of package initialisation and 2 MB to
// every start of the binary, stdio included. metrics_test.go checks the output with
// Prometheus's own text parser.
package metrics

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// Metrics records what serve --http does. Its methods are safe for concurrent use.
type Metrics struct {
	toolCalls    counterVec
	toolSeconds  histogramVec
	inFlight     atomic.Int64
	rateLimited  counterVec
	r2rRequests  counterVec
	r2rSeconds   histogramVec
	cacheLookups counterVec
	redisErrors  counterVec
	authChecks   counterVec
	breaker      atomic.Pointer[func() r2r.BreakerState]
	fams         []family
}

// Latency buckets from 0.5 ms (a cache hit) to 50 s (the longest tool deadline).
var buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50}

// New builds the metrics.
func New() *Metrics {
	m := &Metrics{
		toolCalls: newCounterVec("r2r_mcp_tool_calls_total",
			"Tool calls by tool and outcome (ok, or the error type of an isError result).", "tool", "outcome"),
		toolSeconds: newHistogramVec("r2r_mcp_tool_call_duration_seconds", "Duration of tool calls.", buckets, "tool"),
		rateLimited: newCounterVec("r2r_mcp_rate_limited_total",
			"Tool calls refused by a rate limit (r2r-mcp's own or R2R's 429).", "tool"),
		r2rRequests: newCounterVec("r2r_mcp_r2r_requests_total",
			"Requests to R2R by route (operation) and HTTP status (0 = not answered).", "route", "status"),
		r2rSeconds: newHistogramVec("r2r_mcp_r2r_request_duration_seconds",
			"Duration of requests to R2R, retries included.", buckets, "route"),
		cacheLookups: newCounterVec("r2r_mcp_cache_lookups_total",
			"Result cache lookups by layer (l1 memory, l2 redis) and result (hit, miss).", "layer", "result"),
		redisErrors: newCounterVec("r2r_mcp_redis_errors_total",
			"Redis operations that failed and were answered without Redis, by operation.", "op"),
		authChecks: newCounterVec("r2r_mcp_auth_checks_total",
			"API key checks against R2R by result (ok, rejected, error).", "result"),
	}
	inFlight := gaugeFunc{name: "r2r_mcp_tool_calls_in_flight", help: "Tool calls being answered now.",
		read: func() []sample { return []sample{{value: float64(m.inFlight.Load())}} }}
	breaker := gaugeFunc{name: "r2r_mcp_breaker_state",
		help: "1 for the circuit breaker's current state (closed, open, half-open), 0 for the others.",
		read: m.breakerSamples}
	m.fams = []family{m.toolCalls, m.toolSeconds, inFlight, m.rateLimited, m.r2rRequests, m.r2rSeconds,
		m.cacheLookups, m.redisErrors, m.authChecks, breaker, goroutines, heapBytes}
	return m
}

// WatchBreaker reports the circuit breaker's state, read from breaker at each scrape.
func (m *Metrics) WatchBreaker(breaker func() r2r.BreakerState) { m.breaker.Store(&breaker) }

func (m *Metrics) breakerSamples() []sample {
	f := m.breaker.Load()
	if f == nil {
		return nil
	}
	cur := (*f)().State
	var out []sample
	for _, state := range []string{"closed", "half-open", "open"} {
		v := 0.0
		if cur == state {
			v = 1
		}
		out = append(out, sample{labels: `state="` + state + `"`, value: v})
	}
	return out
}

// Go runtime gauges, read at scrape time.
var (
	goroutines = gaugeFunc{name: "go_goroutines", help: "Number of goroutines that currently exist.",
		read: func() []sample { return []sample{{value: float64(runtime.NumGoroutine())}} }}
	heapBytes = gaugeFunc{name: "go_heap_objects_bytes", help: "Bytes of memory occupied by live and not yet swept heap objects.",
		read: func() []sample {
			// HeapAlloc is runtime/metrics' /memory/classes/heap/objects:bytes; importing
			// runtime/metrics would cost every start of the binary its package
			// initialisation (0.14 ms), and a scrape can afford ReadMemStats' short pause.
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return []sample{{value: float64(ms.HeapAlloc)}}
		}}
)

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = writeFamilies(w, m.fams)
	})
}

// ToolMiddleware counts every tool call by outcome, times it and tracks calls in flight.
func (m *Metrics) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m.inFlight.Add(1)
			start := time.Now()
			res, err := next(ctx, req)
			m.inFlight.Add(-1)
			tool := req.Params.Name
			m.toolSeconds.with(tool).observe(time.Since(start).Seconds())
			outcome := Outcome(res, err)
			m.toolCalls.with(tool, outcome).inc()
			if outcome == "rate_limited" {
				m.rateLimited.with(tool).inc()
			}
			return res, err
		}
	}
}

// Outcome classifies a tool call's answer: "ok", "rate_limited", the error type of an
// isError result (its _meta error type), "error" for one without it, "failed" for a Go
// error (a protocol error for the client).
func Outcome(res *mcp.CallToolResult, err error) string {
	switch {
	case err != nil:
		return "failed"
	case res == nil || !res.IsError:
		return "ok"
	}
	info, ok := toolerr.Of(res)
	switch {
	case !ok:
		return "error"
	case info.Code == toolerr.CodeRateLimited:
		return "rate_limited"
	case info.Type != "":
		return info.Type
	}
	return "error"
}

// R2RMiddleware counts and times every R2R request (a logical call, retries included) by
// its operation and final status.
func (m *Metrics) R2RMiddleware() r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, call *r2r.Call) (*r2r.Response, error) {
			start := time.Now()
			resp, err := next(ctx, call)
			status := r2r.StatusOf(resp, err)
			m.r2rSeconds.with(call.Op).observe(time.Since(start).Seconds())
			m.r2rRequests.with(call.Op, strconv.Itoa(status)).inc()
			return resp, err
		}
	}
}

// CacheLookup counts one lookup of the result cache in layer ("l1", "l2").
func (m *Metrics) CacheLookup(layer string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cacheLookups.with(layer, result).inc()
}

// RedisError counts a failed Redis operation that was answered without Redis.
func (m *Metrics) RedisError(op string) { m.redisErrors.with(op).inc() }

// AuthCheck counts an API key check against R2R: "ok", "rejected" or "error".
func (m *Metrics) AuthCheck(result string) { m.authChecks.with(result).inc() }

// Cache counts the lookups of an in-process cache c (layer l1); a cache with a Redis layer
// counts its own.
func (m *Metrics) Cache(c tools.Cache) tools.Cache { return countedCache{Cache: c, m: m} }

type countedCache struct {
	tools.Cache
	m *Metrics
}

func (c countedCache) GetOrLoad(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error)) (any, bool, error) {
	v, hit, err := c.Cache.GetOrLoad(ctx, kind, key, load)
	if err == nil || hit {
		c.m.CacheLookup("l1", hit)
	}
	return v, hit, err
}
