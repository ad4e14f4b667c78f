package kbsync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Team makes a sync a team sync. The team's version of the repository (the files of the
// ref it follows) goes to the team collection as LayerTeam documents whose ids do not
// depend on who writes them, so teammates syncing the same commit store each file once. The
// caller's own differences (branch commits and uncommitted edits: listed files whose content
// is neither the merge base's nor the ref's) go to the caller's private collection (the
// Syncer's Writer) as LayerPrivate documents, and retire by themselves once the file
// matches the team's version again.
//
// R2R 3.6.6 lets only a document's owner delete it and the collection's owner take any
// document out of the collection, so a team document is replaced or removed only by a sync
// that may do one of those (what it may not do is left, and said, for the one who may); a
// sync whose ref is behind the team's newest commit writes nothing of the team's version.
type Team struct {
	Ref, Commit string
	CommitTime  int64
	// Base is the merge base of HEAD and Commit ("" = none: differences are judged against
	// Commit alone); Format the repository's object format.
	Base, Format string
	// Writer writes the team layer: Layer LayerTeam, Scope the team collection (UserID the
	// caller's); the Syncer's Writer.For that scope writes it as the private layer is written.
	Writer *Writer
	// CollectionOwner: the caller owns the team collection.
	CollectionOwner bool
	// Blobs reads a file of the ref under the ingest rules.
	Blobs BlobReader
}

// BlobReader reads the content of a file of a commit under the ingest rules; a file the
// rules refuse gives a *Refusal.
type BlobReader interface {
	ReadBlob(ctx context.Context, rel string, e TreeEntry) (File, error)
}

// BlobReserver is a BlobReader that bounds the memory the files being written hold, as a
// Reserver does for the work tree's: Run reserves a file's share before reading it from the
// ref to write it, and releases it once the file is written. An error is why the file was
// not written.
type BlobReserver interface {
	ReserveBlob(ctx context.Context, rel string, e TreeEntry) (release func(), err error)
}

// For is a Writer configured as w (its API, mode, waits, clock, hooks and Pending tracker)
// that writes to sc and shares w's run state: a team sync's team layer is written as its
// private layer is, in the same run.
func (w *Writer) For(sc Scope) *Writer {
	return &Writer{API: w.API, Scope: sc, Mode: w.Mode, Wait: w.Wait, Poll: w.Poll, OnWrite: w.OnWrite,
		OnStatus: w.OnStatus, SlowAfter: w.SlowAfter, DeadAfter: w.DeadAfter, Now: w.Now, Pending: w.Pending,
		runOf: w.run()}
}

func (t *Team) objectFormat() string {
	if t == nil {
		return ""
	}
	return t.Format
}

// TeamVersion is one team-layer document of a path.
type TeamVersion struct {
	Version
	OwnerID    string
	Blob       string
	Commit     string
	CommitTime int64
}

// TeamPlan is what a team sync does to the team layer.
type TeamPlan struct {
	Ref       string     `json:"ref"`
	Commit    string     `json:"commit"`
	Upload    []Item     `json:"upload"`
	Replace   []Item     `json:"replace"`
	Unchanged int        `json:"unchanged"`
	Delete    []Deletion `json:"delete"`
	// Left are changes this sync may not make (another member's document that only they or
	// the collection's owner may delete), with whom they are left to.
	Left []Problem `json:"left"`
	// Behind says why nothing of the team's version is written: the team's version is newer
	// than this clone's ref.
	Behind string `json:"behind,omitempty"`
	// Empty counts the ref's files that hold no text (empty ones; one of whitespace is
	// found when it is read): not sent, and their team versions retired.
	Empty int `json:"empty"`
	// Legacy are the caller's documents from before team syncs whose path the team layer now
	// holds: deleted, they would be a second copy.
	Legacy []Deletion `json:"legacy"`
}

// teamManifest is a team collection's team layer by path, and the caller's documents
// written there before team syncs.
type teamManifest struct {
	team   map[string][]TeamVersion
	legacy map[string][]Version
}

