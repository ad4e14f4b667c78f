package kbsync

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// syncOnce plans and runs one sync and returns the summary.
func (f *fixture) syncOnce(s *Syncer) *Summary {
	f.t.Helper()
	ctx := context.Background()
	plan, err := s.Plan(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return s.Run(ctx, plan, nil)
}

// TestSyncInvalidUTF8NameIsRefusedAndNeverPruned: a file whose name is not valid UTF-8
// is refused with its reason, and pruning never deletes a document it could be (one
// written for it under the name R2R stored, with U+FFFD), however often sync runs.
func TestSyncInvalidUTF8NameIsRefusedAndNeverPruned(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	bad := "notes/caf\xe9.md"
	f.write(bad, "latin-1 name")
	f.write("good.md", "good")
	// What an earlier version wrote for it: R2R stored the name with U+FFFD.
	if _, err := f.client.CreateDocument(context.Background(), r2r.DocumentCreate{RawText: "latin-1 name",
		CollectionIDs: []string{f.scope.CollectionID}, Metadata: map[string]any{MetaSource: SourceValue,
			MetaSourcePath: bad, MetaProject: f.scope.Project, MetaContentSHA: SHA256([]byte("latin-1 name"))}}); err != nil {
		t.Fatal(err)
	}
	for run := range 3 {
		sum := f.syncOnce(f.syncer(true))
		if len(sum.Deleted) != 0 || !sum.OK() {
			t.Fatalf("run %d deleted %v (failed %+v)", run, sum.Deleted, sum.Failed)
		}
		if len(sum.Refused) != 1 || sum.Refused[0].Path != bad || sum.Refused[0].Kind != "invalid_file_name" {
			t.Fatalf("run %d refused %+v", run, sum.Refused)
		}
		if run == 0 && !slices.Equal(sum.Uploaded, []string{"good.md"}) {
			t.Fatalf("uploaded %v", sum.Uploaded)
		}
	}
	if n := f.r2r.Count("DELETE /v3/documents/{id}"); n != 0 {
		t.Fatalf("%d documents deleted", n)
	}
	// Written on its own (as r2r_ingest_document does), it is refused too.
	if _, err := f.writer().Put(context.Background(), File{Path: bad, Data: []byte("x")}, nil); err == nil {
		t.Fatal("a name that is not UTF-8 was written")
	}
}

// TestSyncFailedFileSparesOnlyWhatItCouldBe: a file that fails to upload keeps from
// pruning only the document with its content (a moved file's only copy); the documents of
// files really deleted are pruned, exactly those.
func TestSyncFailedFileSparesOnlyWhatItCouldBe(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("a.md", "alpha")
	f.write("b.md", "beta")
	f.write("c.md", "gamma")
	if sum := f.syncOnce(f.syncer(true)); len(sum.Uploaded) != 3 {
		t.Fatalf("first %+v", sum)
	}
	f.remove("b.md")             // deleted
	f.remove("c.md")             // moved to d.md, whose upload fails
	f.write("d.md", "gamma")     //
	f.write("big.md", "too big") // a new file whose upload fails
	f.r2r.ResetCounts()
	f.r2r.ForceStatus("POST /v3/documents", 400, 2)
	sum := f.syncOnce(f.syncer(true))
	if len(sum.Failed) != 2 || !slices.Equal(sum.Deleted, []string{"b.md"}) || sum.Stale != 1 || sum.PruneSkipped == "" {
		t.Fatalf("prune with failures: %+v", sum)
	}
	// Once d.md is uploaded, c.md's document goes too.
	sum = f.syncOnce(f.syncer(true))
	if !sum.OK() || !slices.Equal(sum.Deleted, []string{"c.md"}) || !slices.Equal(sum.Uploaded, []string{"big.md", "d.md"}) || sum.Stale != 0 {
		t.Fatalf("next prune: %+v", sum)
	}
}

// longPath creates a file below f.root whose absolute path is longer than PATH_MAX
// (created one directory at a time, relative to the last) and returns its relative path.
func (f *fixture) longPath(content string) string {
	f.t.Helper()
	r, err := os.OpenRoot(f.root)
	if err != nil {
		f.t.Fatal(err)
	}
	comp := strings.Repeat("d", 200)
	var parts []string
	for range 25 {
		if err := r.Mkdir(comp, 0o755); err != nil {
			f.t.Fatal(err)
		}
		next, err := r.OpenRoot(comp)
		r.Close()
		if err != nil {
			f.t.Fatal(err)
		}
		r, parts = next, append(parts, comp)
	}
	defer r.Close()
	if err := r.WriteFile("deep.md", []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return strings.Join(append(parts, "deep.md"), "/")
}

// TestSyncSkipsPathLongerThanPathMax: a file whose path is longer than the system allows
// is refused with its reason, the other files are synced, and pruning leaves its
// document (and those of anything below an unreadable directory) alone.
func TestSyncSkipsPathLongerThanPathMax(t *testing.T) {
	for _, useGit := range []bool{false, true} {
		t.Run(fmt.Sprintf("git=%v", useGit), func(t *testing.T) {
			f := newFixture(t, r2rtest.Options{})
			if useGit {
				f.git("init", "-q")
			}
			for i := range 20 {
				f.write(fmt.Sprintf("docs/%02d.md", i), fmt.Sprintf("doc %d", i))
			}
			long := f.longPath("deep")
			// A document written for it earlier (by a system with a longer limit).
			if _, err := f.client.CreateDocument(context.Background(), r2r.DocumentCreate{RawText: "deep",
				CollectionIDs: []string{f.scope.CollectionID}, Metadata: map[string]any{MetaSource: SourceValue,
					MetaSourcePath: long, MetaProject: f.scope.Project, MetaContentSHA: SHA256([]byte("deep"))}}); err != nil {
				t.Fatal(err)
			}
			sum := f.syncOnce(f.syncer(true))
			if len(sum.Uploaded) != 20 || !sum.OK() || len(sum.Deleted) != 0 || sum.PruneSkipped != "" {
				t.Fatalf("sync: %+v", sum)
			}
			if len(sum.Refused) != 1 || sum.Refused[0].Kind != "path_too_long" || !strings.HasPrefix(long, sum.Refused[0].Path) {
				t.Fatalf("refused %+v", sum.Refused)
			}
		})
	}
}
