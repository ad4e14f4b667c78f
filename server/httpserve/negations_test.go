package httpserve_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// Over Streamable HTTP and through the REST gateway: r2r_sync {"no_prune": true} and the
// other names that negate prune, and r2r_delete_document {"keep_document_id": X}, are
// unknown-argument errors and delete nothing.
func TestNegatedArgumentsDeleteNothingHTTP(t *testing.T) {
	for _, transport := range []string{"http", "gateway"} {
		t.Run(transport, func(t *testing.T) {
			tm := newTeam(t)
			root, notes := syncDocs(t, "wombat")
			rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{root} })
			c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
			call := func(tool string, args map[string]any) servertest.LooseOutcome {
				if transport == "gateway" {
					_, out, _ := invoke(t, rep.URL, tm.Alice.Key, tool, args)
					o := servertest.LooseOutcome{IsError: out.Error != nil, Text: out.Text}
					o.Structured, _ = out.Structured.(map[string]any)
					o.Read, _ = out.ArgumentsRead.([]any)
					if out.Error != nil {
						o.ErrorType = out.Error.Type
					}
					return o
				}
				_, res := callText(t, c, tool, args)
				r, err := servertest.NewToolResult(res)
				if err != nil {
					t.Fatal(err)
				}
				return r.Loose()
			}
			syncArgs := map[string]any{"directory": notes, "collection_id": tm.Alice.Collection}
			servertest.CheckNegationsDeleteNothing(t, transport, call, tm.Emu, syncArgs, func() {
				if err := os.Remove(filepath.Join(notes, "b.md")); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
