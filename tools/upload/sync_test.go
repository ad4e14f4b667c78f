package upload

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestSyncWritesPendingAndBudget: a sync's writes are what r2r_ingest_document's are, in the
// private layer and the team's version alike: each file is marked in the table of pending
// uploads while R2R ingests it (and the cache told once it is searchable), is waited for no
// longer than the sync's Wait, and holds its share of the process's memory budget while it
// is sent (a full budget fails the file as an upload's does).
func TestSyncWritesPendingAndBudget(t *testing.T) {
	tests := []struct {
		name        string
		r2r         r2rtest.Options
		wait        time.Duration
		fullBudget  bool
		uploaded    []string
		pending     []string
		failed      string // the reason the file failed; "" = none
		busy, wrote bool
	}{
		{name: "ingested", uploaded: []string{"docs/a.md"}, wrote: true},
		{name: "still ingesting", r2r: r2rtest.Options{IngestDelay: time.Hour}, wait: time.Millisecond,
			pending: []string{"docs/a.md"}, busy: true, wrote: true},
		{name: "budget full", fullBudget: true, failed: ErrBusy.Error()},
	}
	for _, tt := range tests {
		for _, team := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/team=%v", tt.name, team), func(t *testing.T) {
				tg := newTargetWith(t, tt.r2r)
				tg.write(t, "docs/a.md", "# Ledger\n\nPayouts settle nightly.")
				pending := NewPending()
				var writes atomic.Int32
				s := syncerOf(t, tg, team, SyncConfig{API: tg.api, Root: tg.root, StateDir: t.TempDir(), Poll: 1,
					Wait: tt.wait, Pending: pending, OnWrite: func() { writes.Add(1) }})
				plan, err := s.Plan(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				// A write that outwaits the sync's Wait runs into this deadline instead (R2R
				// holds the ingestion for an hour).
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				if tt.fullBudget {
					release, err := shared.Reserve(ctx, DefaultBudget)
					if err != nil {
						t.Fatal(err)
					}
					defer release()
					ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
					defer cancel()
				}
				sum := s.Run(ctx, plan, nil)
				uploaded, pend, failed := sum.Uploaded, sum.Pending, tt.failed
				if team {
					uploaded, pend = sum.Team.Uploaded, sum.Team.Pending
					if failed != "" {
						failed = "team's version: " + failed
					}
				}
				if !slices.Equal(uploaded, nonNil(tt.uploaded)) || !slices.Equal(pend, nonNil(tt.pending)) {
					t.Errorf("uploaded %v, pending %v; want %v, %v", uploaded, pend, tt.uploaded, tt.pending)
				}
				i := slices.IndexFunc(sum.Failed, func(p kbsync.Problem) bool { return p.Path == "docs/a.md" })
				if (i >= 0) != (failed != "") || i >= 0 && sum.Failed[i].Reason != failed {
					t.Errorf("failed %+v, want the file failed for %q", sum.Failed, failed)
				}
				if busy := pending.Busy(tg.scope.CollectionID, time.Now()); busy != tt.busy {
					t.Errorf("collection busy in the pending table: %v, want %v", busy, tt.busy)
				}
				if got := writes.Load() > 0; got != tt.wrote {
					t.Errorf("OnWrite called: %v, want %v", got, tt.wrote)
				}
			})
		}
	}
}

