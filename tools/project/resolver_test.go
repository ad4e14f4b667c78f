package project

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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
			if err != nil || pr.Root != tt.want || !strings.HasPrefix(pr.Name, filepath.Base(tt.want)) {
				t.Fatalf("project %+v, %v; want root %s", pr, err, tt.want)
			}
		})
	}
	if !tooWide(string(filepath.Separator)) || !tooWide(home) || tooWide(repo) {
		t.Fatal("tooWide misjudges /, home or a repository")
	}
}

// TestProjectIdentityOutsideGit: two unrelated folders with the same name outside git
// (~/a/docs, ~/b/docs) used to share the collection claude-code-docs, so sync --prune in
// one deleted the other's documents. Outside git the name carries a hash of the full path;
// a git work tree keeps its base name (clones of one repository share a collection).
func TestProjectIdentityOutsideGit(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a", "docs"), filepath.Join(base, "b", "docs")
	ga, gb := filepath.Join(base, "ga", "docs"), filepath.Join(base, "gb", "docs")
	for _, d := range []string{a, b, filepath.Join(ga, ".git"), filepath.Join(gb, ".git")} {
		mustMkdir(t, d)
	}
	project := func(dir string) Project {
		t.Helper()
		pr, err := NewResolver(Options{WorkDir: dir, CacheFile: "-"}).Project(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	pa, pb := project(a), project(b)
	if pa.CollectionName == pb.CollectionName || pa.Name == pb.Name {
		t.Fatalf("unrelated folders share a project: %q and %q", pa.CollectionName, pb.CollectionName)
	}
	for _, pr := range []Project{pa, pb} {
		if !strings.HasPrefix(pr.CollectionName, CollectionPrefix+"docs-") || len(pr.Name) != len("docs-")+8 {
			t.Errorf("project %q: want docs-<8 hex> and its collection", pr.Name)
		}
	}
	if again := project(a); again.CollectionName != pa.CollectionName {
		t.Errorf("the name is not stable: %q then %q", pa.CollectionName, again.CollectionName)
	}
	if pga, pgb := project(ga), project(gb); pga.CollectionName != CollectionPrefix+"docs" || pgb.CollectionName != pga.CollectionName {
		t.Errorf("git clones named docs: %q and %q, want both %q", pga.CollectionName, pgb.CollectionName, CollectionPrefix+"docs")
	}
}
