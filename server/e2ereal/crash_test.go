package e2ereal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestRealIngestionCrash kills the real R2R in the middle of an ingestion and starts it
// again on the same data (R2R_CONFORMANCE_RESTART, testdata/r2r-real/restart-r2r.sh; test.sh
// runs this test after the others, which would fail meanwhile). What R2R 3.6.6 leaves: the
// document keeps its ingestion status for good, its updated_at stays when the ingestion
// started, which is before the start time R2R's system status gives, and a new upload of it
// is refused with 409. Judged by age (as for a user R2R does not tell when it started),
// kbsync.Writer waits for it no longer than its Wait, reports it as stuck once older than
// SlowAfter without waiting, and once older than DeadAfter deletes it and sends the file
// again, which then succeeds; the bounds are seconds here instead of minutes. After a second
// crash, a Writer that may ask R2R when it started (the superuser's) sends the file again at
// once, with the default bounds of minutes.
func TestRealIngestionCrash(t *testing.T) {
	r := liveR2R(t)
	restart := os.Getenv("R2R_CONFORMANCE_RESTART")
	if restart == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("R2R_CONFORMANCE_RESTART is not set: testdata/r2r-real/test.sh sets it to restart-r2r.sh")
		}
		t.Skip("R2R_CONFORMANCE_RESTART is not set (a command that kills and restarts the R2R under test; test.sh sets it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, scope := crashScope(ctx, t, r)
	file := kbsync.File{Path: "docs/long-ledger.txt", Data: longText(600 << 10)}
	id := kbsync.VersionID(scope.CollectionID, scope.UserID, file.Path, kbsync.SHA256(file.Data))
	writer := func(api kbsync.API, slow, dead, wait time.Duration) *kbsync.Writer {
		return &kbsync.Writer{API: api, Scope: scope, Wait: wait, Poll: 200 * time.Millisecond, SlowAfter: slow, DeadAfter: dead}
	}
	byAge := ageOnly{c} // cannot ask R2R when it started

	crash(ctx, t, c, restart, id, func() { _, _ = writer(c, 0, 0, time.Second).Put(ctx, file, nil) })
	_, err := c.CreateDocument(ctx, r2r.DocumentCreate{ID: id, FileName: "long-ledger.txt", File: file.Data})
	if !errors.Is(err, r2r.ErrConflict) {
		t.Fatalf("a new upload of the stuck document: %v, want 409", err)
	}

	o, err := writer(byAge, 0, 0, 2*time.Second).Put(ctx, file, nil)
	if err != nil || o.Action != kbsync.Pending || o.Sent || o.Stuck {
		t.Fatalf("young: %+v, %v", o, err)
	}
	looks := 0
	w := writer(byAge, time.Second, 0, 5*time.Minute)
	w.OnStatus = func(string, string) { looks++ }
	o, err = w.Put(ctx, file, nil)
	if err != nil || o.Action != kbsync.Pending || o.Sent || !o.Stuck || looks != 1 {
		t.Fatalf("stuck: %+v, %v after %d looks (want one)", o, err, looks)
	}
	o, err = writer(byAge, time.Second, 2*time.Second, 5*time.Minute).Put(ctx, file, nil)
	if err != nil || !o.Resent || !o.Sent || o.Status != r2r.IngestionSuccess || o.Action != kbsync.Uploaded {
		t.Fatalf("dead: %+v, %v", o, err)
	}
	if o, err = writer(c, 0, 0, time.Second).Put(ctx, file, []kbsync.Version{{ID: id, Status: r2r.IngestionSuccess}}); err != nil || o.Action != kbsync.Unchanged {
		t.Fatalf("after the recovery: %+v, %v", o, err)
	}

	// The second crash, on a new version of the file.
	file.Data = append(file.Data, "Entry final: the walrus closes the ledger.\n"...)
	id2 := kbsync.VersionID(scope.CollectionID, scope.UserID, file.Path, kbsync.SHA256(file.Data))
	old := []kbsync.Version{{ID: id, Status: r2r.IngestionSuccess}}
	crash(ctx, t, c, restart, id2, func() { _, _ = writer(c, 0, 0, time.Second).Put(ctx, file, old) })
	looks = 0
	w = writer(c, 0, 0, 5*time.Minute)
	w.OnStatus = func(string, string) { looks++ }
	o, err = w.Put(ctx, file, old)
	if err != nil || !o.Resent || !o.Sent || o.Status != r2r.IngestionSuccess || o.Action != kbsync.Replaced || o.DocumentID != id2 {
		t.Fatalf("after the second crash: %+v, %v", o, err)
	}
	if looks < 1 || looks > 2 {
		t.Fatalf("the dead ingestion was looked at %d times before it was sent again, want once (and once the new one)", looks)
	}
}

