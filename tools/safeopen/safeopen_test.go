package safeopen

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOpen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "docs", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, ".aws"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "docs", "sub", "a.md"), []byte("doc"), 0o600))
	must(os.WriteFile(filepath.Join(dir, ".aws", "a.md"), []byte("secret"), 0o600))
	must(os.Symlink(".aws", filepath.Join(dir, "linkdir")))
	must(os.Symlink("sub/a.md", filepath.Join(dir, "docs", "link.md")))
	root, err := os.OpenRoot(dir)
	must(err)
	defer root.Close()

	tests := []struct {
		rel  string
		want string // content, or "!changed", "!missing", "!invalid"
	}{
		{filepath.Join("docs", "sub", "a.md"), "doc"},
		{filepath.Join("linkdir", "a.md"), "!changed"},
		{filepath.Join("docs", "link.md"), "!changed"},
		{filepath.Join("docs", "none.md"), "!missing"},
		{"docs" + string(filepath.Separator) + ".." + string(filepath.Separator) + ".aws" + string(filepath.Separator) + "a.md", "!invalid"},
	}
	for _, tt := range tests {
		f, err := Open(root, tt.rel, os.O_RDONLY)
		got := ""
		switch {
		case errors.Is(err, ErrChanged):
			got = "!changed"
		case errors.Is(err, os.ErrNotExist):
			got = "!missing"
		case errors.Is(err, os.ErrInvalid):
			got = "!invalid"
		case err != nil:
			got = "!" + err.Error()
		default:
			b, _ := io.ReadAll(f)
			f.Close()
			got = string(b)
		}
		if got != tt.want {
			t.Errorf("Open(%s) = %q, want %q", tt.rel, got, tt.want)
		}
	}
}