// loadTeamManifest reads every document of the team collection: team-layer documents of
// the project (whoever wrote them; the id proves path and content) and the caller's own.
func loadTeamManifest(ctx context.Context, api API, s Scope) (*teamManifest, error) {
	m := &teamManifest{team: map[string][]TeamVersion{}, legacy: map[string][]Version{}}
	err := EachDocument(ctx, api, s.CollectionID, func(d r2r.Document) {
		md := d.Metadata
		str := func(k string) string { v, _ := md[k].(string); return v }
		p, sha := str(MetaSourcePath), str(MetaContentSHA)
		if str(MetaSource) != SourceValue || p == "" || str(MetaProject) != s.Project || str(MetaSourceRoot) != "" {
			return
		}
		switch str(MetaLayer) {
		case LayerTeam:
			if d.ID != TeamVersionID(s.CollectionID, p, sha) {
				return
			}
			ct, _ := md[MetaCommitTime].(float64)
			m.team[p] = append(m.team[p], TeamVersion{Version: Version{ID: d.ID, SHA: sha, Status: d.IngestionStatus},
				OwnerID: d.OwnerID, Blob: str(MetaBlob), Commit: str(MetaCommit), CommitTime: int64(ct)})
		case "":
			if _, v, ok := s.owns(d); ok {
				m.legacy[p] = append(m.legacy[p], v)
			}
		}
	})
	return m, err
}

// EachDocument calls fn for every document of a collection, failing rather than stopping
// part way (nothing may be deleted on the strength of a partial listing).
func EachDocument(ctx context.Context, api API, collectionID string, fn func(r2r.Document)) error {
	seen := map[string]bool{}
	for off := 0; ; off += manifestPage {
		page, err := api.ListCollectionDocuments(ctx, collectionID, r2r.ListParams{Offset: off, Limit: manifestPage})
		if err != nil {
			return fmt.Errorf("listing the collection's documents: %w", err)
		}
		for _, d := range page.Items {
			if !seen[d.ID] {
				seen[d.ID] = true
				fn(d)
			}
		}
		if len(page.Items) < manifestPage || off+len(page.Items) >= page.Total {
			return nil
		}
	}
}

// commits are the team layer's commits, newest (by committer time) first, at most n.
func (m *teamManifest) commits(n int) []TeamVersion {
	seen := map[string]bool{}
	var out []TeamVersion
	for _, vs := range m.team {
		for _, v := range vs {
			if IsCommitID(v.Commit) && !seen[v.Commit] {
				seen[v.Commit] = true
				out = append(out, v)
			}
		}
	}
	slices.SortFunc(out, func(a, b TeamVersion) int { return int(b.CommitTime - a.CommitTime) })
	return out[:min(n, len(out))]
}

// behind returns a commit the team's version was written from that this clone's ref does
// not contain and that is newer: one the clone lacks, or that follows its ref (a history
// rewritten since is judged by time). "" when the ref is up to date.
func (s *Syncer) behind(ctx context.Context, m *teamManifest) string {
	t, root := s.Opts.Team, s.Opts.Root
	for _, v := range m.commits(20) {
		c := v.Commit
		if c == t.Commit || IsAncestor(ctx, root, c, t.Commit) {
			continue
		}
		if !HasCommit(ctx, root, c) || IsAncestor(ctx, root, t.Commit, c) || v.CommitTime > t.CommitTime {
			return c
		}
	}
	return ""
}

// planTeam plans the team layer for the files of the ref under the synced directory.
//
// A team document counts as the ref's file only when its recorded object id is the ref's and
// its content hash is that of the ref's content (hashOf): R2R lets any account write a
// document under any id, so what another member wrote is checked, not trusted.
func (s *Syncer) planTeam(ctx context.Context, tree map[string]TreeEntry, m *teamManifest, prefix string, hashOf func(TreeEntry) string) *TeamPlan {
	t := s.Opts.Team
	tp := &TeamPlan{Ref: t.Ref, Commit: t.Commit, Upload: []Item{}, Replace: []Item{}, Delete: []Deletion{},
		Left: []Problem{}, Legacy: []Deletion{}}
	if c := s.behind(ctx, m); c != "" {
		tp.Behind = fmt.Sprintf("the team's version is at commit %s, newer than %s (%s) of this clone: "+
			"git fetch, and sync again to bring the team's version forward", short(c), t.Ref, short(t.Commit))
		return tp
	}
	for _, p := range sortedKeys(tree) {
		e := tree[p]
		vs := m.team[p]
		if e.Size == 0 {
			tp.Empty++
			s.retireTeam(tp, p, "emptied on "+t.Ref, vs)
			continue
		}
		var cur *TeamVersion
		var others []TeamVersion
		for i := range vs {
			if vs[i].Blob == e.Blob && vs[i].Status != r2r.IngestionFailed && cur == nil && vs[i].SHA == hashOf(e) {
				cur = &vs[i]
			} else {
				others = append(others, vs[i])
			}
		}
		it := Item{Path: p, Blob: e.Blob, Size: e.Size}
		switch {
		case cur != nil && len(others) == 0 && cur.Status == r2r.IngestionSuccess:
			tp.Unchanged++
		case len(others) == 0:
			tp.Upload = append(tp.Upload, it)
		case s.mayRetire(others):
			it.Old = versions(others)
			tp.Replace = append(tp.Replace, it)
		default:
			tp.Left = append(tp.Left, s.leftTo(p, "changed on "+t.Ref, others))
		}
		if cur != nil && cur.Status == r2r.IngestionSuccess {
			for _, v := range m.legacy[p] {
				tp.Legacy = append(tp.Legacy, Deletion{Path: p, DocumentID: v.ID, SHA: v.SHA})
			}
		}
	}
	for _, p := range sortedKeys(m.team) {
		if _, ok := tree[p]; ok || !within(prefix, p) {
			continue
		}
		s.retireTeam(tp, p, "gone from "+t.Ref, m.team[p])
	}
	return tp
}

