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

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// Summary is what a sync did.
type Summary struct {
	Uploaded  []string `json:"uploaded"`
	Replaced  []string `json:"replaced"`
	Unchanged int      `json:"unchanged"`
	// Deleted are the paths whose documents were deleted: pruned, or of a file now empty.
	Deleted []string  `json:"deleted"`
	Pending []string  `json:"pending"` // sent; R2R was still ingesting when the sync ended
	Refused []Problem `json:"refused"`
	Failed  []Problem `json:"failed"`
	// Empty counts the files that hold no text: not sent (see Plan.Empty).
	Empty int `json:"empty"`
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
	// Empty counts the ref's files that hold no text: not sent.
	Empty int `json:"empty"`
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
		Empty: p.Empty, PruneSkipped: p.PruneSkipped, Stale: p.Stale, DryRun: true}
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
		s.Team = &TeamSummary{Ref: t.Ref, Commit: t.Commit, Unchanged: t.Unchanged, Left: t.Left, Behind: t.Behind, Empty: t.Empty}
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
// deleted; in a team sync the team's version is then written the same way. progress (may
// be nil) is called after each step, from one goroutine at a time. A cancelled ctx stops
// the run; what was done is in the summary.
func (s *Syncer) Run(ctx context.Context, p *Plan, progress func(Progress)) *Summary {
	start := time.Now()
	sum := &Summary{Unchanged: p.Unchanged, Refused: slices.Clone(p.Refused), Empty: p.Empty, PruneSkipped: p.PruneSkipped, Stale: p.Stale}
	r := &run{s: s, sum: sum, total: p.Steps(), progress: progress}
	failed := r.write(ctx, s.own(), append(slices.Clone(p.Upload), p.Replace...))
	// Pruning comes last, and spares the documents a failed file could be: one moved
	// elsewhere whose upload failed has its old document (same content) as its only copy.
	if len(p.Delete) > 0 && ctx.Err() == nil {
		dels, kept := spare(p.Delete, failed)
		if kept > 0 {
			sum.PruneSkipped = fmt.Sprintf("%d document(s) have the content of a file that failed to sync "+
				"(or predate content hashes), so they may be its only copy", kept)
			sum.Stale += kept
		}
		r.retire(ctx, s.Writer, "deleting", dels, &sum.Deleted)
	}
	if tp := p.Team; tp != nil {
		// The team's version: the ref's new and changed files are written, then the team
		// versions of files gone from the ref retired, then the caller's copies from before
		// team syncs of files the team's version now holds deleted.
		sum.Team = &TeamSummary{Ref: tp.Ref, Commit: tp.Commit, Unchanged: tp.Unchanged, Left: slices.Clone(tp.Left), Behind: tp.Behind, Empty: tp.Empty}
		r.write(ctx, s.team(), append(slices.Clone(tp.Upload), tp.Replace...))
		if ctx.Err() == nil {
			r.retire(ctx, s.Opts.Team.Writer, "retiring", tp.Delete, &sum.Team.Deleted)
			r.retire(ctx, s.Opts.Team.Writer, "retiring", tp.Legacy, &sum.Team.Migrated)
		}
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

// run is the state one Run shares between its writes: the summary and the progress count,
// guarded by mu.
type run struct {
	s           *Syncer
	mu          sync.Mutex
	sum         *Summary
	done, total int
	progress    func(Progress)
}

// report counts one step done; mu is held.
func (r *run) report(path string, a Action) {
	r.done++
	if r.progress != nil {
		r.progress(Progress{Done: r.done, Total: r.total, Path: path, Action: a})
	}
}

// layer is where items of a plan are written: how one is read, and the Writer that writes
// it to its collection.
type layer struct {
	w    *Writer
	read func(ctx context.Context, it Item) (f File, release func(), err error)
	// team: the team's version (its outcomes are counted in the summary's Team).
	team bool
}

func (s *Syncer) own() layer  { return layer{w: s.Writer, read: s.readFile} }
func (s *Syncer) team() layer { return layer{w: s.Opts.Team.Writer, read: s.readBlob, team: true} }

// write writes items to l and returns the content hashes of the files that failed.
func (r *run) write(ctx context.Context, l layer, items []Item) map[string]bool {
	failed := map[string]bool{}
	bounded(ctx, items, r.s.Opts.concurrency(), func(it Item) {
		o, err := l.put(ctx, it)
		var one Summary
		one.record(it.Path, o, err)
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(one.Failed) > 0 {
			failed[it.SHA] = true
			failed[o.SHA] = true // the file may have changed since the plan
		}
		r.add(&one, l.team)
		r.report(it.Path, o.Action)
	})
	return failed
}

// put reads one item again (a file may have changed since the plan) and writes it; one
// that now holds no text (refused as confine.Empty by its reader or by Writer.Put) has its
// older versions retired instead (see Writer.Emptied).
func (l layer) put(ctx context.Context, it Item) (Outcome, error) {
	o := Outcome{Action: Failed}
	f, release, err := l.read(ctx, it)
	if err == nil {
		defer release()
		o, err = l.w.Put(ctx, f, it.Old)
	}
	if ref, ok := errors.AsType[*Refusal](err); ok && ref.Kind == confine.Empty {
		return l.w.Emptied(ctx, it.Old)
	}
	return o, err
}

// add counts one item's outcome (one) in the summary, the team's version's in its Team
// part; mu is held.
func (r *run) add(one *Summary, team bool) {
	sum := r.sum
	up, rep, pend, unch := &sum.Uploaded, &sum.Replaced, &sum.Pending, &sum.Unchanged
	del, empty := &sum.Deleted, &sum.Empty
	if team {
		t := sum.Team
		up, rep, pend, unch = &t.Uploaded, &t.Replaced, &t.Pending, &t.Unchanged
		del, empty = &t.Deleted, &t.Empty
		for i := range one.Failed {
			one.Failed[i].Reason = "team's version: " + one.Failed[i].Reason
		}
	}
	sum.Refused = append(sum.Refused, one.Refused...)
	sum.Failed = append(sum.Failed, one.Failed...)
	*up = append(*up, one.Uploaded...)
	*rep = append(*rep, one.Replaced...)
	*pend = append(*pend, one.Pending...)
	*unch += one.Unchanged
	*del = append(*del, one.Deleted...)
	*empty += one.Empty
}

// readFile reads a file of the work tree to write it, holding its share of the memory
// budget (when Files is a Reserver) until release.
func (s *Syncer) readFile(ctx context.Context, it Item) (File, func(), error) {
	var reserve func(context.Context) (func(), error)
	if r, ok := s.Opts.Files.(Reserver); ok {
		reserve = func(ctx context.Context) (func(), error) { return r.Reserve(ctx, it.Path) }
	}
	return held(ctx, reserve, func() (File, error) { return s.Opts.Files.ReadFile(it.Path) })
}

// held reads a file with read, holding what reserve (nil = nothing) reserves for it from
// before the read until release; a failed read gives it back at once.
func held(ctx context.Context, reserve func(context.Context) (func(), error), read func() (File, error)) (f File, release func(), err error) {
	release = func() {}
	if reserve != nil {
		if release, err = reserve(ctx); err != nil {
			return File{}, nil, err
		}
	}
	if f, err = read(); err != nil {
		release()
		return File{}, nil, err
	}
	return f, release, nil
}

// retire takes dels out of w's collection (see Writer.retire), listing their paths in into;
// verb names the act in a failure's reason.
func (r *run) retire(ctx context.Context, w *Writer, verb string, dels []Deletion, into *[]string) {
	bounded(ctx, dels, r.s.Opts.concurrency(), func(d Deletion) {
		err := w.retire(ctx, Version{ID: d.DocumentID, OwnerID: d.OwnerID})
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.sum.Failed = append(r.sum.Failed, Problem{Path: d.Path, Kind: "delete", Reason: verb + " document " + d.DocumentID + ": " + err.Error()})
			r.report(d.Path, Failed)
			return
		}
		if !slices.Contains(*into, d.Path) {
			*into = append(*into, d.Path)
		}
		r.report(d.Path, Deleted)
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
	case o.Action == Empty:
		sum.Empty++
		if len(o.Deleted) > 0 {
			sum.Deleted = append(sum.Deleted, path)
		}
	}
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
