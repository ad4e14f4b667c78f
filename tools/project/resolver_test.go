package project

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestProjectRootIsNeverHomeOrTheFileSystemRoot(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	mustMkdir(t, filepath.Join(home, ".git")) // a dotfiles repository
	loose := filepath.Join(home, "notes", "sub")
	mustMkdir(t, loose)
	repo := filepath.Join(home, "code", "app")
	mustMkdir(t, filepath.Join(repo, ".git"))
	mustMkdir(t, filepath.Join(repo, "pkg"))

	for _, tt := range []struct {
		name, start, want string
	}{
		{"a directory under a dotfiles home is its own project", loose, loose},
		{"a real repository inside home", filepath.Join(repo, "pkg"), repo},
		{"home itself", home, home},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := NewResolver(Options{WorkDir: tt.start, CacheFile: "-"})
			pr, err := p.Project(context.Background())
			if err != nil || pr.Root != tt.want || pr.Name != filepath.Base(tt.want) {
				t.Fatalf("project %+v, %v; want root %s", pr, err, tt.want)
			}
		})
	}
	if !tooWide(string(filepath.Separator)) || !tooWide(home) || tooWide(repo) {
		t.Fatal("tooWide misjudges /, home or a repository")
	}
}