// retireTeam plans the retirement of vs, the team versions of path p, which the ref no
// longer has (why): left to their owners when the caller may not retire them.
func (s *Syncer) retireTeam(tp *TeamPlan, p, why string, vs []TeamVersion) {
	if len(vs) == 0 {
		return
	}
	if !s.mayRetire(vs) {
		tp.Left = append(tp.Left, s.leftTo(p, why, vs))
		return
	}
	for _, v := range vs {
		tp.Delete = append(tp.Delete, Deletion{Path: p, DocumentID: v.ID, SHA: v.SHA, OwnerID: v.OwnerID})
	}
}

// mayRetire reports whether the caller may remove every one of vs from the team collection.
func (s *Syncer) mayRetire(vs []TeamVersion) bool {
	if s.Opts.Team.CollectionOwner {
		return true
	}
	me := s.Opts.Team.Writer.Scope.UserID
	return !slices.ContainsFunc(vs, func(v TeamVersion) bool { return v.OwnerID != me })
}

func (s *Syncer) leftTo(p, why string, vs []TeamVersion) Problem {
	var owners []string
	for _, v := range vs {
		if !slices.Contains(owners, v.OwnerID) {
			owners = append(owners, v.OwnerID)
		}
	}
	return Problem{Path: p, Kind: "left_to_owner", Reason: fmt.Sprintf("%s; its team version is another member's document "+
		"(user %s), which only they or the team collection's owner may replace: their next sync does", why, strings.Join(owners, ", "))}
}

func versions(vs []TeamVersion) []Version {
	out := make([]Version, len(vs))
	for i, v := range vs {
		out[i] = v.Version
		out[i].OwnerID = v.OwnerID
	}
	return out
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// mine reports whether a listed file is one of the caller's own differences: its content is
// neither the ref's nor (when there is a merge base) the merge base's, where the ref changed
// it and the caller did not.
func mine(blob string, tree, base map[string]TreeEntry, p string) bool {
	if e, ok := tree[p]; ok && e.Blob == blob {
		return false
	}
	if e, ok := base[p]; ok && e.Blob == blob {
		return false
	}
	return true
}

// readBlob reads a file of the team's ref to write it as the team's version, holding its
// share of the memory budget (when Blobs is a BlobReserver) until release.
func (s *Syncer) readBlob(ctx context.Context, it Item) (File, func(), error) {
	t := s.Opts.Team
	e := TreeEntry{Blob: it.Blob, Size: it.Size}
	var reserve func(context.Context) (func(), error)
	if r, ok := t.Blobs.(BlobReserver); ok {
		reserve = func(ctx context.Context) (func(), error) { return r.ReserveBlob(ctx, it.Path, e) }
	}
	f, release, err := held(ctx, reserve, func() (File, error) { return t.Blobs.ReadBlob(ctx, it.Path, e) })
	if err != nil {
		return File{}, nil, err
	}
	if f.Metadata == nil {
		f.Metadata = map[string]any{}
	}
	f.Metadata[MetaRef], f.Metadata[MetaCommit], f.Metadata[MetaCommitTime], f.Metadata[MetaBlob] =
		t.Ref, t.Commit, t.CommitTime, it.Blob
	return f, release, nil
}

// retire removes one document from the collection w writes to: deleted when the caller
// owns it, else taken out of the collection (what its owner may do with any document).
func (w *Writer) retire(ctx context.Context, v Version) error {
	if v.OwnerID == "" || v.OwnerID == w.Scope.UserID {
		return w.Delete(ctx, v.ID)
	}
	err := w.API.RemoveDocumentFromCollection(ctx, w.Scope.CollectionID, v.ID)
	if err == nil || errors.Is(err, r2r.ErrNotFound) {
		w.wrote()
		return nil
	}
	return err
}
