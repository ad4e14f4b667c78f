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

// priorDoc writes the document r2r-mcp would have written for path with content, by hand
// (as an earlier version or another system did).
func (f *fixture) priorDoc(path, content string) {
	f.t.Helper()
	sha := SHA256([]byte(content))
	if _, err := f.client.CreateDocument(context.Background(), r2r.DocumentCreate{RawText: content,
		ID: VersionID(f.scope.CollectionID, f.scope.UserID, path, sha), CollectionIDs: []string{f.scope.CollectionID},
		Metadata: map[string]any{MetaSource: SourceValue, MetaSourcePath: path, MetaProject: f.scope.Project, MetaContentSHA: sha}}); err != nil {
		f.t.Fatal(err)
	}
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
	f.priorDoc(bad, "latin-1 name")
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
			f.priorDoc(long, "deep") // written by a system with a longer limit
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

// TestSyncActsOnlyOnProvenDocuments: documents that carry r2r-mcp's metadata but not the id
// r2r-mcp derives from it (written by another client of the same account, or by r2r-mcp
// for another collection and added to this one) are neither pruned, replaced, nor taken
// as a file's current version.
func TestSyncActsOnlyOnProvenDocuments(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	ctx := context.Background()
	forge := func(path, content string) {
		t.Helper()
		if _, err := f.client.CreateDocument(ctx, r2r.DocumentCreate{RawText: "forged " + content,
			CollectionIDs: []string{f.scope.CollectionID}, Metadata: map[string]any{MetaSource: SourceValue, MetaIngestedBy: SourceValue,
				MetaSourcePath: path, MetaProject: f.scope.Project, MetaContentSHA: SHA256([]byte(content))}}); err != nil {
			t.Fatal(err)
		}
	}
	f.write("a.md", "alpha")
	forge("a.md", "alpha")       // claims to be a.md's current version
	forge("gone.md", "whatever") // claims a file that does not exist
	// A document r2r-mcp wrote for this project in another collection, added to this one.
	other, err := f.client.CreateCollection(ctx, "other", "")
	if err != nil {
		t.Fatal(err)
	}
	w := f.writer()
	w.Scope.CollectionID = other.ID
	o, err := w.Put(ctx, File{Path: "moved.md", Data: []byte("moved")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client.AddDocumentToCollection(ctx, f.scope.CollectionID, o.DocumentID); err != nil {
		t.Fatal(err)
	}
	f.r2r.ResetCounts()
	sum := f.syncOnce(f.syncer(true))
	if !slices.Equal(sum.Uploaded, []string{"a.md"}) || len(sum.Deleted) != 0 || len(sum.Replaced) != 0 || !sum.OK() {
		t.Fatalf("sync: %+v", sum)
	}
	if n := f.r2r.Count("DELETE /v3/documents/{id}"); n != 0 {
		t.Fatalf("%d documents deleted", n)
	}
}

// TestManifestProvesExtraRootDocuments: both ways r2r-mcp names a document of an extra
// root (r2r_ingest_document: "<base>/<path>" with the id from the root's tag; a sync over
// HTTP: the path itself) are proven and found in the manifest.
func TestManifestProvesExtraRootDocuments(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	ctx := context.Background()
	w := f.writer()
	w.Scope.Root = "extra:abcd1234"
	for _, file := range []File{{Path: "notes/a.md", IDPath: "extra:abcd1234/a.md", Data: []byte("a")}, {Path: "b.md", Data: []byte("b")}} {
		if _, err := w.Put(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
	}
	m, err := LoadManifest(ctx, f.client, w.Scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Paths["notes/a.md"]) != 1 || len(m.Paths["b.md"]) != 1 {
		t.Fatalf("manifest %+v", m.Paths)
	}
}

// TestSyncUnreadableKnownFileKeepsPruning: a file that cannot be read but already has its
// document keeps that document and is listed with the reason; the documents of deleted
// files are pruned all the same. A new file that cannot be read (it may be a moved one)
// still stops all pruning.
func TestSyncUnreadableKnownFileKeepsPruning(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	f.write("a.md", "a")
	f.write("b.md", "b")
	if sum := f.syncOnce(f.syncer(true)); len(sum.Uploaded) != 2 {
		t.Fatalf("first %+v", sum)
	}
	f.remove("b.md")
	f.write("a.md", "a, edited")
	s := f.syncer(true)
	s.Opts.Files = failingFiles{FileReader: s.Opts.Files, fail: "a.md"}
	sum := f.syncOnce(s)
	if !slices.Equal(sum.Deleted, []string{"b.md"}) || sum.PruneSkipped != "" || len(sum.Refused) != 1 || sum.Refused[0].Path != "a.md" {
		t.Fatalf("sync: %+v", sum)
	}
	if m, err := LoadManifest(context.Background(), f.client, f.scope); err != nil || len(m.Paths["a.md"]) != 1 {
		t.Fatalf("a.md's document: %+v %v", m, err)
	}
}
