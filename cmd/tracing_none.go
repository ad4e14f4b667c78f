//go:build !otel

package cmd

import "context"

// otelTracer is nil without the otel tag: the OpenTelemetry SDK is not linked.
var otelTracer func(ctx context.Context, version string) (tracer, error)
