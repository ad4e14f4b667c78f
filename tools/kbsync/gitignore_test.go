package kbsync

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ignoreTree is the work tree every case of TestIgnoreMatchesGit lists.
var ignoreTree = []string{
	"private2.md", "privbte2.md", "privAte2.md", "priv[!a]te2.md", "[x].md", "x.md", "a.md", "A.MD", "b.txt", "c.go",
	"cache/keep.md", "cache/other.md", "cache/sub/x.md",
	"docs/a.md", "docs/b.txt", "docs/deep/c.md", "docs/deep/er/d.md", "docs/deep/er/e.txt",
	"build/out.o", "src/build/x.go", "src/main.go", "src/docs/a.md",
	"x/y/z/w.txt", "x/w.txt", "x/y/w.txt",
	"#hash.md", "!bang.md", "a b.md", "trail ", "back\\slash.md", "q?.md",
	"log/app.log", "app.log", "sub/app.log", "sub/.hidden", ".hidden",
	"abc/def/ghi.md", "def/ghi.md", "foo/**/bar.md", "foo/a/b/bar.md", "foo/bar.md",
	"1.md", "9.md", "-.md", "].md", "^.md",
}

// TestIgnoreMatchesGit: outside git, the files listed are exactly those git lists with
// `git ls-files -co --exclude-standard` for the same tree and .gitignore files, over
// patterns that exercise git's rules (classes with '!' and '^', negation, directory
// rules, "**", escapes, anchoring, nested files, trailing spaces, CRLF).
func TestIgnoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir() // no global excludes file of the machine's user
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	cases := []map[string]string{
		{".gitignore": "priv[!a]te2.md\n"},
		{".gitignore": "priv[^a]te2.md\n"},
		{".gitignore": "priv[!a-z]te2.md\n"},
		{".gitignore": "cache/*\n!cache/keep.md\n"},
		{".gitignore": "cache/\n!cache/keep.md\n"},
		{".gitignore": "cache\n!cache/keep.md\n"},
		{".gitignore": "*.md\n!docs/*.md\n"},
		{".gitignore": "*.md\n!/docs/\n"},
		{".gitignore": "/docs/\n"},
		{".gitignore": "docs/\n"},
		{".gitignore": "deep/\n"},
		{".gitignore": "**/deep\n"},
		{".gitignore": "docs/**\n"},
		{".gitignore": "docs/**/d.md\n"},
		{".gitignore": "docs/**/*.txt\n"},
		{".gitignore": "**/*.md\n"},
		{".gitignore": "foo/**/bar.md\n"},
		{".gitignore": "foo/\\*\\*/bar.md\n"},
		{".gitignore": "x/**/w.txt\n"},
		{".gitignore": "x/*/w.txt\n"},
		{".gitignore": "x/**\n!x/y/\n"},
		{".gitignore": "x**\n"},
		{".gitignore": "**x\n"},
		{".gitignore": "a**/*.md\n"},
		{".gitignore": "*.log\n!sub/app.log\n"},
		{".gitignore": "log/\n/app.log\n"},
		{".gitignore": "\\#hash.md\n\\!bang.md\n"},
		{".gitignore": "#hash.md\n!bang.md\n"},
		{".gitignore": "a b.md   \ntrail\\ \n"},
		{".gitignore": "trail\n"},
		{".gitignore": "[[:upper:]].MD\n[[:digit:]].md\n"},
		{".gitignore": "[a-c]*.md\n"},
		{".gitignore": "[!a-c]*\n!*/\n"},
		{".gitignore": "[]].md\n[\\^].md\n[a-].md\n"},
		{".gitignore": "\\[x\\].md\n"},
		{".gitignore": "[x].md\n"},
		{".gitignore": "[[:bogus:]].md\n*.txt\n"},
		{".gitignore": "[abc\n*.go\n"},
		{".gitignore": "q?.md\n?.md\n"},
		{".gitignore": "back\\\\slash.md\n"},
		{".gitignore": "*\n!*/\n!*.md\n"},
		{".gitignore": "*\n!.gitignore\n"},
		{".gitignore": "abc/def\ndef/ghi.md\n"},
		{".gitignore": "/*.md\n"},
		{".gitignore": "src/**\n!src/main.go\n"},
		{".gitignore": "**/build\n"},
		{".gitignore": "build/\n"},
		{".gitignore": ".hidden\n"},
		{".gitignore": "*.log\r\n*.txt\r\n"},
		{".gitignore": "\xef\xbb\xbf*.md\n"},
		{".gitignore": "docs/*\n!docs/deep/\ndocs/deep/*\n!docs/deep/c.md\n"},
		{".gitignore": "*.md\n", "docs/.gitignore": "!a.md\n"},
		{"docs/.gitignore": "*.txt\n!b.txt\n"},
		{"docs/.gitignore": "/deep\n"},
		{"docs/.gitignore": "deep/er/\n"},
		{"docs/.gitignore": "/a.md\n", ".gitignore": "!docs/a.md\n"},
		{".gitignore": "docs/deep/\n", "docs/deep/.gitignore": "!c.md\n"},
		{"src/.gitignore": "docs/\n", ".gitignore": "/docs/a.md\n"},
		{"x/.gitignore": "**/w.txt\n!y/w.txt\n"},
		{".git/info/exclude": "*.md\n", "docs/.gitignore": "!a.md\n"},
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range ignoreTree {
		writeFile(t, root, rel, "x")
	}
	if out, err := gitCommand(context.Background(), root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for i, files := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for rel, content := range files {
				writeFile(t, root, rel, content)
				defer os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
			}
			for _, prefix := range []string{"", "docs", "docs/deep"} {
				walked, _, err := walkFiles(root, prefix)
				if err != nil {
					t.Fatal(err)
				}
				listed, err := gitLsFiles(context.Background(), filepath.Join(root, prefix))
				if err != nil {
					t.Fatal(err)
				}
				for i := range listed {
					listed[i] = path.Join(prefix, listed[i])
				}
				slices.Sort(walked)
				slices.Sort(listed)
				if !slices.Equal(walked, listed) {
					t.Errorf(".gitignore files %q, in %q:\nonly outside git: %q\nonly in git: %q", files, prefix,
						minus(walked, listed), minus(listed, walked))
				}
			}
		})
	}
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, strings.Clone(s))
		}
	}
	return out
}

// TestWildmatch: git's own wildmatch cases that the table above does not reach.
func TestWildmatch(t *testing.T) {
	for _, tt := range []struct {
		pattern, text string
		want          bool
	}{
		{"foo", "foo", true},
		{"foo/*", "foo/bar/baz", false},
		{"**/foo", "foo", true},
		{"**/foo", "a/b/foo", true},
		{"foo/**", "foo/a/b", true},
		{"foo/**", "foo", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**b", "a/x/b", false},
		{"*.c", "dir/x.c", false},
		{"[a-c]", "b", true},
		{"[!a-c]", "b", false},
		{"[^a-c]", "d", true},
		{"[]]", "]", true},
		{"[]-]", "-", true},
		{"[[:alpha:]]", "x", true},
		{"[[:alpha:]]", "1", false},
		{"[[:xdigit:]]", "F", true},
		{"\\*", "*", true},
		{"\\*", "x", false},
		{"a?c", "a/c", false},
		{"[a/]", "/", false},
		{"[abc", "a", false},
	} {
		if got := wildmatch(tt.pattern, tt.text, true); got != tt.want {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", tt.pattern, tt.text, got, tt.want)
		}
	}
}
