package kbsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// countingFiles counts the files read.
type countingFiles struct {
	FileReader
	n atomic.Int64
}

func (c *countingFiles) ReadFile(rel string) (File, error) {
	c.n.Add(1)
	return c.FileReader.ReadFile(rel)
}

func TestSyncUploadsReplacesPrunes(t *testing.T) {
	for _, useGit := range []bool{true, false} {
		t.Run(fmt.Sprintf("git=%v", useGit), func(t *testing.T) {
			f := newFixture(t, r2rtest.Options{})
			if useGit {
				f.git("init", "-q")
			}
			f.write(".gitignore", "build/\n*.log\n")
			f.write("README.md", "# Demo\n\nThe walrus project.")
			f.write("cmd/main.go", "package main\n\n// narwhal entry point\nfunc main() {}\n")
			f.write("deploy/app.yaml", "name: otter\n")
			f.write("build/out.md", "generated")
			f.write("debug.log", "noise")
			f.write("config/secret.yaml", "token: x")
			f.write("logo.bin", "\x00\x01\x02")
			ctx := context.Background()

			s := f.syncer(true)
			plan, err := s.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			paths := func(items []Item) []string {
				var out []string
				for _, it := range items {
					out = append(out, it.Path)
				}
				return out
			}
			if got, want := paths(plan.Upload), []string{".gitignore", "README.md", "cmd/main.go", "deploy/app.yaml"}; !slices.Equal(got, want) {
				t.Fatalf("upload %v, want %v", got, want)
			}
			if len(plan.Refused) != 2 || plan.Refused[0].Path != "config/secret.yaml" || plan.Refused[1].Path != "logo.bin" {
				t.Fatalf("refused %+v", plan.Refused)
			}
			sum := s.Run(ctx, plan, nil)
			if len(sum.Uploaded) != 4 || !sum.OK() || f.r2r.Count("POST /v3/documents") != 4 {
				t.Fatalf("first sync %+v", sum)
			}
			if h := f.hits("narwhal"); !slices.Equal(h, []string{"cmd/main.go"}) {
				t.Fatalf("the .go file is not searchable: %v", h)
			}
			if h := f.hits("otter"); !slices.Equal(h, []string{"deploy/app.yaml"}) {
				t.Fatalf("the .yaml file is not searchable: %v", h)
			}

			f.write("README.md", "# Demo\n\nThe beluga project.")
			f.remove("deploy/app.yaml")
			f.r2r.ResetCounts()
			plan, err = f.syncer(true).Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Replace) != 1 || len(plan.Delete) != 1 || len(plan.Upload) != 0 || plan.Unchanged != 2 {
				t.Fatalf("second plan %+v", plan)
			}
			sum = f.syncer(true).Run(ctx, plan, nil)
			if !slices.Equal(sum.Replaced, []string{"README.md"}) || !slices.Equal(sum.Deleted, []string{"deploy/app.yaml"}) {
				t.Fatalf("second sync %+v", sum)
			}
			if c := f.r2r.Counts(); c["POST /v3/documents"] != 1 || c["DELETE /v3/documents/{id}"] != 2 {
				t.Fatalf("requests %v", c)
			}
			if h := f.hits("walrus"); len(h) != 0 {
				t.Fatalf("old text found: %v", h)
			}
			if h := f.hits("otter"); len(h) != 0 {
				t.Fatalf("pruned file found: %v", h)
			}
		})
	}
}

func TestSyncWithoutPruneKeepsStale(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("a.md", "a")
	f.write("b.md", "b")
	ctx := context.Background()
	s := f.syncer(false)
	plan, _ := s.Plan(ctx)
	s.Run(ctx, plan, nil)
	f.remove("b.md")
	plan, err := f.syncer(false).Plan(ctx)
	if err != nil || len(plan.Delete) != 0 || plan.Stale != 1 || plan.Unchanged != 1 {
		t.Fatalf("plan %+v, %v", plan, err)
	}
}

