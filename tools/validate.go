package tools

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
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
//
// Before the check, loose forms with one strict reading are read as the schema says
// (argcheck's Forgive: JSON strings of objects, arrays and numbers, documented value
// aliases, near-miss argument names); a result then says what was read in
// _meta[ArgumentsMetaKey]. The published schemas stay strict.
func ValidateArgs(ts []Tool, logger *slog.Logger) server.ToolHandlerMiddleware {
	defs := make([]mcp.Tool, len(ts))
	aliases := map[string]argcheck.ValueAliases{}
	for i, t := range ts {
		defs[i] = t.Def
		if t.Aliases != nil {
			aliases[t.Def.Name] = t.Aliases
		}
	}
	v := argcheck.New(defs, aliases, logger)
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req, read := v.Forgive(req)
			if err := v.Check(req); err != nil {
				err.Read = read
				logger.InfoContext(ctx, "rejected tool arguments", "tool", req.Params.Name, "problems", strings.Join(err.Problems, "; "))
				return toolerr.Result(toolerr.Info{Type: "invalid_params", Code: toolerr.CodeInvalidParams, Message: err.Error()}), nil
			}
			// "arguments": null (sent by clients for a tool without parameters) means none.
			if string(bytes.TrimSpace(req.Params.RawArguments)) == "null" {
				req.Params.RawArguments, req.Params.Arguments = nil, nil
			}
			if len(read) == 0 {
				return next(ctx, req)
			}
			logger.InfoContext(ctx, "read loose tool arguments", "tool", req.Params.Name, "read", len(read))
			res, err := next(ctx, req)
			return withArgumentsRead(res, read), err
		}
	}
}

// ArgumentsMetaKey is the key in a result's _meta under which the loose arguments the
// server read as their strict form are listed (argcheck.Mapping).
const ArgumentsMetaKey = "r2r-mcp/arguments-read"

// withArgumentsRead returns a copy of res whose _meta lists read; res may be shared (a
// cached result), so it is not changed.
func withArgumentsRead(res *mcp.CallToolResult, read []argcheck.Mapping) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	out := *res
	fields := map[string]any{ArgumentsMetaKey: read}
	if res.Meta != nil {
		maps.Copy(fields, res.Meta.AdditionalFields)
		fields[ArgumentsMetaKey] = read
		out.Meta = &mcp.Meta{ProgressToken: res.Meta.ProgressToken, AdditionalFields: fields}
	} else {
		out.Meta = &mcp.Meta{AdditionalFields: fields}
	}
	return &out
}

// checkAliases reports aliases of t that are not documented in their argument's
// description, or that name no value of its enum.
func checkAliases(t Tool) []error {
	var errs []error
	for arg, as := range t.Aliases {
		prop, _ := t.Def.InputSchema.Properties[arg].(map[string]any)
		desc, _ := prop["description"].(string)
		enum, _ := prop["enum"].([]string)
		for alias, canon := range as {
			if !slices.Contains(enum, canon) {
				errs = append(errs, fmt.Errorf("%s: alias %q of %s names %q, no value of its enum", t.Def.Name, alias, arg, canon))
			}
			if !strings.Contains(desc, alias) {
				errs = append(errs, fmt.Errorf("%s: alias %q is not in the description of %s", t.Def.Name, alias, arg))
			}
		}
	}
	return errs
}
