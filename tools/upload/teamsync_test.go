package upload

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TeamSync makes a team project's sync a team sync: the team layer on the ref's commit, the
// private scope in the caller's private collection (created unless a dry run); Refresh
// follows the ref to a new commit, as sync --watch does before each run. Outside team
// projects it is nil.
func TestTeamSyncAndRefresh(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tg := newTarget(t)
	ctx := context.Background()
	tg.write(t, "docs/a.md", "# A\n\nThe first version.\n")
	gitIn(t, tg.root, "init", "-q", "-b", "main")
	gitIn(t, tg.root, "add", ".")
	gitIn(t, tg.root, "commit", "-q", "-m", "one")
	first := gitIn(t, tg.root, "rev-parse", "HEAD")

	if ts, err := TeamSync(ctx, tg.api, "", "", tg.root, tg.scope, true); ts != nil || err != nil {
		t.Fatalf("outside a team project: %+v %v", ts, err)
	}
	dry, err := TeamSync(ctx, tg.api, tg.scope.CollectionID, "", tg.root, tg.scope, false)
	if err != nil || dry == nil || dry.Private.CollectionID != "" || dry.Team.Commit != first || !dry.Team.CollectionOwner {
		t.Fatalf("a dry run's team sync: %+v %v", dry, err)
	}
	ts, err := TeamSync(ctx, tg.api, tg.scope.CollectionID, "", tg.root, tg.scope, true)
	if err != nil || ts.Private.CollectionID == "" || ts.Private.Layer != kbsync.LayerPrivate || ts.Name != "claude-code-demo" {
		t.Fatalf("a team sync: %+v %v", ts, err)
	}
	if pc, err := tg.api.GetCollectionByName(ctx, team.PrivateCollectionName(tg.scope.CollectionID)); err != nil || pc.ID != ts.Private.CollectionID {
		t.Fatalf("the private collection: %+v %v", pc, err)
	}

	syncer, _, _, err := NewSyncer(SyncConfig{API: tg.api, Root: tg.root, Scope: ts.Private, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	Join(syncer, ts.Team, ts.CollectionID)
	tg.write(t, "docs/a.md", "# A\n\nThe second version.\n")
	gitIn(t, tg.root, "commit", "-q", "-am", "two")
	if err := ts.Refresh(ctx, syncer, tg.root); err != nil {
		t.Fatal(err)
	}
	second := gitIn(t, tg.root, "rev-parse", "HEAD")
	if syncer.Opts.Team != ts.Team || ts.Team.Commit != second || ts.Team.Writer.Scope.CollectionID != tg.scope.CollectionID {
		t.Errorf("after Refresh the syncer's team follows %s, want %s", syncer.Opts.Team.Commit, second)
	}
}