// TestSyncIncompleteScanPrunesNothing: a file that cannot be checked makes the scan
// incomplete, so nothing is pruned.
func TestSyncIncompleteScanPrunesNothing(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("a.md", "a")
	f.write("b.md", "b")
	ctx := context.Background()
	s := f.syncer(true)
	plan, _ := s.Plan(ctx)
	s.Run(ctx, plan, nil)
	f.remove("b.md")
	f.write("c.md", "c")
	s = f.syncer(true)
	s.Opts.Files = failingFiles{FileReader: s.Opts.Files, fail: "c.md"}
	plan, err := s.Plan(ctx)
	if err != nil || len(plan.Delete) != 0 || plan.PruneSkipped == "" || plan.Stale != 1 {
		t.Fatalf("plan %+v, %v", plan, err)
	}
}

type failingFiles struct {
	FileReader
	fail string
}

func (f failingFiles) ReadFile(rel string) (File, error) {
	if rel == f.fail {
		return File{}, errors.New("input/output error")
	}
	return f.FileReader.ReadFile(rel)
}

// TestSyncSecondRunReadsNothing: with the hash cache, an unchanged tree is not read again
// and nothing is uploaded.
func TestSyncSecondRunReadsNothing(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	for i := range 20 {
		f.write(fmt.Sprintf("docs/%02d.md", i), fmt.Sprintf("doc %d", i))
	}
	cacheFile := filepath.Join(t.TempDir(), "hashes.json")
	old := time.Now().Add(-time.Hour) // outside the racy window
	ctx := context.Background()
	run := func() (*Summary, int64) {
		s := f.syncer(true)
		files := &countingFiles{FileReader: s.Opts.Files}
		s.Opts.Files = files
		s.Opts.Hashes = OpenHashCache(cacheFile)
		s.Opts.Hashes.now = func() time.Time { return old.Add(2 * time.Hour) }
		plan, err := s.Plan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Run(ctx, plan, nil), files.n.Load()
	}
	if sum, _ := run(); len(sum.Uploaded) != 20 {
		t.Fatalf("first %+v", sum)
	}
	posts := f.r2r.Count("POST /v3/documents")
	sum, reads := run()
	if sum.Unchanged != 20 || reads != 0 || f.r2r.Count("POST /v3/documents") != posts {
		t.Fatalf("second run: %+v, %d reads", sum, reads)
	}
}

func TestSyncGlobs(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("docs/a.md", "a")
	f.write("docs/drafts/b.md", "b")
	f.write("src/c.go", "package c")
	f.write("go.sum", "x")
	s := f.syncer(false)
	s.Opts.Globs = Globs{Include: []string{"docs/**", "*.go"}, Exclude: []string{"docs/drafts/**"}}
	plan, err := s.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range plan.Upload {
		got = append(got, it.Path)
	}
	if !slices.Equal(got, []string{"docs/a.md", "src/c.go"}) {
		t.Fatalf("selected %v", got)
	}
	s.Opts.Globs = Globs{Include: []string{"[bad"}}
	if _, err := s.Plan(context.Background()); err == nil {
		t.Fatal("a malformed glob was accepted")
	}
}

func TestLockIsExclusive(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir, "k"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v", err)
	}
	unlock()
	unlock2, err := Lock(dir, "k")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// TestSyncSubdirectoryPrunesOnlyThere: syncing a subdirectory with prune leaves the
// documents of files elsewhere in the project alone.
func TestSyncSubdirectoryPrunesOnlyThere(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("docs/a.md", "a")
	f.write("src/b.go", "package b")
	ctx := context.Background()
	s := f.syncer(true)
	plan, _ := s.Plan(ctx)
	if sum := s.Run(ctx, plan, nil); len(sum.Uploaded) != 2 {
		t.Fatalf("%+v", sum)
	}
	f.remove("docs/a.md")
	f.write("docs/c.md", "c")
	s = f.syncer(true)
	s.Opts.Dir = filepath.Join(f.root, "docs")
	plan, err := s.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Upload) != 1 || plan.Upload[0].Path != "docs/c.md" || len(plan.Delete) != 1 || plan.Delete[0].Path != "docs/a.md" {
		t.Fatalf("plan %+v", plan)
	}
}
