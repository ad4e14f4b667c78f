package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/tracing"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// receiver is an OTLP/HTTP trace endpoint in-process: it decodes every export request.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	svc   string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
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
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
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
// OTEL_EXPORTER_OTLP_ENDPOINT.
func TestSpansReachTheOTLPEndpoint(t *testing.T) {
	rc := &receiver{}
	otlp := httptest.NewServer(rc)
	t.Cleanup(otlp.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.URL)

	ctx := context.Background()
	tr, err := tracing.New(ctx, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
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
			return tools.NewErrorResult(tools.ErrorInfo{Type: "not_found", Code: tools.CodeInvalidParams, Message: err.Error()}), nil
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
	if rc.svc != "r2r-mcp" {
		t.Errorf("service.name %q", rc.svc)
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
