package cmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProjectDir: without MCP roots the project comes from $CLAUDE_PROJECT_DIR (set by
// Claude Code), then --project-dir, then the working directory; a CLAUDE_PROJECT_DIR that
// is not a directory is passed over.
func TestProjectDir(t *testing.T) {
	claude, flag := t.TempDir(), t.TempDir()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env, flag  string
		wantDir, wantSrc string
	}{
		{"claude code's project first", claude, flag, claude, "env CLAUDE_PROJECT_DIR"},
		{"then --project-dir", "", flag, flag, "--project-dir"},
		{"a missing CLAUDE_PROJECT_DIR is passed over", filepath.Join(claude, "gone"), flag, flag, "--project-dir"},
		{"then the working directory", "", "", wd, "the working directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == ClaudeProjectDirEnv {
					return tc.env
				}
				return ""
			}
			dir, src, err := projectDir(getenv, tc.flag)
			if err != nil || dir != tc.wantDir || src != tc.wantSrc {
				t.Fatalf("projectDir = %q, %q, %v; want %q, %q", dir, src, err, tc.wantDir, tc.wantSrc)
			}
		})
	}
	if _, _, err := projectDir(func(string) string { return "" }, filepath.Join(flag, "nope")); err == nil {
		t.Fatal("a --project-dir that is not a directory must fail")
	}
}
