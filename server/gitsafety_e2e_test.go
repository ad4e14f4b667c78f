package server_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync/gittest"
)

// TestGitNeverFetchesStdio: `r2r-mcp serve` over stdio in a partial clone whose promisor
// remote is a command (allowed by the repository's protocol.ext.allow) runs every git call
// of its tools without fetching a missing object, so the command never runs: r2r_sync (dry
// run and real: git ls-files), r2r_remember (git rev-parse of a HEAD the clone lacks) and
// r2r_recall's staleness check (git diff-tree of a commit whose tree the clone lacks).
func TestGitNeverFetchesStdio(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	p := gittest.NewPartialClone(t, filepath.Join(t.TempDir(), "clone"))
	ctx := ctxFor(t, 90*time.Second)
	s := servertest.Serve(ctx, t, p.Dir, servertest.Env(t, emu.URL, "XDG_CACHE_HOME="+t.TempDir()))
	remember := func(title string) {
		t.Helper()
		res, err := s.Call(ctx, "r2r_remember", map[string]any{"kind": "decision", "title": title,
			"body": "The alpha file keeps its heading.", "paths": []any{"a.md"}})
		if err != nil || res.IsError {
			t.Fatalf("r2r_remember %q: %v %s", title, err, res.Text)
		}
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"r2r_sync dry run", func(t *testing.T) { syncRefused(t, s, map[string]any{"dry_run": true}) }},
		{"r2r_sync", func(t *testing.T) { syncRefused(t, s, map[string]any{}) }},
		{"r2r_remember at a commit the clone lacks", func(t *testing.T) {
			defer p.Detach(t, p.Absent)()
			remember("Alpha at an absent commit")
		}},
		{"r2r_recall of a memory whose commit's tree the clone lacks", func(t *testing.T) {
			restore := p.Detach(t, p.Old)
			remember("Alpha at the old commit")
			restore()
			res, err := s.Call(ctx, "r2r_recall", map[string]any{})
			if err != nil || res.IsError || !strings.Contains(res.Text, "Alpha at the old commit") {
				t.Fatalf("r2r_recall: %v %s", err, res.Text)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t)
			if p.Ran() {
				t.Fatalf("git fetched from the promisor remote and ran its command\nstderr: %s", s.Stderr())
			}
		})
	}
}

// syncRefused calls r2r_sync with args and checks that it refuses the partial clone as a
// configuration problem, naming the cause and the next step.
func syncRefused(t *testing.T, s *servertest.Session, args map[string]any) {
	t.Helper()
	res, err := s.Call(ctxFor(t, 30*time.Second), "r2r_sync", args)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := res.Meta["r2r-mcp/error"].(map[string]any)
	if !res.IsError || info["type"] != "configuration" || !strings.Contains(res.Text, "partial clone") || !strings.Contains(res.Text, "fetch --refetch") {
		t.Errorf("r2r_sync %v: %s %v", args, res.Text, info)
	}
}
