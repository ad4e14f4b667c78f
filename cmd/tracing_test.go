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
	"github.com/r2r-mcp/r2r-mcp/server/tracing"
)

type fakeTracer struct{ shutdowns int }

func (f *fakeTracer) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc { return next }
}
func (f *fakeTracer) R2RMiddleware() r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler { return next }
}
func (f *fakeTracer) Shutdown(context.Context) error { f.shutdowns++; return nil }

// serve constructs a tracer only with an OTLP endpoint in the environment, hands it the
// endpoint and its version, and refuses to start on a malformed OTLP setting without
// quoting a header value.
func TestStartTracing(t *testing.T) {
	for _, tc := range []struct {
		name         string
		env          map[string]string
		wantEndpoint string // "" = no tracer constructed
		wantErr      string
		wantLog      string
	}{
		{name: "no endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "broken"}},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			wantEndpoint: "http://127.0.0.1:4318/v1/traces", wantLog: "sending OpenTelemetry traces"},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/custom"},
			wantEndpoint: "http://127.0.0.1:4318/custom", wantLog: "sending OpenTelemetry traces"},
		{name: "bad headers", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%zzsecret"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "bad endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"}, wantErr: "not an http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeTracer{}
			var got *tracing.Config
			old := newTracer
			newTracer = func(cfg tracing.Config, _ *slog.Logger) (tracer, error) { got = &cfg; return fake, nil }
			t.Cleanup(func() { newTracer = old })
			var logs bytes.Buffer
			cfg := server.Config{Version: "1.2.3"}
			stop, err := startTracing(context.Background(), &cfg, func(k string) string { return tc.env[k] }, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
					t.Fatalf("error %v, want one naming %q and no header value", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			stop()
			if tc.wantEndpoint == "" {
				if got != nil || cfg.Tracing != nil || logs.Len() != 0 {
					t.Errorf("tracing set up without an endpoint: %v, log %q", got, logs.String())
				}
				return
			}
			if got == nil || got.Endpoint != tc.wantEndpoint || got.ServiceVersion != "1.2.3" {
				t.Fatalf("tracer config %+v, want endpoint %s, version 1.2.3", got, tc.wantEndpoint)
			}
			if cfg.Tracing != fake || fake.shutdowns != 1 {
				t.Errorf("tracing %v, flushed %d times", cfg.Tracing, fake.shutdowns)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %q, want %q", logs.String(), tc.wantLog)
			}
		})
	}
}
