package auth

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestNoticeDueOnceADay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "notices")
	w := Warning{WarnPlainTextFile, "using the credential in the plain-text file /c/credentials.json"}
	other := Warning{WarnPlainTextFile, "using the credential in the plain-text file /d/credentials.json"}
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	steps := []struct {
		name string
		dir  string
		w    Warning
		at   time.Time
		due  bool
	}{
		{"first time", dir, w, t0, true},
		{"an hour later", dir, w, t0.Add(time.Hour), false},
		{"another text", dir, other, t0.Add(time.Hour), true},
		{"a day later", dir, w, t0.Add(25 * time.Hour), true},
		{"no notice dir", "", w, t0.Add(25 * time.Hour), true},
	}
	for _, s := range steps {
		if got := NoticeDue(s.dir, s.w, s.at); got != s.due {
			t.Errorf("%s: due %v, want %v", s.name, got, s.due)
		}
	}
	if !(Warning{Kind: WarnPlainTextFile}).Standing() || (Warning{Kind: WarnUnusableEntry}).Standing() {
		t.Error("only the plain-text file is a standing warning")
	}
	// A cache that cannot be written: said every time rather than never.
	ro := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(ro, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if !NoticeDue(filepath.Join(ro, "notices"), w, t0) {
			t.Error("a marker that cannot be written hid the warning")
		}
	}
}
