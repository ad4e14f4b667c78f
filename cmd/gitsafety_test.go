package cmd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync/gittest"
)

// TestSyncCommandRunsNoGitCommand: `r2r-mcp sync` (dry run and real) of a repository
// whose config names a command for core.fsmonitor, hooks and the pager lists its files
// and runs none of them.
func TestSyncCommandRunsNoGitCommand(t *testing.T) {
	f := newSyncFixture(t)
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git is not installed")
	}
	markers := t.TempDir()
	script := filepath.Join(markers, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+filepath.Join(markers, "ran")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"core.fsmonitor", script}, {"core.hooksPath", markers}, {"pager.ls-files", script}} {
		cmd := exec.Command("git", "config", kv[0], kv[1])
		cmd.Dir = f.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git config: %v %s", err, out)
		}
	}
	if err := os.Symlink(script, filepath.Join(markers, "post-index-change")); err != nil {
		t.Fatal(err)
	}
	f.write(".gitignore", "*.log\n")
	f.write("a.md", "alpha")
	f.write("b.log", "ignored")
	for _, args := range [][]string{{f.root, "--dry-run"}, {f.root}} {
		s, r := f.sync(args...)
		if r.err != nil || len(s.Uploaded) != 2 {
			t.Fatalf("sync %v: %+v %v", args, s, r.err)
		}
		if _, err := os.Stat(filepath.Join(markers, "ran")); err == nil {
			t.Fatalf("sync %v ran a command the repository's config names", args)
		}
	}
}

// TestSyncCommandNeverFetches: in a partial clone whose promisor remote is a command
// (allowed by the repository's protocol.ext.allow), `r2r-mcp sync` — dry run, real and
// --watch — never lets git fetch a missing object, so the command never runs; it stops
// naming the partial clone and the next step. Once git needs no missing object, the
// partial clone syncs.
func TestSyncCommandNeverFetches(t *testing.T) {
	f := newSyncFixture(t)
	if err := os.RemoveAll(f.root); err != nil {
		t.Fatal(err)
	}
	p := gittest.NewPartialClone(t, f.root)
	for _, args := range [][]string{{f.root, "--dry-run"}, {f.root}} {
		_, r := f.sync(args...)
		if _, ok := errors.AsType[*kbsync.PartialCloneError](r.err); !ok {
			t.Errorf("sync %v: %v, want the partial clone named", args, r.err)
		}
		if p.Ran() {
			t.Fatalf("sync %v: git fetched from the promisor remote and ran its command", args)
		}
	}
	var out, errOut syncBuffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := runSync(&syncOptions{Dir: f.root, Watch: true, Concurrency: 2, Mode: "fast", StateDir: f.stateDir, Debounce: time.Millisecond,
		r2rCmd: r2rCmd{URL: f.srv.URL, Ctx: ctx, Deps: deps, Env: authEnv{ConfigDir: f.config}}})
	if _, ok := errors.AsType[*kbsync.PartialCloneError](err); !ok {
		t.Errorf("sync --watch: %v, want the partial clone named; stderr %s", err, errOut.String())
	}
	if p.Ran() {
		t.Fatal("sync --watch: git fetched from the promisor remote and ran its command")
	}

	if err := os.RemoveAll(filepath.Join(f.root, "sub")); err != nil {
		t.Fatal(err)
	}
	s, r := f.sync(f.root, "--dry-run")
	if r.err != nil || !slices.Contains(s.Uploaded, "a.md") || !slices.Contains(s.Uploaded, "docs/b.md") || p.Ran() {
		t.Errorf("sync of a partial clone needing no missing object: %+v %v %s", s, r.err, r.stderr)
	}
}
