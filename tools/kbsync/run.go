package kbsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Summary is what a sync did.
type Summary struct {
	Uploaded  []string  `json:"uploaded"`
	Replaced  []string  `json:"replaced"`
	Unchanged int       `json:"unchanged"`
	Deleted   []string  `json:"deleted"` // paths whose documents were pruned
	Pending   []string  `json:"pending"` // sent; R2R was still ingesting when the sync ended
	Refused   []Problem `json:"refused"`
	Failed    []Problem `json:"failed"`
	// PruneSkipped says why documents of files no longer in the synced set were kept
	// although --prune was given (all of them when the scan was incomplete, else those a
	// failed file could be).
	PruneSkipped string `json:"prune_skipped,omitempty"`
	Stale        int    `json:"stale"`
	DryRun       bool   `json:"dry_run"`
	DurationMS   int64  `json:"duration_ms"`
	// Team is what a team sync did to the team's version (nil otherwise); the fields above
	// are then the caller's private layer.
	Team *TeamSummary `json:"team,omitempty"`
}

// TeamSummary is what a team sync did to the team layer.
type TeamSummary struct {
	Ref       string    `json:"ref"`
	Commit    string    `json:"commit"`
	Uploaded  []string  `json:"uploaded"`
	Replaced  []string  `json:"replaced"`
	Unchanged int       `json:"unchanged"`
	Deleted   []string  `json:"deleted"`
	Pending   []string  `json:"pending"`
	Left      []Problem `json:"left"`
	Behind    string    `json:"behind,omitempty"`
	// Migrated are paths whose documents from before team syncs (the caller's own copies)
	// were deleted because the team's version holds them now.
	Migrated []string `json:"migrated"`
}

// OK reports a sync in which nothing failed.
func (s *Summary) OK() bool { return len(s.Failed) == 0 }

// Progress is reported after each step of a run.
type Progress struct {
	Done, Total int
	Path        string
	Action      Action // "deleted" for a pruned document
}

// Deleted is the Progress action of a pruned document.
const Deleted Action = "deleted"

// Steps is the number of steps Run takes for p (each uploaded, replaced or pruned file).
func (p *Plan) Steps() int {
	n := len(p.Upload) + len(p.Replace) + len(p.Delete)
	if p.Team != nil {
		n += len(p.Team.Upload) + len(p.Team.Replace) + len(p.Team.Delete) + len(p.Team.Legacy)
	}
	return n
}

// DryRun is the summary of a plan that was not carried out.
func (p *Plan) DryRun() *Summary {
	s := &Summary{Unchanged: p.Unchanged, Refused: p.Refused, Failed: []Problem{}, Pending: []string{},
		PruneSkipped: p.PruneSkipped, Stale: p.Stale, DryRun: true}
	for _, it := range p.Upload {
		s.Uploaded = append(s.Uploaded, it.Path)
	}
	for _, it := range p.Replace {
		s.Replaced = append(s.Replaced, it.Path)
	}
	for _, d := range p.Delete {
		s.Deleted = append(s.Deleted, d.Path)
	}
	if t := p.Team; t != nil {
		s.Team = &TeamSummary{Ref: t.Ref, Commit: t.Commit, Unchanged: t.Unchanged, Left: t.Left, Behind: t.Behind}
		for _, it := range t.Upload {
			s.Team.Uploaded = append(s.Team.Uploaded, it.Path)
		}
		for _, it := range t.Replace {
			s.Team.Replaced = append(s.Team.Replaced, it.Path)
		}
		for _, d := range t.Delete {
			s.Team.Deleted = append(s.Team.Deleted, d.Path)
		}
		for _, d := range t.Legacy {
			s.Team.Migrated = append(s.Team.Migrated, d.Path)
		}
	}
	s.normalise()
	return s
}

// KindCancelled is the kind of a problem that a cancelled run left: a file not (fully) sent,
// or, without a path, the run itself.
const KindCancelled = "cancelled"

