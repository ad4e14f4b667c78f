package kbsync

import (
	"context"
	"slices"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestWalkHonoursNestedGitignore: outside git, .gitignore files of the root and of
// subdirectories apply, deeper rules override outer ones, and .git is never listed.
func TestWalkHonoursNestedGitignore(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	for rel, content := range map[string]string{
		".gitignore":         "*.log\nnode_modules/\n/top-only.md\n",
		"a.md":               "",
		"top-only.md":        "",
		"x.log":              "",
		"docs/top-only.md":   "",
		"docs/.gitignore":    "!keep.log\ndrafts/\n",
		"docs/keep.log":      "",
		"docs/other.log":     "",
		"docs/drafts/d.md":   "",
		"node_modules/m.js":  "",
		"sub/node_modules/n": "",
		".git/config":        "",
		"docs/deep/ok.txt":   "",
		"docs/deep/skip.log": "",
	} {
		f.write(rel, content)
	}
	got, err := ListFiles(context.Background(), f.root, f.root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".gitignore", "a.md", "docs/.gitignore", "docs/deep/ok.txt", "docs/keep.log", "docs/top-only.md"}
	if !slices.Equal(got, want) {
		t.Fatalf("listed %v\nwant %v", got, want)
	}
	// A subdirectory still honours the root's rules.
	got, err = ListFiles(context.Background(), f.root, f.root+"/docs")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"docs/.gitignore", "docs/deep/ok.txt", "docs/keep.log", "docs/top-only.md"}; !slices.Equal(got, want) {
		t.Fatalf("listed %v\nwant %v", got, want)
	}
}

func TestGlobsMatch(t *testing.T) {
	for _, tt := range []struct {
		g    Globs
		path string
		want bool
	}{
		{Globs{}, "a/b.go", true},
		{Globs{Include: []string{"*.md"}}, "docs/a.md", true},
		{Globs{Include: []string{"*.md"}}, "docs/a.go", false},
		{Globs{Include: []string{"docs/**"}}, "docs/x/y.go", true},
		{Globs{Include: []string{"docs/"}}, "docs/x/y.go", true},
		{Globs{Exclude: []string{"**/testdata/**"}}, "a/testdata/b.md", false},
		{Globs{Include: []string{"**/*.go"}, Exclude: []string{"*_test.go"}}, "x/y_test.go", false},
		{Globs{Include: []string{"**/*.go"}, Exclude: []string{"*_test.go"}}, "x/y.go", true},
	} {
		if got := tt.g.Match(tt.path); got != tt.want {
			t.Errorf("%+v.Match(%q) = %v, want %v", tt.g, tt.path, got, tt.want)
		}
	}
}
