package tracing_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/tracing"
	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson/otlpjsontest"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// receiver is an OTLP/HTTP trace endpoint in-process: it decodes every JSON export request
// with the official OTLP messages and answers status (200 when 0).
type receiver struct {
	status int

	mu      sync.Mutex
	spans   []*tracepb.Span
	svc     string
	auth    []string
	exports int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	req, err := otlpjsontest.Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.exports++
	rc.auth = append(rc.auth, r.Header.Get("Authorization"))
	if rc.status != 0 {
		http.Error(w, "collector says no", rc.status)
		return
	}
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				rc.svc = a.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "{}")
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// Each tool call is a server span with its tool and outcome; each R2R request inside it a
// client span, its child, with the route and status. They reach the OTLP endpoint named by
// OTEL_EXPORTER_OTLP_ENDPOINT with the headers of OTEL_EXPORTER_OTLP_HEADERS, under the
// service name of OTEL_SERVICE_NAME.
func TestSpansReachTheOTLPEndpoint(t *testing.T) {
	rc := &receiver{}
	otlp := httptest.NewServer(rc)
	t.Cleanup(otlp.Close)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20s3cret",
		"OTEL_SERVICE_NAME":           "kb-gateway",
	}
	cfg, ok, err := tracing.FromEnv(func(k string) string { return env[k] })
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	cfg.ServiceVersion = "1.2.3"
	var logs bytes.Buffer
	tr, err := tracing.New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	client, err := r2r.New(r2r.Options{BaseURL: emu.URL, Middleware: []r2r.Middleware{tr.R2RMiddleware()}})
	if err != nil {
		t.Fatal(err)
	}
	handler := tr.ToolMiddleware()(func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := client.ListCollections(ctx, r2r.ListParams{Limit: 10}); err != nil {
			return nil, err
		}
		if req.Params.Name == "r2r_get_document" {
			_, err := client.GetDocument(ctx, "00000000-0000-4000-8000-000000000000")
			return toolerr.Result(toolerr.Info{Type: "not_found", Code: toolerr.CodeInvalidParams, Message: err.Error()}), nil
		}
		return mcp.NewToolResultText("ok"), nil
	})
	for _, tool := range []string{"r2r_list_collections", "r2r_get_document"} {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		if _, err := handler(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.svc != "kb-gateway" || rc.auth[0] != "Bearer s3cret" || logs.Len() != 0 {
		t.Errorf("service.name %q, Authorization %q, log %q", rc.svc, rc.auth, logs.String())
	}
	byName := map[string][]*tracepb.Span{}
	for _, s := range rc.spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for _, tc := range []struct {
		tool, outcome string
		r2r           map[string]int64 // span name → status
	}{
		{"r2r_list_collections", "ok", map[string]int64{"r2r list collections": 200}},
		{"r2r_get_document", "not_found", map[string]int64{"r2r list collections": 200, "r2r get document": 404}},
	} {
		spans := byName["tools/call "+tc.tool]
		if len(spans) != 1 {
			t.Fatalf("%s: %d tool spans; all: %v", tc.tool, len(spans), byName)
		}
		tool := spans[0]
		if tool.Kind != tracepb.Span_SPAN_KIND_SERVER || attr(tool, "gen_ai.tool.name").GetStringValue() != tc.tool ||
			attr(tool, "r2r_mcp.outcome").GetStringValue() != tc.outcome ||
			(tc.outcome == "ok") != (tool.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR) {
			t.Errorf("%s span: %v", tc.tool, tool)
		}
		for name, status := range tc.r2r {
			found := false
			for _, s := range byName[name] {
				if string(s.ParentSpanId) != string(tool.SpanId) {
					continue
				}
				found = true
				if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || attr(s, "http.response.status_code").GetIntValue() != status ||
					attr(s, "r2r_mcp.r2r.route").GetStringValue() == "" {
					t.Errorf("%s in %s: %v", name, tc.tool, s)
				}
			}
			if !found {
				t.Errorf("no %q span inside %s; all: %v", name, tc.tool, byName)
			}
		}
	}
}

// A collector that refuses the export does not fail the call: the error is logged (without
// the headers) and the span dropped. A protocol this build does not speak is warned about.
func TestExportFailureIsLoggedNotFatal(t *testing.T) {
	rc := &receiver{status: http.StatusServiceUnavailable}
	otlp := httptest.NewServer(rc)
	t.Cleanup(otlp.Close)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer%20s3cret",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
	}
	cfg, _, err := tracing.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tr, err := tracing.New(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	handler := tr.ToolMiddleware()(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	res, err := handler(context.Background(), mcp.CallToolRequest{})
	if err != nil || res.IsError {
		t.Fatalf("call failed: %v %v", res, err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := logs.String()
	if rc.exports != 1 || len(rc.spans) != 0 {
		t.Errorf("%d exports, %d spans kept", rc.exports, len(rc.spans))
	}
	for _, want := range []string{"asks for http/protobuf", "exports traces over http/json only", "traces not sent", "HTTP 503"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("log holds a header value:\n%s", out)
	}
}
