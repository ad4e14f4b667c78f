package kbsync

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func TestPutUploadsReplacesAndKeepsCurrent(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	w := f.writer()
	ctx := context.Background()
	put := func(content string) Outcome {
		t.Helper()
		old, err := Versions(ctx, f.client, f.scope, "docs/a.md")
		if err != nil {
			t.Fatal(err)
		}
		o, err := w.Put(ctx, File{Path: "docs/a.md", Data: []byte(content)}, old)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	first := put("# Ledger\n\nThe walrus ledger balances.")
	if first.Action != Uploaded || !first.Sent || first.Status != r2r.IngestionSuccess {
		t.Fatalf("first = %+v", first)
	}
	doc, err := f.client.GetDocument(ctx, first.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	md := doc.Metadata
	if md[MetaSourcePath] != "docs/a.md" || md[MetaContentSHA] != first.SHA || md[MetaSource] != SourceValue ||
		md[MetaProject] != "demo" || md["title"] != "docs/a.md" || !slices.Contains(doc.CollectionIDs, f.scope.CollectionID) {
		t.Fatalf("document = %+v", doc)
	}

	posts := f.r2r.Count("POST /v3/documents")
	if again := put("# Ledger\n\nThe walrus ledger balances."); again.Action != Unchanged || again.Sent || again.DocumentID != first.DocumentID {
		t.Fatalf("again = %+v", again)
	}
	if n := f.r2r.Count("POST /v3/documents") - posts; n != 0 {
		t.Fatalf("unchanged content sent %d uploads", n)
	}

	second := put("# Ledger\n\nThe narwhal ledger balances.")
	if second.Action != Replaced || !slices.Equal(second.Deleted, []string{first.DocumentID}) || second.DocumentID == first.DocumentID {
		t.Fatalf("second = %+v", second)
	}
	if h := f.hits("narwhal"); !slices.Equal(h, []string{"docs/a.md"}) {
		t.Fatalf("new text: hits %v", h)
	}
	if h := f.hits("walrus"); len(h) != 0 {
		t.Fatalf("old text still found: %v", h)
	}
}

// TestPutFailedIngestKeepsOld: R2R fails the new version (the emulator fails .md that is
// not UTF-8); the old version stays and is still found.
func TestPutFailedIngestKeepsOld(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	w := f.writer()
	ctx := context.Background()
	first, err := w.Put(ctx, File{Path: "a.md", Data: []byte("the walrus")}, nil)
	if err != nil || first.Action != Uploaded {
		t.Fatalf("%+v %v", first, err)
	}
	old, _ := Versions(ctx, f.client, f.scope, "a.md")
	bad, err := w.Put(ctx, File{Path: "a.md", Data: []byte("bad \xff\xfe bytes")}, old)
	if err != nil || bad.Action != Failed || bad.Failure == "" || len(bad.Deleted) != 0 {
		t.Fatalf("bad = %+v, %v", bad, err)
	}
	if h := f.hits("walrus"); !slices.Equal(h, []string{"a.md"}) {
		t.Fatalf("old version lost: %v", h)
	}
	if _, err := f.client.GetDocument(ctx, bad.DocumentID); !errors.Is(err, r2r.ErrNotFound) {
		t.Fatalf("the failed document was left behind: %v", err)
	}
	old, _ = Versions(ctx, f.client, f.scope, "a.md")
	fixed, err := w.Put(ctx, File{Path: "a.md", Data: []byte("the narwhal")}, old)
	if err != nil || fixed.Action != Replaced || !slices.Equal(fixed.Deleted, []string{first.DocumentID}) {
		t.Fatalf("fixed = %+v, %v", fixed, err)
	}
}

// TestReplaceNeverMissesTheFile: with background ingestion walked one step at a time, a
// search between every step finds the file, and ends finding only the new text.
func TestReplaceNeverMissesTheFile(t *testing.T) {
	f := newFixture(t, r2rtest.Options{IngestDelay: time.Hour})
	ctx := context.Background()
	w := f.writer()
	w.Wait = time.Minute
	var first Outcome
	started := f.r2r.IngestionStarted()
	var wg sync.WaitGroup
	wg.Go(func() {
		first, _ = w.Put(ctx, File{Path: "a.md", Data: []byte("the walrus sings")}, nil)
	})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the first upload started no ingestion")
	}
	for f.r2r.StepIngestion() > 0 {
	}
	wg.Wait()
	if first.Action != Uploaded {
		t.Fatalf("first = %+v", first)
	}

	old, _ := Versions(ctx, f.client, f.scope, "a.md")
	var second Outcome
	putDone := make(chan struct{})
	go func() {
		defer close(putDone)
		second, _ = w.Put(ctx, File{Path: "a.md", Data: []byte("the narwhal sings")}, old)
	}()
	// Search before every step, and whenever an ingestion starts, until Put returns.
	steps := 0
	for done := false; !done; {
		started := f.r2r.IngestionStarted()
		if h := f.hits("sings"); len(h) == 0 {
			t.Fatalf("after %d steps the file is not found", steps)
		}
		if f.r2r.StepIngestion() > 0 {
			steps++
			continue
		}
		select {
		case <-putDone:
			done = true
		case <-started:
		}
	}
	if second.Action != Replaced || steps == 0 {
		t.Fatalf("second = %+v after %d steps", second, steps)
	}
	if h := f.hits("walrus"); len(h) != 0 {
		t.Fatalf("old text found after the replacement: %v", h)
	}
	if h := f.hits("narwhal"); len(h) != 1 {
		t.Fatalf("new text: %v", h)
	}
}

// TestPutPendingKeepsOld: a wait that ends before R2R finishes keeps the old version; the
// next Put, once R2R is done, deletes it without sending anything.
func TestPutPendingKeepsOld(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	ctx := context.Background()
	w := f.writer()
	if _, err := w.Put(ctx, File{Path: "a.md", Data: []byte("v1")}, nil); err != nil {
		t.Fatal(err)
	}
	f.r2r.Configure(func(o *r2rtest.Options) { o.IngestDelay = time.Hour })
	w.Wait = time.Nanosecond
	old, _ := Versions(ctx, f.client, f.scope, "a.md")
	p, err := w.Put(ctx, File{Path: "a.md", Data: []byte("v2")}, old)
	if err != nil || p.Action != Pending || len(p.Deleted) != 0 {
		t.Fatalf("pending = %+v, %v", p, err)
	}
	for f.r2r.StepIngestion() > 0 {
	}
	posts := f.r2r.Count("POST /v3/documents")
	old, _ = Versions(ctx, f.client, f.scope, "a.md")
	again, err := w.Put(ctx, File{Path: "a.md", Data: []byte("v2")}, old)
	if err != nil || again.Action != Replaced || len(again.Deleted) != 1 || again.Sent {
		t.Fatalf("again = %+v, %v", again, err)
	}
	if f.r2r.Count("POST /v3/documents") != posts {
		t.Fatal("the finished version was sent again")
	}
}

func TestManifestKeepsOnlyThisScope(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	ctx := context.Background()
	mine := f.writer()
	other := f.writer()
	other.Scope.Project = "other"
	extra := f.writer()
	extra.Scope.Root = "extra:1234"
	for _, p := range []struct {
		w    *Writer
		path string
	}{{mine, "a.md"}, {other, "b.md"}, {extra, "c.md"}} {
		if _, err := p.w.Put(ctx, File{Path: p.path, Data: []byte(p.path)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A document of the collection that r2r-mcp did not write.
	if _, err := f.client.CreateDocument(ctx, r2r.DocumentCreate{RawText: "hand made", CollectionIDs: []string{f.scope.CollectionID},
		Metadata: map[string]any{"source_path": "d.md", "project": "demo"}}); err != nil {
		t.Fatal(err)
	}
	m, err := LoadManifest(ctx, f.client, f.scope)
	if err != nil {
		t.Fatal(err)
	}
	if m.Documents != 4 || len(m.Paths) != 1 || len(m.Paths["a.md"]) != 1 {
		t.Fatalf("manifest = %+v", m)
	}
}

// TestPutWaitsOutRateLimits: through WaitOutRateLimits, calls R2R refuses with 429 are
// sent again after a wait; without it the 429 is returned.
func TestPutWaitsOutRateLimits(t *testing.T) {
	f := newFixture(t, r2rtest.Options{})
	w := f.writer()
	ctx := context.Background()
	f.r2r.ForceStatus("POST /v3/documents", 429, 1)
	if _, err := w.Put(ctx, File{Path: "a.md", Data: []byte("v1")}, nil); !errors.Is(err, r2r.ErrRateLimited) {
		t.Fatalf("without WaitOutRateLimits: %v", err)
	}
	w.API = WaitOutRateLimits(f.client, time.Millisecond)
	f.r2r.ResetCounts()
	f.r2r.ForceStatus("POST /v3/documents", 429, 2)
	f.r2r.ForceStatus("GET /v3/documents/{id}", 429, 1)
	o, err := w.Put(ctx, File{Path: "a.md", Data: []byte("v1")}, nil)
	if err != nil || o.Action != Uploaded || f.r2r.Count("POST /v3/documents") != 3 {
		t.Fatalf("%+v %v, %d POSTs", o, err, f.r2r.Count("POST /v3/documents"))
	}
	f.r2r.ForceStatus("GET /v3/collections/{id}/documents", 429, 1)
	old, err := Versions(ctx, w.API, f.scope, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	f.r2r.ForceStatus("DELETE /v3/documents/{id}", 429, 1)
	o, err = w.Put(ctx, File{Path: "a.md", Data: []byte("v2")}, old)
	if err != nil || o.Action != Replaced || len(o.Deleted) != 1 {
		t.Fatalf("%+v %v", o, err)
	}
}
