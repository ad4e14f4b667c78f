package tools

import (
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestExamples makes every tool's example call on a fresh project (Example) through the
// served call chain: it answers a result that matches the tool's output schema, or the
// error the example documents.
func TestExamples(t *testing.T) {
	for _, tl := range newEnv(t).list {
		t.Run(tl.Def.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("README.md", "# Demo app\n\nDeploy with `make deploy`; the runbook is in docs/deploy.md.\n")
			ex := tl.Example
			res := e.call(tl.Def.Name, ex.Args)
			if ex.Error == "" {
				validateStructured(t, e.tools[tl.Def.Name], res)
				return
			}
			info, ok := toolerr.Of(res)
			if !ok || info.Type != ex.Error {
				t.Fatalf("%s(%v) = %q (%+v), want an error of type %s", tl.Def.Name, ex.Args, text(res), info, ex.Error)
			}
		})
	}
}
