package server

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// markObserver is an Observer that records the tool calls it sees.
type markObserver struct {
	tool mcpserver.ToolHandlerMiddleware
}

func (o markObserver) ToolMiddleware() mcpserver.ToolHandlerMiddleware { return o.tool }
func (markObserver) R2RMiddleware() r2r.Middleware                     { return nil }

// Config.Tracing observes every tool call of the server and of each copy ForCredentials
// builds, outside the copy's own scope (UserOptions.Scope), which only the copy runs.
func TestConfigToolMiddleware(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	var mu sync.Mutex
	var seen []string
	mark := func(label string) mcpserver.ToolHandlerMiddleware {
		return func(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mu.Lock()
				seen = append(seen, label+":"+req.Params.Name)
				mu.Unlock()
				return next(ctx, req)
			}
		}
	}
	s, err := New(Config{R2RURL: emu.URL, WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Options: DefaultOptions(),
		Tracing: markObserver{mark("config")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := s.ForCredentials(r2r.Anonymous(), UserOptions{Scope: func(mcp.Tool) mcpserver.ToolHandlerMiddleware { return mark("user") }})
	if err != nil {
		t.Fatal(err)
	}
	line := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	for _, srv := range []*Server{s, u} {
		srv.MCP.HandleMessage(context.Background(), line)
	}
	want := []string{"config:r2r_list_collections", "config:r2r_list_collections", "user:r2r_list_collections"}
	if !slices.Equal(seen, want) {
		t.Errorf("calls seen %v, want %v", seen, want)
	}
}
