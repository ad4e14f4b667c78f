package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/tracing"
)

// tracer is what serve uses of an OpenTelemetry tracer (server/tracing.Tracer).
type tracer interface {
	ToolMiddleware() mcpserver.ToolHandlerMiddleware
	R2RMiddleware() r2r.Middleware
	Shutdown(ctx context.Context) error
}

// newTracer starts exporting spans as cfg says; tests replace it.
var newTracer = func(cfg tracing.Config, logger *slog.Logger) (tracer, error) {
	return tracing.New(cfg, logger)
}

// tracingShutdownGrace bounds the flush of buffered spans when serve ends.
const tracingShutdownGrace = 5 * time.Second

// startTracing adds OpenTelemetry spans of tool calls and R2R requests to cfg when
// getenv names an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); stop flushes them. Without one it constructs nothing.
func startTracing(ctx context.Context, cfg *server.Config, getenv func(string) string, logger *slog.Logger) (stop func(), err error) {
	tc, ok, err := tracing.FromEnv(getenv)
	if !ok {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	tc.ServiceVersion = cfg.Version
	t, err := newTracer(tc, logger)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	cfg.Tracing = t
	logger.Info("sending OpenTelemetry traces over OTLP/HTTP (http/json)", "endpoint", tc.RedactedEndpoint())
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownGrace)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			logger.Warn("OpenTelemetry traces not all sent", "error", err)
		}
	}, nil
}