// Run carries out p with bounded concurrency: new files are uploaded, changed ones
// replaced (see Writer.Put), then, when p prunes, the documents of files that are gone
// deleted. progress (may be nil) is called after each step, from one goroutine at a time.
// A cancelled ctx stops the run; what was done is in the summary.
func (s *Syncer) Run(ctx context.Context, p *Plan, progress func(Progress)) *Summary {
	start := time.Now()
	sum := &Summary{Unchanged: p.Unchanged, Refused: slices.Clone(p.Refused), PruneSkipped: p.PruneSkipped, Stale: p.Stale}
	var mu sync.Mutex
	done, total := 0, p.Steps()
	report := func(path string, a Action) {
		done++
		if progress != nil {
			progress(Progress{Done: done, Total: total, Path: path, Action: a})
		}
	}
	items := append(slices.Clone(p.Upload), p.Replace...)
	failed := map[string]bool{} // content hashes of the files that failed
	bounded(ctx, items, s.Opts.concurrency(), func(it Item) {
		o, err := s.put(ctx, it)
		mu.Lock()
		defer mu.Unlock()
		n := len(sum.Failed)
		sum.record(it.Path, o, err)
		if len(sum.Failed) > n {
			failed[it.SHA] = true
			failed[o.SHA] = true // the file may have changed since the plan
		}
		report(it.Path, o.Action)
	})
	// Pruning comes last, and spares the documents a failed file could be: one moved
	// elsewhere whose upload failed has its old document (same content) as its only copy.
	if len(p.Delete) > 0 && ctx.Err() == nil {
		dels, kept := spare(p.Delete, failed)
		if kept > 0 {
			sum.PruneSkipped = fmt.Sprintf("%d document(s) have the content of a file that failed to sync "+
				"(or predate content hashes), so they may be its only copy", kept)
			sum.Stale += kept
		}
		s.prune(ctx, dels, sum, report)
	}
	if p.Team != nil {
		s.runTeam(ctx, p.Team, sum, &mu, report)
	}
	if err := ctx.Err(); err != nil {
		why := "the sync was stopped before it finished"
		if errors.Is(err, context.DeadlineExceeded) {
			why = "the sync ran out of time before it finished"
		}
		sum.Failed = append(sum.Failed, Problem{Kind: KindCancelled, Reason: why + "; sync again to finish"})
	}
	if err := s.Opts.Hashes.Save(); err != nil {
		sum.Failed = append(sum.Failed, Problem{Kind: "hash_cache", Reason: "saving the hash cache failed: " + err.Error()})
	}
	sum.DurationMS = time.Since(start).Milliseconds()
	sum.normalise()
	return sum
}

// put reads one file again (it may have changed since the plan) and writes it.
func (s *Syncer) put(ctx context.Context, it Item) (Outcome, error) {
	if s.Put != nil {
		return s.Put(ctx, it)
	}
	f, err := s.Opts.Files.ReadFile(it.Path)
	if err != nil {
		return Outcome{Action: Failed}, err
	}
	return s.Writer.Put(ctx, f, it.Old)
}

func (s *Syncer) prune(ctx context.Context, dels []Deletion, sum *Summary, report func(string, Action)) {
	var mu sync.Mutex
	bounded(ctx, dels, s.Opts.concurrency(), func(d Deletion) {
		err := s.Writer.Delete(ctx, d.DocumentID)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			sum.Failed = append(sum.Failed, Problem{Path: d.Path, Kind: "delete", Reason: "deleting document " + d.DocumentID + ": " + err.Error()})
			report(d.Path, Failed)
			return
		}
		if !slices.Contains(sum.Deleted, d.Path) {
			sum.Deleted = append(sum.Deleted, d.Path)
		}
		report(d.Path, Deleted)
	})
}

// spare splits dels into those to carry out and the number kept because a failed file may
// be theirs: the same content, or content unknown (documents from before content hashes).
func spare(dels []Deletion, failed map[string]bool) ([]Deletion, int) {
	if len(failed) == 0 {
		return dels, 0
	}
	out := make([]Deletion, 0, len(dels))
	for _, d := range dels {
		if d.SHA == "" || failed[d.SHA] {
			continue
		}
		out = append(out, d)
	}
	return out, len(dels) - len(out)
}

// bounded runs fn for each item, at most n at a time, and starts no more once ctx ends.
func bounded[T any](ctx context.Context, items []T, n int, fn func(T)) {
	var g errgroup.Group
	g.SetLimit(n)
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { fn(it); return nil })
	}
	_ = g.Wait() // fn reports its own outcome; nothing returns an error
}

