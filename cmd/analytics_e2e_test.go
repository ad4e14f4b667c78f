package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestAnalyticsIndexLag: `r2r-mcp analytics` says how far the index is behind the working
// tree (what a sync would do now) and that it is up to date after the sync.
func TestAnalyticsIndexLag(t *testing.T) {
	servertest.Build(t)
	analyticsIndexLag(t, emulatorBackend(t))
}

// TestAnalyticsIndexLagReal is TestAnalyticsIndexLag on the real R2R (make test-real).
func TestAnalyticsIndexLagReal(t *testing.T) {
	servertest.Build(t)
	analyticsIndexLag(t, realBackend(t))
}

func analyticsIndexLag(t *testing.T, be teamBackend) {
	w := newTeamWorld(t, be)
	w.clone("ann")
	ann := w.mates["ann"]
	w.run("ann", "sync")
	if out := w.run("ann", "analytics").Stdout; !strings.Contains(out, "Index up to date with the working tree.") {
		t.Fatalf("analytics right after a sync:\n%s", out)
	}
	writeRepoFile(t, ann.clone, "docs/runbooks/comet-tail.md", "# Comet tail\n\nA comet's tail points away from the sun.\n")
	writeRepoFile(t, ann.clone, "docs/onboarding.md", "# Onboarding\n\nNew engineers pair with the pulsar rotation for three weeks.\n")
	if err := os.Remove(filepath.Join(ann.clone, "docs", "runbooks", "nebula-cache.md")); err != nil {
		t.Fatal(err)
	}
	behind := "Index behind the working tree: 1 new, 1 changed, 0 removed files"
	kept := "1 document(s) of files no longer in the project are kept (r2r-mcp sync --prune deletes them)."
	if out := w.run("ann", "analytics").Stdout; !strings.Contains(out, behind) || !strings.Contains(out, kept) {
		t.Fatalf("analytics after three edits, want %q and %q:\n%s", behind, kept, out)
	}
	// A sync brings the changes; the removed file's document stays until --prune.
	w.run("ann", "sync")
	if out := w.run("ann", "analytics").Stdout; !strings.Contains(out, "Index up to date with the working tree.") || !strings.Contains(out, kept) {
		t.Fatalf("analytics after a sync:\n%s", out)
	}
	w.run("ann", "sync", "--prune")
	if out := w.run("ann", "analytics").Stdout; !strings.Contains(out, "Index up to date with the working tree.") || strings.Contains(out, "kept") {
		t.Fatalf("analytics after sync --prune:\n%s", out)
	}
}
