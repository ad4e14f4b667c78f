package server_test

import (
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// The loose-argument table over stdio, through the built binary.
func TestLooseArgumentsStdio(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "loose", map[string]string{"docs/guide.md": guideText})
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 60*time.Second)
	c := servertest.NewMCPGoClient(ctx, t, p)
	init := mcpgo.InitializeRequest{}
	init.Params.ClientInfo = mcpgo.Implementation{Name: "r2r-mcp-loose", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	for _, lc := range servertest.LooseCases("docs/guide.md", "") {
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = lc.Tool, lc.Args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", lc.Name, err)
		}
		r, err := servertest.NewToolResult(res)
		if err != nil {
			t.Fatal(err)
		}
		lc.Check(t, "stdio", r.Loose())
	}
}
