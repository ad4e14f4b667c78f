package tools

import (
	"context"
	"slices"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// recorder queues the analytics of the calls that read the knowledge base (search, RAG,
// recall): where a call's analytics are kept, and each kind of call's event.
type recorder struct {
	rec    *analytics.Recorder // nil = off
	remote func() bool         // a remote server: keys name a collection or a user
	// history is where the search history of a project is kept (Deps.historyKey).
	history func(ctx context.Context, pr *project.Project) (key, name string)
	now     func() time.Time
}

// key names where a call's analytics are kept: the project's (s's, or the current one when
// s is nil); on a remote server, the team's collection, or the user's own key for a search
// across every collection the user may read. "" = not kept.
func (r *recorder) key(ctx context.Context, s *scope) string {
	if r.rec == nil {
		return ""
	}
	if r.remote() && s != nil && s.ID != "" {
		return "team:" + s.ID
	}
	var pr *project.Project
	if s != nil {
		pr = s.Project
	}
	key, _ := r.history(ctx, pr)
	return key
}

// search queues the analytics of a finished search.
func (r *recorder) search(ctx context.Context, s *scope, o SearchOutput, cached bool) {
	key := r.key(ctx, s)
	if key == "" {
		return
	}
	e := analytics.Event{Time: r.now().UTC(), Kind: analytics.KindSearch, Query: o.Query, Hits: o.Count, Cached: cached,
		Weak: o.SearchMode == r2r.SearchModeBasic && o.Count > 0 && o.topScore > 0 && o.topScore < analytics.WeakScore}
	for _, h := range o.Results[:min(len(o.Results), analytics.MaxDocs)] {
		e.Docs = append(e.Docs, analytics.Doc{ID: h.DocumentID, Title: h.Title})
	}
	r.rec.Record(key, e)
}

// rag queues the analytics of a finished RAG question. Without its sources nothing says
// how well it was answered: it counts, but never as a gap.
func (r *recorder) rag(ctx context.Context, s *scope, o RAGOutput, withSources, cached bool) {
	key := r.key(ctx, s)
	if key == "" {
		return
	}
	e := analytics.Event{Time: r.now().UTC(), Kind: analytics.KindRAG, Query: o.Question, Hits: len(o.Sources), Cached: cached}
	if !withSources {
		e.Hits = analytics.HitsUnknown
	}
	var seen []string
	for _, src := range o.Sources {
		if src.Cited && !slices.Contains(seen, src.DocumentID) && len(seen) < analytics.MaxDocs {
			seen = append(seen, src.DocumentID)
			e.Docs = append(e.Docs, analytics.Doc{ID: src.DocumentID, Title: src.Title})
		}
	}
	e.Weak = e.Hits > 0 && len(seen) == 0
	r.rec.Record(key, e)
}

// recall queues the kinds of the memories a recall returned.
func (r *recorder) recall(ctx context.Context, s *scope, ms []memory.Memory) {
	key := r.key(ctx, s)
	if key == "" {
		return
	}
	e := analytics.Event{Time: r.now().UTC(), Kind: analytics.KindRecall, Hits: len(ms)}
	for _, m := range ms {
		e.MemoryKinds = append(e.MemoryKinds, m.Kind)
	}
	r.rec.Record(key, e)
}

// analyticsTop is how many gaps and documents a report lists.
const analyticsTop = 10

// AnalyticsOff is the note of a report when analytics are turned off.
const AnalyticsOff = "Analytics are off (--no-analytics or R2R_MCP_NO_ANALYTICS): nothing is recorded."

// analyticsIndexNote says why the resource does not say how far the index is behind.
const analyticsIndexNote = "How far the index is behind the working tree: run r2r-mcp analytics (it hashes the project's files, too slow for a resource read)."

// analyticsReport is the content of r2r://analytics: everything kept (DefaultMaxAge) of
// the current project, or on a remote server of the user's searches across collections.
func (d *Deps) analyticsReport(ctx context.Context) (analytics.Report, error) {
	now := d.now().UTC()
	since := now.Add(-analytics.DefaultMaxAge)
	if d.Analytics == nil {
		r := analytics.Summarize(nil, since, now, analyticsTop)
		r.Note = AnalyticsOff
		return r, nil
	}
	key, name := d.recorder.key(ctx, nil), ""
	if !d.Projects.Remote() {
		pr, err := d.Projects.Project(ctx)
		if err != nil {
			return analytics.Report{}, err
		}
		name = pr.Name
	}
	d.Analytics.Flush(ctx)
	events, err := d.Analytics.Store().Read(key)
	if err != nil {
		return analytics.Report{}, err
	}
	r := analytics.Summarize(events, since, now, analyticsTop)
	r.Project = name
	if d.Projects.Remote() {
		r.Note = "These are your searches across collections; a team collection's analytics: r2r-mcp analytics --redis-url URL --collection ID."
		return r, nil
	}
	r.Note = analyticsIndexNote
	cctx, cancel := context.WithTimeout(ctx, memoryCountTimeout)
	defer cancel()
	if pc, err := d.Projects.Collection(cctx, d.Client, false); err == nil && pc.Exists() {
		if counts, truncated, err := (&memory.Store{API: d.Client, CollectionID: pc.ID}).Counts(cctx); err == nil && !truncated {
			r.Memories = counts
		}
	}
	return r, nil
}
