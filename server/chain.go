package server

import (
	"log/slog"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Observer watches every tool call and every R2R request: OpenTelemetry tracing
// (server/tracing) and Prometheus metrics (server/metrics).
type Observer interface {
	ToolMiddleware() mcpserver.ToolHandlerMiddleware
	R2RMiddleware() r2r.Middleware
}

// toolChain is s's tools, each wrapped in the tool call chain of every transport (stdio,
// Streamable HTTP, the REST gateway): tools.Chain, given this server's tracing, metrics and
// per-user scope. The MCP server's hooks run outside it (newMCPServer).
func (s *Server) toolChain() []tools.Tool {
	return tools.Chain(s.Deps, tools.Filter(tools.Registry(s.Deps), s.cfg.ReadOnly), tools.Layers{
		Tracing: toolObserver(s.cfg.Tracing),
		Metrics: toolObserver(s.cfg.Metrics),
		Scope:   s.scope,
		Logger:  s.logger.With("component", "validate"),
	})
}

// r2rChain is the middleware of every R2R request, outermost first: of the tools' client
// (chain) and of r2r_status's health check (health).
func r2rChain(cfg Config, retry r2r.RetryPolicy, breaker *r2r.Breaker, logger *slog.Logger) (chain, health []r2r.Middleware) {
	chain = []r2r.Middleware{
		r2rObserver(cfg.Tracing), // a span per request, its retries included
		r2rObserver(cfg.Metrics), // counts and times per request, likewise
		// The breaker outside the retries counts failed calls, not attempts, and turns
		// calls away before any attempt while open (r2r.Resilient).
		breaker.Middleware(),
		r2r.Retry(retry, logger), // idempotent calls, never past the call's deadline
	}
	// The health check bypasses the breaker, so it reports R2R as it is now; its successful
	// checks end an open breaker (it is the breaker's own probe).
	health = []r2r.Middleware{breaker.HealthProbe()}
	return chain, health
}

func toolObserver(o Observer) mcpserver.ToolHandlerMiddleware {
	if o == nil {
		return nil
	}
	return o.ToolMiddleware()
}

func r2rObserver(o Observer) r2r.Middleware {
	if o == nil {
		return nil
	}
	return o.R2RMiddleware()
}
