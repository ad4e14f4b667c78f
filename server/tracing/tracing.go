// Package tracing exports OpenTelemetry traces of r2r-mcp over OTLP/HTTP: a span per tool
// call (tool name, outcome) and a span per R2R request (route, status) inside it, sent in
// batches by the SDK's batch span processor through the OTLP/HTTP JSON exporter of
// server/tracing/otlpjson, to the endpoint the standard OTEL_EXPORTER_OTLP_* environment
// variables name (see FromEnv).
package tracing

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson"
)

// Span attributes beside OpenTelemetry's semantic conventions.
const (
	// AttrOutcome is a tool call's outcome as r2r_mcp_tool_calls_total counts it.
	AttrOutcome = attribute.Key("r2r_mcp.outcome")
	// AttrRoute is an R2R request's operation as r2r_mcp_r2r_requests_total counts it.
	AttrRoute = attribute.Key("r2r_mcp.r2r.route")
)

// Tracer records the spans of one server and sends them in batches.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
}

// New starts a tracer that exports to cfg's endpoint. It does no network I/O: spans are
// sent in the background, and failed exports are logged to logger, at most one line a
// minute. A protocol other than http/json in cfg is logged as a warning: this exporter
// speaks http/json whatever was asked.
func New(cfg Config, logger *slog.Logger) (*Tracer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Protocol != "" && cfg.Protocol != ProtocolJSON {
		logger.Warn("OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL asks for "+cfg.Protocol+", but r2r-mcp exports traces over http/json only; "+
			"point the endpoint at an OTLP/HTTP receiver (the OpenTelemetry Collector's listens on port 4318)",
			"endpoint", cfg.RedactedEndpoint())
	}
	otel.SetErrorHandler(newErrorLog(logger, time.Now))
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// Its own transport, so that Shutdown closes only the exporter's connections.
	client := &http.Client{Timeout: timeout, Transport: http.DefaultTransport.(*http.Transport).Clone()}
	exp := otlpjson.New(cfg.Endpoint, cfg.Headers, client)
	name := cfg.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(cfg.ServiceVersion))
	// The batch span processor's queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, 2048 by default)
	// and drops spans when full rather than blocking a call.
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: p, tracer: p.Tracer("github.com/r2r-mcp/r2r-mcp", trace.WithInstrumentationVersion(cfg.ServiceVersion))}, nil
}

// Shutdown sends the spans still buffered, until ctx ends, and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.provider.Shutdown(ctx) }

// ToolMiddleware wraps every tool call in a span named "tools/call TOOL" with the
// outcome; a call that is not ok has the span status Error.
func (t *Tracer) ToolMiddleware() mcpserver.ToolHandlerMiddleware {
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tool := req.Params.Name
			ctx, span := t.tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tool)))
			defer span.End()
			res, err := next(ctx, req)
			outcome := metrics.Outcome(res, err)
			span.SetAttributes(AttrOutcome.String(outcome))
			if outcome != "ok" {
				span.SetStatus(codes.Error, outcome)
			}
			return res, err
		}
	}
}

// R2RMiddleware wraps every R2R request (retries included) in a client span named after
// its route, with the final HTTP status (0 = not answered).
func (t *Tracer) R2RMiddleware() r2r.Middleware {
	return func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, call *r2r.Call) (*r2r.Response, error) {
			ctx, span := t.tracer.Start(ctx, "r2r "+call.Op, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(AttrRoute.String(call.Op), semconv.HTTPRequestMethodKey.String(call.Method)))
			defer span.End()
			resp, err := next(ctx, call)
			status := r2r.StatusOf(resp, err)
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if err != nil || status >= 400 {
				span.SetStatus(codes.Error, "status "+strconv.Itoa(status))
			}
			return resp, err
		}
	}
}
