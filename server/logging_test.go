package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestQuietRequests: mcp-go's line for a request that succeeded is a debug line; a failed
// request and the per-tool line stay at info.
func TestQuietRequests(t *testing.T) {
	for _, tt := range []struct {
		level      slog.Level
		want, lose []string
	}{
		{slog.LevelInfo, []string{"msg=mcp.tool", "mcp.method=tools/list outcome=error"}, []string{"mcp.method=initialize"}},
		{slog.LevelDebug, []string{"msg=mcp.tool", "level=DEBUG msg=mcp.request component=mcp mcp.method=initialize outcome=ok", "mcp.method=tools/list outcome=error"}, nil},
	} {
		var buf bytes.Buffer
		base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
		l := slog.New(quietRequests{base.Handler()}).With("component", "mcp")
		ctx := context.Background()
		l.LogAttrs(ctx, slog.LevelInfo, "mcp.request", slog.String("mcp.method", "initialize"), slog.String("outcome", "ok"))
		l.LogAttrs(ctx, slog.LevelInfo, "mcp.request", slog.String("mcp.method", "tools/list"), slog.String("outcome", "error"))
		l.LogAttrs(ctx, slog.LevelInfo, "mcp.tool", slog.String("mcp.tool.name", "r2r_search"), slog.String("outcome", "ok"))
		for _, w := range tt.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("level %v: log lacks %q:\n%s", tt.level, w, buf.String())
			}
		}
		for _, w := range tt.lose {
			if strings.Contains(buf.String(), w) {
				t.Errorf("level %v: log has %q:\n%s", tt.level, w, buf.String())
			}
		}
	}
}