// record adds one file's outcome.
func (sum *Summary) record(path string, o Outcome, err error) {
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		sum.Refused = append(sum.Refused, Problem{Path: path, Kind: ref.Kind, Reason: ref.Reason})
	case errors.Is(err, context.Canceled):
		sum.Failed = append(sum.Failed, Problem{Path: path, Kind: KindCancelled, Reason: "cancelled; the next sync sends it"})
	case err != nil:
		sum.Failed = append(sum.Failed, Problem{Path: path, Kind: "r2r", Reason: err.Error()})
	case o.Action == Failed:
		sum.Failed = append(sum.Failed, Problem{Path: path, Kind: "ingestion_failed", Reason: "R2R failed to ingest it: " + o.Failure})
	case o.Action == Pending && o.Stuck:
		sum.Failed = append(sum.Failed, Problem{Path: path, Kind: "ingestion_stuck",
			Reason: StuckText(o.DocumentID, o.Status, o.Started, o.Age, "with the MCP tool r2r_delete_document")})
	case o.Action == Pending:
		sum.Pending = append(sum.Pending, path)
	case o.Action == Uploaded:
		sum.Uploaded = append(sum.Uploaded, path)
	case o.Action == Replaced:
		sum.Replaced = append(sum.Replaced, path)
	case o.Action == Unchanged:
		sum.Unchanged++
	}
}

// runTeam carries out the team layer's part of a plan: the ref's new and changed files are
// written, then the team versions of files gone from the ref retired, then the caller's
// copies from before team syncs of files the team's version now holds deleted.
func (s *Syncer) runTeam(ctx context.Context, tp *TeamPlan, sum *Summary, mu *sync.Mutex, report func(string, Action)) {
	ts := &TeamSummary{Ref: tp.Ref, Commit: tp.Commit, Unchanged: tp.Unchanged, Left: slices.Clone(tp.Left), Behind: tp.Behind}
	sum.Team = ts
	w := s.Opts.Team.Writer
	bounded(ctx, append(slices.Clone(tp.Upload), tp.Replace...), s.Opts.concurrency(), func(it Item) {
		o, err := s.putTeam(ctx, it)
		mu.Lock()
		defer mu.Unlock()
		var one Summary
		one.record(it.Path, o, err)
		sum.Refused = append(sum.Refused, one.Refused...)
		for i := range one.Failed {
			one.Failed[i].Reason = "team's version: " + one.Failed[i].Reason
		}
		sum.Failed = append(sum.Failed, one.Failed...)
		ts.Uploaded = append(ts.Uploaded, one.Uploaded...)
		ts.Replaced = append(ts.Replaced, one.Replaced...)
		ts.Pending = append(ts.Pending, one.Pending...)
		ts.Unchanged += one.Unchanged
		report(it.Path, o.Action)
	})
	if ctx.Err() != nil {
		return
	}
	retire := func(dels []Deletion, into *[]string) {
		bounded(ctx, dels, s.Opts.concurrency(), func(d Deletion) {
			err := w.retire(ctx, Version{ID: d.DocumentID, OwnerID: d.OwnerID})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				sum.Failed = append(sum.Failed, Problem{Path: d.Path, Kind: "delete", Reason: "retiring document " + d.DocumentID + ": " + err.Error()})
				report(d.Path, Failed)
				return
			}
			if !slices.Contains(*into, d.Path) {
				*into = append(*into, d.Path)
			}
			report(d.Path, Deleted)
		})
	}
	retire(tp.Delete, &ts.Deleted)
	retire(tp.Legacy, &ts.Migrated)
}

// normalise sorts the lists and makes empty ones [] in JSON.
func (sum *Summary) normalise() {
	if t := sum.Team; t != nil {
		for _, l := range []*[]string{&t.Uploaded, &t.Replaced, &t.Deleted, &t.Pending, &t.Migrated} {
			if *l == nil {
				*l = []string{}
			}
			slices.Sort(*l)
		}
		if t.Left == nil {
			t.Left = []Problem{}
		}
	}
	for _, l := range []*[]string{&sum.Uploaded, &sum.Replaced, &sum.Deleted, &sum.Pending} {
		if *l == nil {
			*l = []string{}
		}
		slices.Sort(*l)
	}
	for _, l := range []*[]Problem{&sum.Refused, &sum.Failed} {
		if *l == nil {
			*l = []Problem{}
		}
		slices.SortFunc(*l, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	}
}
