package homedir

import (
	"os/user"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCoversWithoutHOME: with $HOME empty or pointing elsewhere, the home directory of
// the user database is still recognised, and so are the directories above it.
func TestCoversWithoutHOME(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("$HOME is not how Windows finds the home directory")
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || !filepath.IsAbs(u.HomeDir) {
		t.Skip("no home directory in the user database")
	}
	other := t.TempDir()
	for _, home := range []string{"", "relative/dir", other} {
		t.Setenv("HOME", home)
		tests := []struct {
			dir  string
			want bool
		}{
			{u.HomeDir, true},
			{filepath.Dir(u.HomeDir), true},
			{"/", true},
			{filepath.Join(u.HomeDir, "project-that-need-not-exist"), false},
			{"relative", false},
		}
		for _, tt := range tests {
			if got := Covers(tt.dir); got != tt.want {
				t.Errorf("HOME=%q: Covers(%s) = %v, want %v", home, tt.dir, got, tt.want)
			}
		}
		if home == other && !Covers(other) {
			t.Errorf("HOME=%s itself is not covered", other)
		}
	}
}
