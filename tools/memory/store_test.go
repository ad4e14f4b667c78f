package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func roundTripJSON(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type storeFixture struct {
	t      *testing.T
	srv    *r2rtest.Server
	client *r2r.Client
	store  *Store
	userID string
}

func newStoreFixture(t *testing.T, opts r2rtest.Options) *storeFixture {
	t.Helper()
	srv := r2rtest.NewServer(t, opts)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	coll, err := c.CreateCollection(context.Background(), "claude-code-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.Me(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &storeFixture{t: t, srv: srv, client: c, store: &Store{API: c, CollectionID: coll.ID, Poll: time.Millisecond}, userID: me.ID}
}

func (f *storeFixture) save(d Draft) Saved {
	f.t.Helper()
	n, err := Normalise(d)
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := f.store.Remember(context.Background(), n, Stamp{UserID: f.userID, Time: time.Now()})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// stepAll walks every background ingestion to its end (the emulator with IngestDelay of
// an hour moves only when told).
func (f *storeFixture) stepAll() {
	for f.srv.Ingesting() > 0 {
		f.srv.StepIngestion()
	}
}

// deleteSpy checks, at the moment the old memory is deleted, that the new one has been
// ingested and is found by a search: there is no moment in which neither is.
type deleteSpy struct {
	*r2r.Client
	old, new string
	checked  atomic.Bool
	failure  atomic.Value
}

func (s *deleteSpy) DeleteDocument(ctx context.Context, id string) error {
	if id == s.old {
		s.checked.Store(true)
		doc, err := s.Client.GetDocument(ctx, s.new)
		if err != nil || doc.IngestionStatus != r2r.IngestionSuccess {
			s.failure.Store("the old memory was deleted before the new one was ingested")
		}
	}
	return s.Client.DeleteDocument(ctx, id)
}

// TestSupersedeIngestsBeforeDeleting: the memory superseded is deleted only once the new
// one has succeeded; while the new one is still being ingested the old one is kept (and
// still listed), and a later save of the same content finishes the job.
func TestSupersedeIngestsBeforeDeleting(t *testing.T) {
	f := newStoreFixture(t, r2rtest.Options{IngestDelay: time.Hour})
	done := make(chan Saved)
	go func() { done <- f.save(Draft{Kind: "decision", Title: "Old", Body: "old body"}) }()
	old := waitStepping(f, done)
	f.stepAll()

	// The new one is not ingested within the wait: the old one stays.
	f.store.Wait = 20 * time.Millisecond
	next := Draft{Kind: "decision", Title: "New", Body: "new body", Supersedes: old.ID}
	kept := f.save(next)
	if kept.Outcome != OutcomePending {
		t.Fatalf("saved %+v, want the old one kept", kept)
	}
	if _, err := f.client.GetDocument(context.Background(), old.ID); err != nil {
		t.Fatalf("the old memory is gone while the new one is pending: %v", err)
	}
	// R2R files a document in its collection once ingested: until then recall lists the old one.
	l, err := f.store.List(context.Background(), Query{}, -1)
	if err != nil || len(l.Memories) != 1 || l.Memories[0].ID != old.ID {
		t.Fatalf("listing %+v %v, want the old memory while the new one is pending", l.Memories, err)
	}

	// Saved again (the same content): waits for it, then deletes the old one.
	spy := &deleteSpy{Client: f.client, old: old.ID, new: kept.ID}
	f.store.API, f.store.Wait = spy, time.Minute
	go func() { done <- f.save(next) }()
	again := waitStepping(f, done)
	if !again.Already || again.Supersedes != old.ID || again.Outcome != OutcomeDeleted || !spy.checked.Load() {
		t.Fatalf("saved %+v (delete seen %v), want the old one superseded", again, spy.checked.Load())
	}
	if msg := spy.failure.Load(); msg != nil {
		t.Fatal(msg)
	}
	if _, err := f.client.GetDocument(context.Background(), old.ID); !errors.Is(err, r2r.ErrNotFound) {
		t.Fatalf("old memory: %v, want 404", err)
	}
}

// waitStepping steps the emulator's ingestions until a save finishes.
func waitStepping(f *storeFixture, done <-chan Saved) Saved {
	for {
		select {
		case s := <-done:
			return s
		case <-time.After(time.Millisecond):
			f.srv.StepIngestion()
		}
	}
}

// TestRememberSameContentOnce: the same memory saved twice, or by two savers at once, is
// one document and one create request.
func TestRememberSameContentOnce(t *testing.T) {
	f := newStoreFixture(t, r2rtest.Options{})
	d := Draft{Kind: "convention", Title: "Errors wrap with %w", Body: "Wrap errors with fmt.Errorf and %w."}
	first := f.save(d)
	d.Body += "\n\n  \n"
	second := f.save(d)
	if first.Already || !second.Already || first.ID != second.ID || f.srv.Count("POST /v3/documents") != 1 {
		t.Fatalf("first %+v second %+v, %d creates", first, second, f.srv.Count("POST /v3/documents"))
	}
}

// TestSearchFindsOnlyMemories: a search restricted to memories never returns the
// collection's other documents, and the store checks each hit's metadata too.
func TestSearchFindsOnlyMemories(t *testing.T) {
	f := newStoreFixture(t, r2rtest.Options{})
	ctx := context.Background()
	if _, err := f.client.CreateDocument(ctx, r2r.DocumentCreate{RawText: "walrus tusk notes", CollectionIDs: []string{f.store.CollectionID},
		Metadata: map[string]any{"title": "walrus.md", MetaKind: "not-a-kind"}}); err != nil {
		t.Fatal(err)
	}
	m := f.save(Draft{Kind: "gotcha", Title: "Walrus tusks", Body: "walrus tusk counts are per pair"})
	hits, err := f.store.Search(ctx, Query{Text: "walrus tusk"})
	if err != nil || len(hits) != 1 || hits[0].ID != m.ID {
		t.Fatalf("hits %+v %v, want only memory %s", hits, err, m.ID)
	}
	counts, truncated, err := f.store.Counts(ctx)
	if err != nil || truncated || !maps1(counts, "gotcha") {
		t.Fatalf("counts %v %v %v", counts, truncated, err)
	}
}

func maps1(m map[string]int, kind string) bool { return len(m) == 1 && m[kind] == 1 }

// TestStaleNamesChangedPaths: a memory whose paths changed in a later commit is stale for
// those paths; one about unchanged files, one without a commit and one saved at a commit
// this clone does not have are not.
func TestStaleNamesChangedPaths(t *testing.T) {
	root := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		if _, err := exec.LookPath("git"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("git is required under CI")
			}
			t.Skip("git is not installed")
		}
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(rel, s string) {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("a.go", "1")
	write("b.go", "1")
	git("add", "-A")
	git("commit", "-qm", "one")
	first := git("rev-parse", "HEAD")
	write("a.go", "2")
	git("commit", "-qam", "two")
	ms := []Memory{
		{ID: "changed", Paths: []string{"a.go", "b.go"}, Commit: first},
		{ID: "unchanged", Paths: []string{"b.go"}, Commit: first},
		{ID: "no-commit", Paths: []string{"a.go"}},
		{ID: "unknown-commit", Paths: []string{"a.go"}, Commit: strings.Repeat("0", 40)},
	}
	got := Stale(context.Background(), root, false, ms)
	if len(got) != 1 || !slices.Equal(got["changed"], []string{"a.go"}) {
		t.Fatalf("stale %v, want only changed: [a.go]", got)
	}

	// In a team project the team's ref is the basis, whatever the work tree has checked out:
	// a local edit of b.go on a branch makes no memory stale, a change on the ref does.
	git("update-ref", "refs/remotes/origin/main", "HEAD")
	git("checkout", "-q", "-b", "mine")
	write("b.go", "mine")
	git("commit", "-qam", "mine")
	if b := Basis(context.Background(), root, true); b != git("rev-parse", "refs/remotes/origin/main") {
		t.Fatalf("team basis %s, want the ref's commit", b)
	}
	if got := Stale(context.Background(), root, true, ms); len(got) != 1 || !slices.Equal(got["changed"], []string{"a.go"}) {
		t.Fatalf("team staleness %v, want only changed: [a.go] (b.go changed on a branch only)", got)
	}
	if got := Stale(context.Background(), root, false, ms); !slices.Equal(got["unchanged"], []string{"b.go"}) {
		t.Fatalf("HEAD staleness %v, want b.go stale on the branch", got)
	}
}

// TestRememberFindsOwnMemoryUnderAnotherID: the caller's memory of the same content saved
// under another id (as r2r-mcp derived ids before the owner was part of them) is already
// remembered, not saved twice.
func TestRememberFindsOwnMemoryUnderAnotherID(t *testing.T) {
	f := newStoreFixture(t, r2rtest.Options{})
	d, _ := Normalise(Draft{Kind: "gotcha", Title: "Walrus tusks", Body: "walrus tusk counts are per pair"})
	sha := ContentSHA(d)
	earlier := uuid.NewSHA1(Namespace, []byte(f.store.CollectionID+"/memory#sha256:"+sha)).String()
	if _, err := f.client.CreateDocument(context.Background(), r2r.DocumentCreate{ID: earlier, RawText: Text(d),
		Metadata: Metadata(d, sha, Stamp{Time: time.Now()}), CollectionIDs: []string{f.store.CollectionID}}); err != nil {
		t.Fatal(err)
	}
	f.srv.ResetCounts()
	if s := f.save(d); !s.Already || s.ID != earlier || f.srv.Count("POST /v3/documents") != 0 {
		t.Fatalf("saved %+v (%d creates), want already %s", s, f.srv.Count("POST /v3/documents"), earlier)
	}
}
