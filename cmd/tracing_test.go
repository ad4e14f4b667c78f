package cmd

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
)

type fakeTracer struct{ shutdowns int }

func (f *fakeTracer) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc { return next }
}
func (f *fakeTracer) R2RMiddleware() r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler { return next }
}
func (f *fakeTracer) Shutdown(context.Context) error { f.shutdowns++; return nil }

// serve traces only with an OTLP endpoint in the environment, and in a build without the
// otel tag says that traces need that build instead.
func TestStartTracing(t *testing.T) {
	fake := &fakeTracer{}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		tracer  func(context.Context, string) (tracer, error)
		wantMW  bool
		wantLog string
	}{
		{"no endpoint", nil, func(context.Context, string) (tracer, error) { return fake, nil }, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			func(context.Context, string) (tracer, error) { return fake, nil }, true, "sending OpenTelemetry traces"},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
			func(context.Context, string) (tracer, error) { return fake, nil }, true, "sending OpenTelemetry traces"},
		{"built without otel", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, nil, false, "-tags otel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := newTracer
			newTracer = tc.tracer
			t.Cleanup(func() { newTracer = old })
			fake.shutdowns = 0
			var logs bytes.Buffer
			cfg := server.Config{}
			stop, err := startTracing(context.Background(), &cfg, func(k string) string { return tc.env[k] }, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			stop()
			if got := len(cfg.ToolMiddleware) == 1 && len(cfg.R2RMiddleware) == 1; got != tc.wantMW {
				t.Errorf("middleware added: %v, want %v", got, tc.wantMW)
			}
			if tc.wantMW && fake.shutdowns != 1 {
				t.Errorf("stop flushed %d times", fake.shutdowns)
			}
			if (tc.wantLog == "") != (logs.Len() == 0) || !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log: %q, want %q", logs.String(), tc.wantLog)
			}
		})
	}
}
