package servertest

import (
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// Tools is the tool registry in its order, as serve lists it without --read-only: what an
// end-to-end test expects of tools/list (names, ReadOnly) and the example call of each
// tool, instead of a list of its own.
func Tools(t testing.TB) []tools.Tool {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return tools.Registry(&tools.Deps{Client: c, Projects: project.NewResolver(project.Options{CacheFile: "-"})})
}

// ToolNames is the names of ts, in order; with readOnly, only those of read-only tools (what
// serve --read-only lists).
func ToolNames(ts []tools.Tool, readOnly bool) []string {
	var names []string
	for _, tl := range tools.Filter(ts, readOnly) {
		names = append(names, tl.Def.Name)
	}
	return names
}
