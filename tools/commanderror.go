package tools

import (
	"context"
	"errors"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

type commandKey struct{}

// fromCommand reports whether an error is being worded for a command rather than a tool.
func fromCommand(ctx context.Context) bool { return ctx.Value(commandKey{}) != nil }

// CommandError words the failure of an R2R call in a command (sync, memory, index, …) as a
// tool's error result words it: the cause and the next step. baseURL is the R2R the
// command asked and origin where its credential came from. ok is false when err is not
// the failure of an R2R call; the command words those itself.
func CommandError(ctx context.Context, err error, baseURL string, origin auth.Origin) (msg string, ok bool) {
	if _, isR2R := errors.AsType[*r2r.Error](err); !isR2R {
		return "", false
	}
	ctx = context.WithValue(withAuth(ctx, func() auth.Origin { return origin }), commandKey{}, true)
	info, ok := toolerr.Of(r2rErrorResult(ctx, err, baseURL, errHints{}))
	return info.Message, ok && info.Message != ""
}