// crash starts upload, which must make R2R start ingesting document id, kills R2R with
// restart while it does and starts it again, then checks what R2R 3.6.6 left: the document
// keeps the status and updated_at it had, which is before the start time R2R reports.
func crash(ctx context.Context, t *testing.T, c *r2r.Client, restart, id string, upload func()) {
	t.Helper()
	// R2R (no orchestrator) ingests within the request, which the kill ends.
	go upload()
	before := waitForStatus(ctx, t, c, id, func(s string) bool { return s != "" })
	if kbsync.Terminal(before.IngestionStatus) {
		t.Fatalf("the ingestion ended (%s) before R2R could be killed: use a longer file", before.IngestionStatus)
	}
	if out, err := exec.CommandContext(ctx, restart).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", restart, err, out)
	}
	doc, err := c.GetDocument(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.SystemStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed R2R at ingestion status %s; after the restart: %s, updated_at %s; R2R started %s", before.IngestionStatus,
		doc.IngestionStatus, doc.UpdatedAt, st.StartTime)
	if kbsync.Terminal(doc.IngestionStatus) || !doc.UpdatedAt.Equal(before.UpdatedAt.Time) || !doc.UpdatedAt.Before(st.StartTime.Time) {
		t.Fatalf("after the restart: status %s updated_at %s, R2R started %s (before the kill: %s, %s)", doc.IngestionStatus,
			doc.UpdatedAt, st.StartTime, before.IngestionStatus, before.UpdatedAt)
	}
}

// ageOnly is an R2R client that cannot ask R2R when it started, as for a user R2R does not
// tell: kbsync.Writer judges ingestions by age alone.
type ageOnly struct{ kbsync.API }

// crashScope logs in as the admin and makes a collection of the test's own.
func crashScope(ctx context.Context, t *testing.T, r realR2R) (*r2r.Client, kbsync.Scope) {
	t.Helper()
	anon, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := anon.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r2r.New(r2r.Options{BaseURL: r.URL, Credentials: r2r.Bearer(pair.AccessToken.Token)})
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	coll, err := c.CreateCollection(ctx, "crash-"+unique(t), "")
	if err != nil {
		t.Fatal(err)
	}
	return c, kbsync.Scope{CollectionID: coll.ID, UserID: me.ID, Project: "crash"}
}

// waitForStatus polls document id until ok accepts its ingestion status ("" while R2R has
// no such document).
func waitForStatus(ctx context.Context, t *testing.T, c *r2r.Client, id string, ok func(string) bool) *r2r.Document {
	t.Helper()
	for {
		doc, err := c.GetDocument(ctx, id)
		switch {
		case err == nil && ok(doc.IngestionStatus):
			return doc
		case err != nil && !errors.Is(err, r2r.ErrNotFound):
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// longText is about n bytes of distinct sentences: a text R2R takes tens of seconds to
// chunk, embed and store.
func longText(n int) []byte {
	var b strings.Builder
	words := []string{"walrus", "ledger", "payout", "queue", "backlog", "settlement", "worker", "narwhal", "heron", "kingfisher"}
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "Entry %d: the %s %s balances the %s %s at step %d.\n",
			i, words[i%len(words)], words[(i/3)%len(words)], words[(i/7)%len(words)], words[(i/11)%len(words)], i*7)
	}
	return []byte(b.String())
}
