package tools

import (
	"bytes"
	"context"
	"log/slog"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/argcheck"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// ValidateArgs is the tool middleware that checks each call's arguments against the
// published input schema of its tool in ts before the handler runs; the handlers rely on
// it and do not check again. A rejection is an isError result in the shape every tool
// error has (text, plus {type, code -32602, retryable} in _meta), without
// structuredContent, which would have to match the output schema. It is logged with the
// request's context, so a client that asked for info-level logs (logging/setLevel) sees it.
func ValidateArgs(ts []Tool, logger *slog.Logger) server.ToolHandlerMiddleware {
	defs := make([]mcp.Tool, len(ts))
	for i, t := range ts {
		defs[i] = t.Def
	}
	v := argcheck.New(defs, logger)
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := v.Check(req); err != nil {
				logger.InfoContext(ctx, "rejected tool arguments", "tool", req.Params.Name, "problems", strings.Join(err.Problems, "; "))
				return toolerr.Result(toolerr.Info{Type: "invalid_params", Code: toolerr.CodeInvalidParams, Message: err.Error()}), nil
			}
			// "arguments": null (sent by clients for a tool without parameters) means none.
			if string(bytes.TrimSpace(req.Params.RawArguments)) == "null" {
				req.Params.RawArguments, req.Params.Arguments = nil, nil
			}
			return next(ctx, req)
		}
	}
}
