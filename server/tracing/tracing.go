// Package tracing exports OpenTelemetry traces of r2r-mcp over OTLP/HTTP: a span per tool
// call (tool name, outcome) and a span per R2R request (route, status) inside it, exported as
// configured by the standard OTEL_EXPORTER_OTLP_* environment variables (endpoint,
// headers, timeout).
//
// The OpenTelemetry SDK and exporter double the size of the r2r-mcp binary and add about
// 1 ms of package initialisation to every start, so only a build with the otel tag links
// this package (cmd/tracing_otel.go).
package tracing

import (
	"context"
	"errors"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
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

// New starts the OTLP/HTTP exporter configured by the OTEL_EXPORTER_OTLP_* environment
// variables. It does no network I/O: spans are sent in the background.
func New(ctx context.Context, version string) (*Tracer, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res := resource.NewSchemaless(semconv.ServiceName("r2r-mcp"), semconv.ServiceVersion(version))
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: p, tracer: p.Tracer("github.com/r2r-mcp/r2r-mcp")}, nil
}

// Shutdown sends the spans still buffered and stops the exporter.
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
			status := 0
			var re *r2r.Error
			switch {
			case resp != nil:
				status = resp.StatusCode
			case errors.As(err, &re):
				status = re.StatusCode
			}
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if err != nil || status >= 400 {
				span.SetStatus(codes.Error, "status "+strconv.Itoa(status))
			}
			return resp, err
		}
	}
}