// syncerOf is the syncer NewSyncer builds from c for tg's project, with tg's collection as
// its scope, or, with team, as the team collection of a team sync of the project's first
// commit (the project's files are then the team's version, and written to tg's collection
// by the team layer).
func syncerOf(t *testing.T, tg *target, team bool, c SyncConfig) *kbsync.Syncer {
	t.Helper()
	c.Scope = tg.scope
	var ts *TeamSetup
	if team {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		gitIn(t, tg.root, "init", "-q", "-b", "main")
		gitIn(t, tg.root, "add", ".")
		gitIn(t, tg.root, "commit", "-q", "-m", "one")
		var err error
		if ts, err = TeamSync(t.Context(), tg.api, tg.scope.CollectionID, "", tg.root, tg.scope, true); err != nil || ts == nil {
			t.Fatalf("team sync: %+v %v", ts, err)
		}
		c.Scope = ts.Private
	}
	s, _, _, err := NewSyncer(c)
	if err != nil {
		t.Fatal(err)
	}
	if ts != nil {
		Join(s, ts.Team, ts.CollectionID)
	}
	return s
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// TestSyncAsksR2RStartOncePerSync: a sync meeting files whose ingestions an R2R restart
// ended asks R2R when it started once, not once per file (every file of a sync is written
// by the sync's one Writer), and sends each of them again.
func TestSyncAsksR2RStartOncePerSync(t *testing.T) {
	tg := newTargetWith(t, r2rtest.Options{IngestDelay: time.Hour})
	files := []string{"docs/a.md", "docs/b.md", "docs/c.md"}
	for i, p := range files {
		tg.write(t, p, fmt.Sprintf("# Note %d\n\nFact %d.", i, i))
	}
	sync := func() *kbsync.Summary {
		s, _, _, err := NewSyncer(SyncConfig{API: tg.api, Scope: tg.scope, Root: tg.root, StateDir: t.TempDir(), Poll: 1, Wait: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		plan, err := s.Plan(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return s.Run(t.Context(), plan, nil)
	}
	if sum := sync(); !slices.Equal(sum.Pending, files) {
		t.Fatalf("first sync: %+v", sum)
	}
	tg.srv.Restart()
	tg.srv.Configure(func(o *r2rtest.Options) { o.IngestDelay = 0 })
	tg.srv.ResetCounts()
	sum := sync()
	if !slices.Equal(sum.Uploaded, files) || !sum.OK() {
		t.Fatalf("after the restart: %+v", sum)
	}
	if n := tg.srv.Count("GET /v3/system/status"); n != 1 {
		t.Errorf("R2R was asked when it started %d times, want once", n)
	}
}

// stackAPI is an API that records, at each upload, the r2r-mcp packages on the call stack
// that carried the file there, innermost first (test files left out, a package's
// consecutive frames counted once).
type stackAPI struct {
	kbsync.API
	mu     sync.Mutex
	stacks [][]string
}

func (a *stackAPI) CreateDocument(ctx context.Context, in r2r.DocumentCreate) (*r2r.IngestionResponse, error) {
	const module = "github.com/r2r-mcp/r2r-mcp/"
	pcs := make([]uintptr, 100)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var pkgs []string
	for {
		fr, more := frames.Next()
		if rest, ok := strings.CutPrefix(fr.Function, module); ok && !strings.HasSuffix(fr.File, "_test.go") {
			slash := strings.LastIndex(rest, "/")
			pkg := rest[:slash+1] + strings.SplitN(rest[slash+1:], ".", 2)[0]
			if len(pkgs) == 0 || pkgs[len(pkgs)-1] != pkg {
				pkgs = append(pkgs, pkg)
			}
		}
		if !more {
			break
		}
	}
	a.mu.Lock()
	a.stacks = append(a.stacks, pkgs)
	a.mu.Unlock()
	return a.API.CreateDocument(ctx, in)
}

// TestSyncWritePathPassesEachPackageOnce: on its way from a sync's plan to R2R a file
// passes through each package once, in the private layer and the team's version alike: no
// package on the write's call stack calls into another that calls back into it.
func TestSyncWritePathPassesEachPackageOnce(t *testing.T) {
	for _, team := range []bool{false, true} {
		t.Run(fmt.Sprintf("team=%v", team), func(t *testing.T) {
			tg := newTarget(t)
			tg.write(t, "docs/a.md", "# Ledger\n\nPayouts settle nightly.")
			api := &stackAPI{API: tg.api}
			s := syncerOf(t, tg, team, SyncConfig{API: api, Root: tg.root, StateDir: t.TempDir(), Poll: 1})
			plan, err := s.Plan(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if sum := s.Run(t.Context(), plan, nil); !sum.OK() {
				t.Fatalf("summary %+v", sum)
			}
			if len(api.stacks) != 1 {
				t.Fatalf("%d uploads, want 1", len(api.stacks))
			}
			if st := api.stacks[0]; len(st) == 0 || st[0] != "tools/kbsync" {
				t.Fatalf("the write's stack %v does not end in kbsync.Writer", st)
			}
			seen := map[string]bool{}
			for _, pkg := range api.stacks[0] {
				if seen[pkg] {
					t.Errorf("the write passes through %s twice: %v (innermost first)", pkg, api.stacks[0])
				}
				seen[pkg] = true
			}
		})
	}
}
