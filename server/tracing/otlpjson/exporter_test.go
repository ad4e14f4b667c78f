package otlpjson_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson"
	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson/otlpjsontest"
)

// An export is one POST of the JSON request with the configured headers; a refusal or a
// partial success is an error that names the status and never the headers.
func TestExportSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		answer  string
		wantErr string
	}{
		{"accepted, empty answer", http.StatusOK, "", ""},
		{"accepted, empty object", http.StatusOK, `{}`, ""},
		{"accepted, nothing rejected", http.StatusOK, `{"partialSuccess":{"rejectedSpans":"0"}}`, ""},
		{"partial success", http.StatusOK, `{"partialSuccess":{"rejectedSpans":"1","errorMessage":"span too big"}}`, "rejected 1 of 1 spans: span too big"},
		{"refused", http.StatusBadRequest, "bad\nrequest", "HTTP 400 bad request"},
		{"unavailable", http.StatusServiceUnavailable, "", "HTTP 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				req, err := otlpjsontest.Decode(body)
				if err != nil || r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
					t.Errorf("export %s %s %q: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
				} else {
					got = append(got, r.Header.Get("Authorization")+" "+req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.answer)
			}))
			t.Cleanup(srv.Close)
			exp := otlpjson.New(srv.URL+"/v1/traces", http.Header{"Authorization": {"Bearer s3cret"}}, srv.Client())
			spans := tracetest.SpanStubs{{Name: "one", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID})}}.Snapshots()
			err := exp.ExportSpans(context.Background(), spans)
			if (err == nil) != (tc.wantErr == "") || (err != nil && (!strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "s3cret"))) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if len(got) != 1 || got[0] != "Bearer s3cret one" {
				t.Errorf("received %q", got)
			}
		})
	}
}

// After Shutdown nothing is sent; an empty batch sends nothing either.
func TestExportAfterShutdown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("request sent") }))
	t.Cleanup(srv.Close)
	exp := otlpjson.New(srv.URL, nil, srv.Client())
	if err := exp.ExportSpans(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := tracetest.SpanStubs{{Name: "late"}}.Snapshots()
	if err := exp.ExportSpans(context.Background(), spans); !errors.Is(err, otlpjson.ErrShutdown) {
		t.Errorf("export after shutdown: %v", err)
	}
}
