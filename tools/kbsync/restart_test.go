package kbsync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestPutResendsIngestionsARestartEnded: R2R restarted while ingesting a file (its document
// keeps a non-final status and the updated_at of before the restart, and nothing finishes
// it). The next Put sees the ingestion began before R2R's start time and sends the file
// again at once, however young the ingestion, without waiting for it: for a file sent as
// r2r-mcp's chunks (R2R answers the new upload 500) and one sent as a file (409). R2R tells
// only a superuser when it started; for anyone else the ingestion is waited for as before.
func TestPutResendsIngestionsARestartEnded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		file      File
		superuser bool
	}{
		{"chunks, superuser", File{Path: "docs/a.md", Data: []byte("# Ledger\n\nThe walrus ledger balances.")}, true},
		{"file, superuser", File{Path: "docs/a.html", Data: []byte("<html><body><p>The walrus ledger balances.</p></body></html>")}, true},
		{"chunks, user", File{Path: "docs/a.md", Data: []byte("# Ledger\n\nThe walrus ledger balances.")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, r2rtest.Options{IngestDelay: time.Hour})
			api := kbsyncAPI(t, f, tc.superuser)
			scope := f.scope
			if !tc.superuser {
				me, err := api.Me(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				scope.UserID = me.ID
			}
			ctx := context.Background()
			first, err := (&Writer{API: api, Scope: scope, Poll: time.Millisecond, Wait: time.Millisecond}).Put(ctx, tc.file, nil)
			if err != nil || first.Action != Pending || !first.Sent {
				t.Fatalf("first = %+v, %v", first, err)
			}
			f.r2r.Restart()
			f.r2r.Configure(func(o *r2rtest.Options) { o.IngestDelay = 0 })
			if n := f.r2r.StepIngestion(); n != 0 {
				t.Fatalf("%d ingestions moved after the restart", n)
			}

			w := &Writer{API: api, Scope: scope, Poll: time.Millisecond, Wait: 50 * time.Millisecond}
			o, err := w.Put(ctx, tc.file, nil)
			if !tc.superuser {
				if o.Resent || o.Action == Uploaded || f.r2r.Count("GET /v3/system/status") != 1 {
					t.Fatalf("a user's Put: %+v, %v after %d status requests", o, err, f.r2r.Count("GET /v3/system/status"))
				}
				return
			}
			if err != nil || !o.Resent || !o.Sent || o.Action != Uploaded || o.Status != r2r.IngestionSuccess || o.DocumentID != first.DocumentID {
				t.Fatalf("after the restart: %+v, %v", o, err)
			}
			if h := f.hits("walrus"); len(h) != 1 {
				t.Fatalf("hits %v, want the file once", h)
			}
		})
	}
}

// kbsyncAPI is a client of f's R2R: the superuser's, or a new user's.
func kbsyncAPI(t *testing.T, f *fixture, superuser bool) *r2r.Client {
	t.Helper()
	if superuser {
		return f.client
	}
	f.r2r.CreateUser("user@example.com", "user-pass-1234", false)
	anon, err := r2r.New(r2r.Options{BaseURL: f.r2r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := anon.Login(context.Background(), "user@example.com", "user-pass-1234")
	if err != nil {
		t.Fatal(err)
	}
	c, err := r2r.New(r2r.Options{BaseURL: f.r2r.URL, Credentials: r2r.Bearer(pair.AccessToken.Token)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SystemStatus(context.Background()); !errors.Is(err, r2r.ErrForbidden) {
		t.Fatalf("a user's system status: %v, want 403", err)
	}
	f.r2r.ResetCounts()
	return c
}
