package upload

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// benchProject writes n small Markdown files into a new project directory and returns an
// emulated R2R's client, a scope in a new collection of it, and the directory.
func benchProject(b *testing.B, n int) (*r2r.Client, kbsync.Scope, string) {
	b.Helper()
	srv := r2rtest.NewServer(b, r2rtest.Options{})
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	me, err := c.Me(ctx)
	if err != nil {
		b.Fatal(err)
	}
	coll, err := c.CreateCollection(ctx, "bench", "")
	if err != nil {
		b.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(root, "docs", fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%04d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "# Note %d\n\nFact %d.", i, i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return c, kbsync.Scope{CollectionID: coll.ID, UserID: me.ID, Project: "bench"}, root
}

// runBench plans and runs s, failing unless want files were uploaded (team: to the team's
// version).
func runBench(b *testing.B, s *kbsync.Syncer, want int) {
	b.Helper()
	ctx := context.Background()
	plan, err := s.Plan(ctx)
	if err != nil {
		b.Fatal(err)
	}
	sum := s.Run(ctx, plan, nil)
	got := len(sum.Uploaded)
	if sum.Team != nil {
		got = len(sum.Team.Uploaded)
	}
	if got != want || !sum.OK() {
		b.Fatalf("summary %+v", sum)
	}
}

// BenchmarkSyncRun measures a first sync of 1,000 small files built by NewSyncer (plan and
// run, every write on the way the sync command's go) against the in-process emulator.
func BenchmarkSyncRun(b *testing.B) {
	const files = 1000
	for range b.N {
		b.StopTimer()
		c, scope, root := benchProject(b, files)
		s, _, _, err := NewSyncer(SyncConfig{API: c, Scope: scope, Root: root, StateDir: b.TempDir(), Poll: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		runBench(b, s, files)
	}
}

// BenchmarkTeamSyncRun measures a first team sync of a repository of 300 small committed
// files: each goes to the team's version, read from git.
func BenchmarkTeamSyncRun(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	const files = 300
	for range b.N {
		b.StopTimer()
		c, scope, root := benchProject(b, files)
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "one"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
				"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		ctx := context.Background()
		ts, err := TeamSync(ctx, c, scope.CollectionID, "", root, scope, true)
		if err != nil || ts == nil {
			b.Fatalf("team sync: %+v %v", ts, err)
		}
		s, _, _, err := NewSyncer(SyncConfig{API: c, Scope: ts.Private, Root: root, StateDir: b.TempDir(), Poll: 1})
		if err != nil {
			b.Fatal(err)
		}
		Join(s, ts.Team, ts.CollectionID)
		b.StartTimer()
		runBench(b, s, files)
	}
}
