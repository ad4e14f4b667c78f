package server_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// Over stdio, through the built binary: r2r_sync {"no_prune": true} and the other names
// that negate prune, and r2r_delete_document {"keep_document_id": X}, are unknown-argument
// errors and delete nothing.
func TestNegatedArgumentsDeleteNothingStdio(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "negations", map[string]string{
		"docs/guide.md": guideText, "docs/old.md": "# Old notes\n\nThe retired flux capacitor needed 1.1 gigawatts.\n"})
	env := servertest.Env(t, emu.URL, "XDG_CACHE_HOME="+t.TempDir())
	ctx := ctxFor(t, 3*time.Minute)
	s := servertest.Serve(ctx, t, proj, env)
	call := func(tool string, args map[string]any) servertest.LooseOutcome {
		r, err := s.Call(ctx, tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return r.Loose()
	}
	servertest.CheckNegationsDeleteNothing(t, "stdio", call, emu, map[string]any{}, func() {
		if err := os.Remove(filepath.Join(proj, "docs", "old.md")); err != nil {
			t.Fatal(err)
		}
	})
}
