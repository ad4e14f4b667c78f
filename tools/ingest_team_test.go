package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// In a team project (a real git repository whose ref the team follows), r2r_ingest_document
// of a repository file writes the caller's working copy to their private collection: it
// shadows the team's version for them, and teammates never see it.
func TestIngestInTeamProjectIsPrivate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	te := newViewEnv(t)
	ctx := context.Background()
	if err := te.ann.AddUserToCollection(ctx, te.teamID, te.bobID); err != nil {
		t.Fatal(err)
	}
	if _, err := te.ann.CreateDocument(ctx, r2r.DocumentCreate{RawText: "When the quasar backlog grows, raise the drain workers to 14.",
		CollectionIDs: []string{te.teamID}, Metadata: map[string]any{"title": runbookPath, kbsync.MetaSourcePath: runbookPath,
			kbsync.MetaLayer: kbsync.LayerTeam, kbsync.MetaSource: "r2r-mcp", kbsync.MetaProject: "demo-app"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(te.project, ".git")); err != nil {
		t.Fatal(err)
	}
	te.write("docs/runbooks/quasar-queue.md", "When the quasar backlog grows, raise the drain workers to 14.\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "one"},
		{"update-ref", "refs/remotes/origin/main", "HEAD"}} {
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = te.project
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	te.write("docs/runbooks/quasar-queue.md", "When the quasar backlog grows, raise the drain workers to 31.\n")

	var out IngestOutput
	structured(t, te.ok("r2r_ingest_document", map[string]any{"file_path": "docs/runbooks/quasar-queue.md", "run_async": false}), &out)
	private, err := te.bob.GetCollectionByName(ctx, team.PrivateCollectionName(te.teamID))
	if err != nil {
		t.Fatal(err)
	}
	if out.CollectionID != private.ID {
		t.Fatalf("ingested into %s, want bob's private collection %s", out.CollectionID, private.ID)
	}
	for _, who := range []struct {
		name string
		as   func()
		want string
	}{{"bob", func() { te.as(te.bob) }, "workers to 31"}, {"ann", func() { te.as(te.ann) }, "workers to 14"}} {
		who.as()
		var so SearchOutput
		structured(t, te.ok("r2r_search", map[string]any{"query": "how many drain workers for the quasar backlog"}), &so)
		n := 0
		for _, h := range so.Results {
			if strings.HasPrefix(h.Title, runbookPath) {
				n++
				if !strings.Contains(h.Text, who.want) {
					t.Errorf("%s's hit of the runbook: %q, want %q", who.name, h.Text, who.want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s sees %d versions of the runbook, want 1", who.name, n)
		}
	}
}
