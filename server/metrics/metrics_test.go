package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// Scrape parses m's /metrics with Prometheus's own text parser.
func Scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, rec.Body.String())
	}
	return fams
}

func value(f *dto.MetricFamily, labels map[string]string) (float64, bool) {
	for _, m := range f.GetMetric() {
		match := true
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestExpositionParsesAndCounts(t *testing.T) {
	m := metrics.New()
	m.WatchBreaker(func() r2r.BreakerState { return r2r.BreakerState{State: "open"} })
	handler := func(res *mcp.CallToolResult, err error) func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, err }
	}
	call := func(name string, res *mcp.CallToolResult, err error) {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		_, _ = m.ToolMiddleware()(handler(res, err))(context.Background(), req)
	}
	call("r2r_search", &mcp.CallToolResult{}, nil)
	call("r2r_search", &mcp.CallToolResult{}, nil)
	call("r2r_search", toolerr.Result(toolerr.Info{Type: "rate_limited", Code: toolerr.CodeRateLimited}), nil)
	call(`we"ird\tool`+"\n", toolerr.Result(toolerr.Info{Type: "r2r_api", Code: toolerr.CodeR2RAPI}), nil)
	call("r2r_status", nil, errors.New("bug"))

	r2rCall := func(status int, err error) {
		next := func(context.Context, *r2r.Call) (*r2r.Response, error) {
			if err != nil {
				return nil, err
			}
			return &r2r.Response{StatusCode: status}, nil
		}
		_, _ = m.R2RMiddleware()(next)(context.Background(), &r2r.Call{Op: "search"})
	}
	r2rCall(200, nil)
	r2rCall(0, &r2r.Error{Op: "search", StatusCode: 502})
	r2rCall(0, &r2r.Error{Op: "search"})
	m.CacheLookup("l1", true)
	m.CacheLookup("l2", false)
	m.RedisError("get")
	m.AuthCheck("rejected")

	fams := Scrape(t, m.Handler())
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"r2r_mcp_tool_calls_total", map[string]string{"tool": "r2r_search", "outcome": "ok"}, 2},
		{"r2r_mcp_tool_calls_total", map[string]string{"tool": "r2r_search", "outcome": "rate_limited"}, 1},
		{"r2r_mcp_tool_calls_total", map[string]string{"tool": `we"ird\tool` + "\n", "outcome": "r2r_api"}, 1},
		{"r2r_mcp_tool_calls_total", map[string]string{"tool": "r2r_status", "outcome": "failed"}, 1},
		{"r2r_mcp_tool_call_duration_seconds", map[string]string{"tool": "r2r_search"}, 3},
		{"r2r_mcp_rate_limited_total", map[string]string{"tool": "r2r_search"}, 1},
		{"r2r_mcp_tool_calls_in_flight", nil, 0},
		{"r2r_mcp_r2r_requests_total", map[string]string{"route": "search", "status": "200"}, 1},
		{"r2r_mcp_r2r_requests_total", map[string]string{"route": "search", "status": "502"}, 1},
		{"r2r_mcp_r2r_requests_total", map[string]string{"route": "search", "status": "0"}, 1},
		{"r2r_mcp_r2r_request_duration_seconds", map[string]string{"route": "search"}, 3},
		{"r2r_mcp_cache_lookups_total", map[string]string{"layer": "l1", "result": "hit"}, 1},
		{"r2r_mcp_cache_lookups_total", map[string]string{"layer": "l2", "result": "miss"}, 1},
		{"r2r_mcp_redis_errors_total", map[string]string{"op": "get"}, 1},
		{"r2r_mcp_auth_checks_total", map[string]string{"result": "rejected"}, 1},
		{"r2r_mcp_breaker_state", map[string]string{"state": "open"}, 1},
		{"r2r_mcp_breaker_state", map[string]string{"state": "closed"}, 0},
	} {
		f := fams[tc.name]
		if f == nil {
			t.Errorf("no family %s", tc.name)
			continue
		}
		if got, ok := value(f, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	h := fams["r2r_mcp_tool_call_duration_seconds"].GetMetric()[0].GetHistogram()
	if n := len(h.GetBucket()); n < 10 || h.GetBucket()[n-1].GetCumulativeCount() > h.GetSampleCount() {
		t.Errorf("histogram buckets %v", h.GetBucket())
	}
	if fams["go_goroutines"] == nil {
		t.Error("no go_goroutines")
	}
}
