// Package metrics holds the Prometheus metrics of serve --http: tool calls, R2R requests,
// cache lookups, the circuit breaker, rate-limit refusals and calls in flight. Nothing here
// runs unless New is called, which only the HTTP mode does: stdio builds no registry.
package metrics

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Metrics records what serve --http does. Its methods are safe for concurrent use.
type Metrics struct {
	reg          *prometheus.Registry
	toolCalls    *prometheus.CounterVec
	toolSeconds  *prometheus.HistogramVec
	inFlight     prometheus.Gauge
	rateLimited  *prometheus.CounterVec
	r2rRequests  *prometheus.CounterVec
	r2rSeconds   *prometheus.HistogramVec
	cacheLookups *prometheus.CounterVec
	redisErrors  *prometheus.CounterVec
	authChecks   *prometheus.CounterVec
}

// Latency buckets from 0.5 ms (a cache hit) to 50 s (the longest tool deadline).
var buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50}

// New builds the metrics in a registry of their own (with the Go and process
// collectors).
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok, or the error type of an isError result)."}, []string{"tool", "outcome"}),
		toolSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "r2r_mcp_tool_call_duration_seconds",
			Help: "Duration of tool calls.", Buckets: buckets}, []string{"tool"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "r2r_mcp_tool_calls_in_flight",
			Help: "Tool calls being answered now."}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_rate_limited_total",
			Help: "Tool calls refused by a rate limit (r2r-mcp's own or R2R's 429)."}, []string{"tool"}),
		r2rRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_r2r_requests_total",
			Help: "Requests to R2R by route (operation) and HTTP status (0 = not answered)."}, []string{"route", "status"}),
		r2rSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "r2r_mcp_r2r_request_duration_seconds",
			Help: "Duration of requests to R2R, retries included.", Buckets: buckets}, []string{"route"}),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_cache_lookups_total",
			Help: "Result cache lookups by layer (l1 memory, l2 redis) and result (hit, miss)."}, []string{"layer", "result"}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_redis_errors_total",
			Help: "Redis operations that failed and were answered without Redis, by operation."}, []string{"op"}),
		authChecks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "r2r_mcp_auth_checks_total",
			Help: "API key checks against R2R by result (ok, rejected, error)."}, []string{"result"}),
	}
	m.reg.MustRegister(m.toolCalls, m.toolSeconds, m.inFlight, m.rateLimited, m.r2rRequests, m.r2rSeconds,
		m.cacheLookups, m.redisErrors, m.authChecks,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// WatchBreaker reports the circuit breaker's state, read from breaker at each scrape.
func (m *Metrics) WatchBreaker(breaker func() r2r.BreakerState) {
	for _, state := range []string{"closed", "open", "half-open"} {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "r2r_mcp_breaker_state",
			Help:        "1 for the circuit breaker's current state (closed, open, half-open), 0 for the others.",
			ConstLabels: prometheus.Labels{"state": state}},
			func() float64 {
				if breaker().State == state {
					return 1
				}
				return 0
			}))
	}
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ToolMiddleware counts every tool call by outcome, times it and tracks calls in flight.
func (m *Metrics) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			m.inFlight.Inc()
			start := time.Now()
			res, err := next(ctx, req)
			m.inFlight.Dec()
			tool := req.Params.Name
			m.toolSeconds.WithLabelValues(tool).Observe(time.Since(start).Seconds())
			outcome := Outcome(res, err)
			m.toolCalls.WithLabelValues(tool, outcome).Inc()
			if outcome == "rate_limited" {
				m.rateLimited.WithLabelValues(tool).Inc()
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
	info, ok := tools.ErrorOf(res)
	switch {
	case !ok:
		return "error"
	case info.Code == tools.CodeRateLimited:
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
			status := 0
			var re *r2r.Error
			switch {
			case resp != nil:
				status = resp.StatusCode
			case errors.As(err, &re):
				status = re.StatusCode
			}
			m.r2rSeconds.WithLabelValues(call.Op).Observe(time.Since(start).Seconds())
			m.r2rRequests.WithLabelValues(call.Op, strconv.Itoa(status)).Inc()
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
	m.cacheLookups.WithLabelValues(layer, result).Inc()
}

// RedisError counts a failed Redis operation that was answered without Redis.
func (m *Metrics) RedisError(op string) { m.redisErrors.WithLabelValues(op).Inc() }

// AuthCheck counts an API key check against R2R: "ok", "rejected" or "error".
func (m *Metrics) AuthCheck(result string) { m.authChecks.WithLabelValues(result).Inc() }

// Registry returns the registry, for tests and further collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
