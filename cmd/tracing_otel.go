//go:build otel

package cmd

import (
	"context"

	"github.com/r2r-mcp/r2r-mcp/server/tracing"
)

// otelTracer is newTracer in a build with the otel tag.
func otelTracer(ctx context.Context, version string) (tracer, error) {
	return tracing.New(ctx, version)
}
