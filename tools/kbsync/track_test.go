package kbsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// callLog records, in order, a Writer's calls to its Pending tracker and OnWrite.
type callLog struct {
	mu      sync.Mutex
	calls   []string
	tracked map[string]bool
}

func (l *callLog) add(c string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *callLog) Start(id, _ string, _ time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "start")
	l.tracked[id] = true
}

func (l *callLog) Finish(id string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, "finish")
	ok := l.tracked[id]
	delete(l.tracked, id)
	return "", ok
}

func (l *callLog) ExpectMembership(string, string, time.Time) { l.add("expect") }

// TestPutTracksPending: with a Pending tracker, Put marks the new version before it is sent
// and ends the mark when R2R has finished with it (telling the cache then), keeps it while R2R
// still ingests, and ends it when nothing could be sent; without one, nothing is tracked.
func TestPutTracksPending(t *testing.T) {
	const content = "# Ledger\n\nPayouts settle nightly."
	tests := []struct {
		name    string
		r2r     r2rtest.Options
		path    string
		current bool // the current version is already ingested
		track   bool
		action  Action
		refused bool
		calls   []string
	}{
		{name: "ingested", path: "docs/a.md", track: true, action: Uploaded, calls: []string{"start", "write", "finish", "write"}},
		{name: "still ingesting", r2r: r2rtest.Options{IngestDelay: time.Hour}, path: "docs/a.md", track: true, action: Pending,
			calls: []string{"start", "write", "expect"}},
		{name: "unchanged", path: "docs/a.md", current: true, track: true, action: Unchanged,
			calls: []string{"start", "finish", "write", "finish"}},
		{name: "refused", path: "docs/\xff.md", track: true, action: Failed, refused: true, calls: []string{"start", "finish", "write"}},
		{name: "untracked", path: "docs/a.md", action: Uploaded, calls: []string{"write"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.r2r)
			log := &callLog{tracked: map[string]bool{}}
			w := &Writer{API: f.client, Scope: f.scope, Poll: 1, Wait: time.Millisecond, OnWrite: func() { log.add("write") }}
			if tt.track {
				w.Pending = log
			}
			var old []Version
			if tt.current {
				old = []Version{{ID: VersionID(f.scope.CollectionID, f.scope.UserID, tt.path, SHA256([]byte(content))), Status: r2r.IngestionSuccess}}
			}
			o, err := w.Put(t.Context(), File{Path: tt.path, Data: []byte(content)}, old)
			var ref *Refusal
			if o.Action != tt.action || errors.As(err, &ref) != tt.refused || err != nil && !tt.refused {
				t.Fatalf("Put = %+v, %v", o, err)
			}
			if !slices.Equal(log.calls, tt.calls) {
				t.Errorf("calls %v, want %v", log.calls, tt.calls)
			}
		})
	}
}

// budgetFiles is testFiles behind a memory budget, for the work tree (a Reserver) and the
// team's ref (a BlobReserver) alike: it counts the reservations it holds, refuses them for
// refuse's path, and fails reading unreadable's.
type budgetFiles struct {
	testFiles
	mu                 sync.Mutex
	reserved, held     int
	refuse, unreadable string
}

func (b *budgetFiles) Reserve(_ context.Context, rel string) (func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rel == b.refuse {
		return nil, errors.New("the memory budget is full")
	}
	b.reserved++
	b.held++
	return sync.OnceFunc(func() { b.mu.Lock(); b.held--; b.mu.Unlock() }), nil
}

func (b *budgetFiles) ReadFile(rel string) (File, error) {
	if rel == b.unreadable {
		return File{}, errors.New("read failed")
	}
	return b.testFiles.ReadFile(rel)
}

func (b *budgetFiles) ReserveBlob(ctx context.Context, rel string, _ TreeEntry) (func(), error) {
	return b.Reserve(ctx, rel)
}

func (b *budgetFiles) ReadBlob(ctx context.Context, rel string, e TreeEntry) (File, error) {
	if rel == b.unreadable {
		return File{}, errors.New("read failed")
	}
	data, err := ReadBlob(ctx, b.root, e.Blob, e.Size, 1<<20)
	return File{Path: rel, Data: data}, err
}

// teamOf makes s a team sync of f's project as committed now, whose team's version (all of
// the project's files) goes to f's collection and is read by blobs.
func (f *fixture) teamOf(s *Syncer, blobs BlobReader) {
	f.t.Helper()
	f.git("init", "-q", "-b", "main")
	f.git("add", ".")
	f.git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one")
	ctx := context.Background()
	ref, commit, err := ResolveTeamRef(ctx, f.root, "")
	if err != nil {
		f.t.Fatal(err)
	}
	sc := f.scope
	sc.Layer = LayerTeam
	s.Opts.Team = &Team{Ref: ref, Commit: commit, Format: ObjectFormat(ctx, f.root), CollectionOwner: true,
		Blobs: blobs, Writer: s.Writer.For(sc)}
	s.Writer.Scope.CollectionID, s.Writer.Scope.Layer = "", LayerPrivate // no private collection yet
}

// TestRunHoldsReservations: with a Reserver for Files (a BlobReserver for a team sync's
// Blobs), each file Run writes holds its reservation from before it is read until it is
// written, and one that cannot be reserved or read fails with the reason; every reservation
// is given back.
func TestRunHoldsReservations(t *testing.T) {
	tests := []struct {
		name               string
		refuse, unreadable string
		uploaded           []string
		reserved           int
		failed             string
	}{
		{name: "all reserved", uploaded: []string{"docs/a.md", "docs/b.md"}, reserved: 2},
		{name: "budget full", refuse: "docs/b.md", uploaded: []string{"docs/a.md"}, reserved: 1, failed: "the memory budget is full"},
		{name: "read fails", unreadable: "docs/b.md", uploaded: []string{"docs/a.md"}, reserved: 2, failed: "read failed"},
	}
	for _, tt := range tests {
		for _, team := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/team=%v", tt.name, team), func(t *testing.T) {
				f := newFixture(t, r2rtest.Options{})
				f.write("docs/a.md", "# A\n\nAlpha.")
				f.write("docs/b.md", "# B\n\nBeta.")
				files := &budgetFiles{testFiles: testFiles{root: f.root}}
				s := f.syncer(false)
				s.Opts.Files = files
				failed := tt.failed
				if team {
					f.teamOf(s, files)
					if failed != "" {
						failed = "team's version: " + failed
					}
				}
				plan, err := s.Plan(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				files.refuse, files.unreadable = tt.refuse, tt.unreadable
				sum := s.Run(t.Context(), plan, nil)
				uploaded := sum.Uploaded
				if team {
					uploaded = sum.Team.Uploaded
				}
				if !slices.Equal(uploaded, tt.uploaded) || files.reserved != tt.reserved || files.held != 0 {
					t.Errorf("uploaded %v with %d reservations (%d held); want %v with %d", uploaded, files.reserved, files.held, tt.uploaded, tt.reserved)
				}
				var reasons []string
				for _, p := range sum.Failed {
					reasons = append(reasons, p.Path+": "+p.Reason)
				}
				if want := "docs/b.md: " + failed; (failed == "") != (len(reasons) == 0) || failed != "" && strings.Join(reasons, "; ") != want {
					t.Errorf("failed %v, want %q", reasons, want)
				}
			})
		}
	}
}
