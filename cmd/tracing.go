package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// tracer is what serve uses of an OpenTelemetry tracer (server/tracing.Tracer).
type tracer interface {
	ToolMiddleware() mcpserver.ToolHandlerMiddleware
	R2RMiddleware() r2r.Middleware
	Shutdown(ctx context.Context) error
}

// newTracer starts the OTLP/HTTP exporter configured by the OTEL_EXPORTER_OTLP_*
// variables; nil in a build without the otel tag (tracing_otel.go, tracing_none.go).
var newTracer func(ctx context.Context, version string) (tracer, error) = otelTracer

// tracingShutdownGrace bounds the flush of buffered spans when serve ends.
const tracingShutdownGrace = 5 * time.Second

// otelEndpointSet reports whether getenv names an OTLP endpoint for traces.
func otelEndpointSet(getenv func(string) string) bool {
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" ||
		strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
}

// startTracing adds OpenTelemetry spans of tool calls and R2R requests to cfg when
// getenv names an OTLP endpoint; stop flushes them. Without one it does nothing; in a
// build without the otel tag it says once that traces need that build.
func startTracing(ctx context.Context, cfg *server.Config, getenv func(string) string, logger *slog.Logger) (stop func(), err error) {
	stop = func() {}
	if !otelEndpointSet(getenv) {
		return stop, nil
	}
	if newTracer == nil {
		logger.Warn("OTEL_EXPORTER_OTLP_ENDPOINT is set, but this r2r-mcp is built without OpenTelemetry, so no traces are sent; " +
			"build it with: go build -tags otel")
		return stop, nil
	}
	t, err := newTracer(ctx, cfg.Version)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry (OTEL_EXPORTER_OTLP_*): %w", err)
	}
	cfg.ToolMiddleware = append(cfg.ToolMiddleware, t.ToolMiddleware())
	cfg.R2RMiddleware = append(cfg.R2RMiddleware, t.R2RMiddleware())
	logger.Info("sending OpenTelemetry traces over OTLP/HTTP")
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownGrace)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			logger.Warn("OpenTelemetry traces not all sent", "error", err)
		}
	}, nil
}
