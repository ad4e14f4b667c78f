package httpserve_test

import (
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// The loose-argument table over Streamable HTTP and through the REST gateway.
func TestLooseArgumentsHTTPAndGateway(t *testing.T) {
	tm := newTeam(t)
	root, notes := syncDocs(t, "wombat")
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{root} })
	c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
	for _, lc := range servertest.LooseCases(filepath.Join(notes, "a.md"), tm.Alice.Collection) {
		_, res := callText(t, c, lc.Tool, lc.Args)
		r, err := servertest.NewToolResult(res)
		if err != nil {
			t.Fatal(err)
		}
		lc.Check(t, "http", r.Loose())

		_, out, _ := invoke(t, rep.URL, tm.Alice.Key, lc.Tool, lc.Args)
		g := servertest.LooseOutcome{IsError: out.Error != nil, Text: out.Text}
		g.Structured, _ = out.Structured.(map[string]any)
		g.Read, _ = out.ArgumentsRead.([]any)
		if out.Error != nil {
			g.ErrorType = out.Error.Type
		}
		lc.Check(t, "gateway", g)
	}
}
