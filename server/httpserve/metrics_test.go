package httpserve_test

import (
	"io"
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

type response struct {
	status int
	body   string
}

func httpGet(url string) (response, error) {
	resp, err := http.Get(url)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: string(b)}, err
}

// scrape reads a replica's /metrics with Prometheus's own text parser.
func scrape(t testing.TB, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// sum adds a counter or gauge family's values, or a histogram's sample counts.
func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	var s float64
	for _, m := range fams[name].GetMetric() {
		switch {
		case m.Counter != nil:
			s += m.Counter.GetValue()
		case m.Gauge != nil:
			s += m.Gauge.GetValue()
		case m.Histogram != nil:
			s += float64(m.Histogram.GetSampleCount())
		}
	}
	return s
}

// After calls, /metrics parses and holds every series the README names.
func TestMetricsAfterCalls(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
	for range 3 {
		callText(t, c, "r2r_search", map[string]any{"query": "payout queue"})
	}
	callText(t, c, "r2r_search", map[string]any{"query": "x", "collection_id": "not-a-uuid"})
	fams := scrape(t, rep.URL)
	for _, name := range []string{
		"r2r_mcp_tool_calls_total", "r2r_mcp_tool_call_duration_seconds", "r2r_mcp_r2r_requests_total",
		"r2r_mcp_r2r_request_duration_seconds", "r2r_mcp_cache_lookups_total", "r2r_mcp_auth_checks_total",
	} {
		if sum(fams, name) == 0 {
			t.Errorf("%s has no samples", name)
		}
	}
	for _, name := range []string{"r2r_mcp_tool_calls_in_flight", "r2r_mcp_breaker_state"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if sum(fams, "r2r_mcp_tool_calls_total") != 4 {
		t.Errorf("tool calls %v", fams["r2r_mcp_tool_calls_total"])
	}
}
