//go:build !windows

package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenLoggerRefusesSymlink: a log path that is a symlink is neither followed nor is
// its target's mode changed.
func TestOpenLoggerRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "r2r-mcp.log")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, _, err := OpenLogger(link, "info", nil)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("OpenLogger(symlink) = %v, want a refusal", err)
	}
	fi, _ := os.Stat(target)
	b, _ := os.ReadFile(target)
	if fi.Mode().Perm() != 0o644 || string(b) != "keep\n" {
		t.Errorf("target changed: mode %v, content %q", fi.Mode().Perm(), b)
	}
}
