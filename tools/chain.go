package tools

import (
	"log/slog"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Layers are the parts of the tool call chain that the transport supplies (see Chain); each
// may be nil.
type Layers struct {
	// Tracing and Metrics observe every call: an OpenTelemetry span (server/tracing) and
	// Prometheus counters (server/metrics).
	Tracing, Metrics server.ToolHandlerMiddleware
	// Scope returns what adapts a call of tool def to its user (serve --http: the
	// request's collection); nil, or nil for def, = nothing.
	Scope func(def mcp.Tool) server.ToolHandlerMiddleware
	// Logger receives rejected arguments; nil = discard.
	Logger *slog.Logger
}

// Chain returns ts with each handler wrapped in the call chain of every transport: stdio,
// Streamable HTTP and the REST gateway (which sends its calls through the same MCP server).
// The chain is built once per tool, not per call. Outside it run the MCP server's hooks
// (server.newMCPServer: the tools are registered on first use, a panic outside the chain
// becomes a JSON-RPC error, the answer to a call the client cancelled is dropped).
func Chain(d *Deps, ts []Tool, l Layers) []Tool {
	d.setup()
	logger := l.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	validate := ValidateArgs(ts, logger)
	out := slices.Clone(ts)
	for i := range out {
		t := &out[i]
		var scope server.ToolHandlerMiddleware
		if l.Scope != nil {
			scope = l.Scope(t.Def)
		}
		// From outside in. The observers come first so that calls the layers below turn
		// away (invalid arguments, rate limited) are traced and counted too.
		layers := []server.ToolHandlerMiddleware{
			l.Tracing,    // a span per call
			l.Metrics,    // counts and times per call, by outcome
			scope,        // per-user scope, before the validation checks what it filled in
			validate,     // the arguments against the published schema
			cleanResults, // no control, invisible or BiDi character reaches the model
			d.guard(t),   // deadline (Tool.Deadline) and recovery from a panic
		}
		h := d.limiter.limit(t) // rate limit (Tool.Rate), then the tool's own handler with its call value
		for _, mw := range slices.Backward(layers) {
			if mw != nil {
				h = mw(h)
			}
		}
		t.Handler = h
	}
	return out
}
