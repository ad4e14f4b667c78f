package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
