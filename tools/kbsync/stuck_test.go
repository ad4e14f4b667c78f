package kbsync

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestPutBoundsAStuckIngestion: an ingestion R2R never finishes (as after R2R stopped in the
// middle of it; the emulator's steps take an hour here) is waited for at most Wait while
// young, reported as stuck without a wait once older than SlowAfter, and once older than
// DeadAfter its document is deleted and the file sent again, which then succeeds. The
// ages run on a fake clock shared with the emulator.
func TestPutBoundsAStuckIngestion(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)}
	f := newFixture(t, r2rtest.Options{IngestDelay: time.Hour, Clock: clock.Now})
	w := &Writer{API: f.client, Scope: f.scope, Poll: time.Millisecond, Wait: 20 * time.Millisecond, Now: clock.Now}
	file := File{Path: "docs/a.md", Data: []byte("# Ledger\n\nThe walrus ledger balances.")}
	ctx := context.Background()
	put := func() Outcome {
		t.Helper()
		o, err := w.Put(ctx, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}

	first := put()
	if first.Action != Pending || !first.Sent || first.Stuck || first.Resent || first.Started.Sub(clock.Now()).Abs() > time.Millisecond {
		t.Fatalf("first = %+v", first)
	}

	clock.advance(SlowAfter + time.Minute)
	gets := f.r2r.Count("GET /v3/documents/{id}")
	stuck := put()
	if stuck.Action != Pending || stuck.Sent || !stuck.Stuck || stuck.Resent || (stuck.Age-SlowAfter-time.Minute).Abs() > time.Millisecond {
		t.Fatalf("stuck = %+v", stuck)
	}
	if n := f.r2r.Count("GET /v3/documents/{id}") - gets; n != 1 {
		t.Fatalf("a stuck ingestion was polled %d times, want one look", n)
	}
	msg := StuckText(stuck.DocumentID, stuck.Status, stuck.Started, stuck.Age, "with r2r_delete_document")
	if !strings.Contains(msg, "since 2026-11-26 14:00 UTC (10 min)") || !strings.Contains(msg, "looks stuck") ||
		!strings.Contains(msg, "delete the document (with r2r_delete_document)") {
		t.Fatalf("stuck text: %s", msg)
	}

	clock.advance(DeadAfter)
	deletes := f.r2r.Count("DELETE /v3/documents/{id}")
	resent := put()
	if resent.Action != Pending || !resent.Sent || !resent.Resent || resent.Stuck || resent.DocumentID != first.DocumentID {
		t.Fatalf("resent = %+v", resent)
	}
	if n := f.r2r.Count("DELETE /v3/documents/{id}") - deletes; n != 1 {
		t.Fatalf("%d deletes, want 1", n)
	}
	for f.r2r.StepIngestion() > 0 {
	}
	if done := put(); done.Action != Unchanged && done.Action != Uploaded || done.Status != r2r.IngestionSuccess {
		t.Fatalf("after the resent ingestion finished: %+v", done)
	}
	if h := f.hits("walrus"); len(h) != 1 {
		t.Fatalf("hits %v, want the file once", h)
	}
}

// TestSyncReportsStuckIngestion: a sync meeting a stuck ingestion lists the file among the
// failed, with the way out, instead of as pending.
func TestSyncReportsStuckIngestion(t *testing.T) {
	var sum Summary
	sum.record("docs/a.md", Outcome{Action: Pending, DocumentID: "d1", Status: "parsing", Stuck: true,
		Started: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC), Age: 42 * time.Minute}, nil)
	sum.record("docs/b.md", Outcome{Action: Pending, DocumentID: "d2", Status: "parsing"}, nil)
	if len(sum.Failed) != 1 || sum.Failed[0].Kind != "ingestion_stuck" || !strings.Contains(sum.Failed[0].Reason, "(42 min)") ||
		len(sum.Pending) != 1 || sum.Pending[0] != "docs/b.md" {
		t.Fatalf("summary = %+v", sum)
	}
}

// TestPutDoesNotJudgeItsOwnUpload: when R2R's clock is hours behind this host's, a document
// this call just sent looks hours old; it is still waited for, never reported stuck nor
// deleted and sent again.
func TestPutDoesNotJudgeItsOwnUpload(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)}
	f := newFixture(t, r2rtest.Options{IngestDelay: time.Hour, Clock: func() time.Time { return clock.Now().Add(-3 * time.Hour) }})
	w := &Writer{API: f.client, Scope: f.scope, Poll: time.Millisecond, Wait: 20 * time.Millisecond, Now: clock.Now}
	o, err := w.Put(context.Background(), File{Path: "docs/a.md", Data: []byte("# Ledger\n\nThe walrus ledger balances.")}, nil)
	if err != nil || o.Action != Pending || !o.Sent || o.Stuck || o.Resent || f.r2r.Count("DELETE /v3/documents/{id}") != 0 {
		t.Fatalf("%+v, %v", o, err)
	}
}

// TestPutWaitsOutEarlierIngestionsOnce: once a wait for an ingestion started elsewhere ran
// out, the same Writer (one sync) takes one look at the next such ingestion instead of
// waiting again; its own uploads are still waited for.
func TestPutWaitsOutEarlierIngestionsOnce(t *testing.T) {
	f := newFixture(t, r2rtest.Options{IngestDelay: time.Hour})
	ctx := context.Background()
	files := []File{{Path: "docs/a.md", Data: []byte("# A\n\nAlpha.")}, {Path: "docs/b.md", Data: []byte("# B\n\nBeta.")}}
	earlier := &Writer{API: f.client, Scope: f.scope, Poll: time.Millisecond, Wait: time.Millisecond}
	for _, file := range files {
		if _, err := earlier.Put(ctx, file, nil); err != nil {
			t.Fatal(err)
		}
	}
	looks := 0
	w := &Writer{API: f.client, Scope: f.scope, Poll: time.Millisecond, Wait: 30 * time.Millisecond,
		OnStatus: func(string, string) { looks++ }}
	for i, file := range files {
		looks = 0
		o, err := w.Put(ctx, file, nil)
		if err != nil || o.Action != Pending || o.Sent {
			t.Fatalf("%s: %+v, %v", file.Path, o, err)
		}
		if i == 0 && looks < 2 || i == 1 && looks != 1 {
			t.Fatalf("%s: %d looks", file.Path, looks)
		}
	}
	looks = 0
	if o, err := w.Put(ctx, File{Path: "docs/c.md", Data: []byte("# C\n\nGamma.")}, nil); err != nil || !o.Sent || looks < 2 {
		t.Fatalf("its own upload: %+v, %v after %d looks", o, err, looks)
	}
}
