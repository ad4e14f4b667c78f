package kbsync

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// head is the commit HEAD names, read with the test's own git.
func (f *fixture) head() string {
	f.t.Helper()
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = f.root
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func (f *fixture) commit(msg string) string {
	f.t.Helper()
	f.git("add", "-A")
	f.git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--no-verify", "-m", msg)
	return f.head()
}

// TestChangedSinceComparesCommits: the paths that differ between a commit and HEAD,
// deleted ones included, and nothing else; a commit id that is not one is refused before
// git sees it.
func TestChangedSinceComparesCommits(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.git("init", "-q")
	f.write("a.go", "one")
	f.write("b.go", "one")
	f.write("c.go", "one")
	first := f.commit("first")
	if got := Head(context.Background(), f.root); got != first {
		t.Fatalf("Head = %q, want %q", got, first)
	}
	f.write("a.go", "two")
	f.remove("c.go")
	f.write("d.go", "new")
	f.commit("second")
	for _, tc := range []struct {
		paths, want []string
	}{
		{[]string{"a.go", "b.go", "c.go"}, []string{"a.go", "c.go"}},
		{[]string{"b.go"}, nil},
		{[]string{"*.go"}, nil}, // literal, not a glob
		{[]string{":(glob)*.go"}, nil},
	} {
		t.Run(strings.Join(tc.paths, ","), func(t *testing.T) {
			got, err := ChangedSince(context.Background(), f.root, first, "", tc.paths)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ChangedSince = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"HEAD", "--output=/tmp/x", strings.Repeat("g", 40), first[:12]} {
		if _, err := ChangedSince(context.Background(), f.root, bad, "", []string{"a.go"}); err == nil {
			t.Errorf("commit %q accepted", bad)
		}
	}
}

// TestChangedSinceRunsNoCommandOfTheRepository: Head and ChangedSince in a repository
// whose config and the caller's environment name a command for every key git could run
// one through run none of them.
func TestChangedSinceRunsNoCommandOfTheRepository(t *testing.T) {
	for _, env := range []bool{false, true} {
		t.Run(fmt.Sprintf("env=%v", env), func(t *testing.T) {
			f := newFixture(t, r2rtest.Options{})
			f.git("init", "-q")
			f.write("README.md", "one")
			first := f.commit("first")
			f.write("README.md", "two")
			second := f.commit("second")
			markers := hostileRepo(t, f, env)
			f.write("README.md", "three, not committed")
			ctx := context.Background()
			if got := Head(ctx, f.root); got != second {
				t.Errorf("Head = %q, want %q", got, second)
			}
			got, err := ChangedSince(ctx, f.root, first, "", []string{"README.md", "docs/guide.md"})
			if err != nil || !slices.Equal(got, []string{"README.md"}) {
				t.Errorf("ChangedSince = %v, %v", got, err)
			}
			if ran := ranMarkers(t, markers); len(ran) > 0 {
				t.Fatalf("git ran commands of the repository or the caller's environment: %v", ran)
			}
		})
	}
}
