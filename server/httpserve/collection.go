package httpserve

import (
	"context"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// collectionDefault is the per-user scope of tool def's calls (server.UserOptions.Scope):
// when def takes a collection_id and a call names none, it fills in the request's
// collection (header or server default). It runs before the argument validation, which
// then checks the value like any other. nil for a tool without collection_id.
func collectionDefault(def mcp.Tool) mcpserver.ToolHandlerMiddleware {
	if _, ok := def.InputSchema.Properties["collection_id"]; !ok {
		return nil
	}
	return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c, ok := collectionFrom(ctx)
			if !ok {
				return next(ctx, req)
			}
			args, isMap := req.Params.Arguments.(map[string]any)
			if req.Params.Arguments != nil && !isMap {
				return next(ctx, req) // not an object: the validation says so
			}
			if _, given := args["collection_id"]; given {
				return next(ctx, req)
			}
			filled := make(map[string]any, len(args)+1)
			maps.Copy(filled, args)
			filled["collection_id"] = c
			req.Params.Arguments = filled
			return next(ctx, req)
		}
	}
}

type collectionKey struct{}

func withCollection(ctx context.Context, c string) context.Context {
	return context.WithValue(ctx, collectionKey{}, c)
}

func collectionFrom(ctx context.Context) (string, bool) {
	c, ok := ctx.Value(collectionKey{}).(string)
	return c, ok && c != ""
}
