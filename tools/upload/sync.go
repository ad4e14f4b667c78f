package upload

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// ProjectFiles reads files of the project rooted at root under the upload rules (see
// confine.Read) for the sync engine. A file reached through a symbolic link is refused:
// sync writes every file under its own path. It is a kbsync.Reserver: a file being written
// holds its share of the process's memory budget for uploads, as an Upload does.
func ProjectFiles(root string) kbsync.FileReader { return projectFiles{root: root} }

type projectFiles struct{ root string }

func (p projectFiles) Reserve(ctx context.Context, rel string) (func(), error) {
	return reserve(ctx, shared, reservation(filepath.FromSlash(rel), []string{p.root}))
}

func (p projectFiles) ReadFile(rel string) (kbsync.File, error) {
	l, err := read(filepath.FromSlash(rel), Options{Roots: []string{p.root}, Exact: true})
	if err != nil {
		return kbsync.File{}, refusal(err)
	}
	return kbsync.File{Path: l.rel, Data: l.file.Data, AsText: l.file.AsText}, nil
}

// refusal is err as the sync engine reports it: a confinement refusal is a *kbsync.Refusal.
func refusal(err error) error {
	if ce, ok := errors.AsType[*confine.Error](err); ok {
		return &kbsync.Refusal{Kind: ce.Kind, Reason: ce.Msg}
	}
	return err
}

// SyncConfig describes one sync of a project directory into its collection.
type SyncConfig struct {
	API   kbsync.API
	Scope kbsync.Scope
	// Root is the project root; Dir the directory synced inside it ("" = Root).
	Root, Dir   string
	Prune       bool
	Concurrency int    // 0 = 4
	Mode        string // R2R ingestion mode; "" = fast
	// Poll is the first delay between ingestion status checks; 0 = 250 ms.
	Poll time.Duration
	// Wait bounds the wait for R2R to ingest each file (kbsync.Writer's Wait); 0 = 2 minutes.
	Wait time.Duration
	// StateDir keeps the lock and hash cache; "" = kbsync.StateDir().
	StateDir string
	// OnWrite is called after every change to the collection (may be nil).
	OnWrite func()
	// Pending records the files sent until R2R has finished with them; nil = a table of
	// this sync's own.
	Pending *Pending
}

// TeamConfig is the team side of a team sync.
type TeamConfig struct {
	// CollectionID is the team collection; CollectionOwner reports whether the caller owns
	// it.
	CollectionID    string
	CollectionOwner bool
	// Ref is the branch or ref the team follows ("" = the remote's default branch).
	Ref string
}

// NewTeam resolves what a team sync of the repository at root needs from git: the ref the
// team follows and its commit, the merge base with HEAD, the object format.
func NewTeam(ctx context.Context, root string, tc TeamConfig) (*kbsync.Team, error) {
	ref, commit, err := kbsync.ResolveTeamRef(ctx, root, tc.Ref)
	if err != nil {
		return nil, err
	}
	ct, err := kbsync.CommitTime(ctx, root, commit)
	if err != nil {
		return nil, err
	}
	return &kbsync.Team{Ref: ref, Commit: commit, CommitTime: ct, Base: kbsync.MergeBase(ctx, root, commit),
		Format: kbsync.ObjectFormat(ctx, root), CollectionOwner: tc.CollectionOwner, Blobs: RefFiles(root)}, nil
}

// NewSyncer builds the sync engine of c: the project's include/exclude globs from
// .r2r-mcp.json, the hash cache in the state directory, files read under the upload rules
// (ProjectFiles) and written as an Upload writes them: recorded in c.Pending.
// It returns the state directory and the project's key in it too (for kbsync.Lock).
func NewSyncer(c SyncConfig) (s *kbsync.Syncer, stateDir, key string, err error) {
	globs, err := kbsync.LoadGlobs(c.Root)
	if err != nil {
		return nil, "", "", err
	}
	stateDir = c.StateDir
	if stateDir == "" {
		if stateDir, err = kbsync.StateDir(); err != nil {
			return nil, "", "", err
		}
	}
	key = kbsync.Key(c.Root, "")
	pending := c.Pending
	if pending == nil {
		pending = NewPending()
	}
	s = &kbsync.Syncer{
		Opts: kbsync.Options{Root: c.Root, Dir: c.Dir, Globs: globs, Prune: c.Prune, Concurrency: c.Concurrency,
			Files: ProjectFiles(c.Root), Hashes: kbsync.OpenHashCache(filepath.Join(stateDir, key+".hashes.json"))},
		Writer: &kbsync.Writer{API: kbsync.WaitOutRateLimits(c.API, 0), Scope: c.Scope, Mode: c.Mode, Wait: c.Wait, Poll: c.Poll,
			OnWrite: c.OnWrite, Pending: pending},
	}
	return s, stateDir, key, nil
}

// Join makes s, a sync whose Scope is the caller's private collection (CollectionID "" while
// it does not exist), a team sync with t, whose team layer goes to the team collection,
// written as s's private layer is (kbsync.Writer.For: the same waits, pending table, hooks).
func Join(s *kbsync.Syncer, t *kbsync.Team, teamCollectionID string) {
	sc := s.Writer.Scope
	sc.CollectionID, sc.Layer = teamCollectionID, kbsync.LayerTeam
	t.Writer = s.Writer.For(sc)
	s.Opts.Team = t
}

// RefFiles reads files of the commits of the repository at root (a team sync's team
// version) under the same ingest rules as files of the work tree (see confine.Check). It is
// a kbsync.BlobReserver: a file being written holds its share of the process's memory
// budget for uploads, as one of the work tree does.
func RefFiles(root string) kbsync.BlobReader { return refFiles{root: root} }

type refFiles struct{ root string }

func (r refFiles) ReserveBlob(ctx context.Context, rel string, e kbsync.TreeEntry) (func(), error) {
	limit, _, _ := confine.Limits(rel)
	return reserve(ctx, shared, holding(min(e.Size, limit)))
}

func (r refFiles) ReadBlob(ctx context.Context, rel string, e kbsync.TreeEntry) (kbsync.File, error) {
	limit, _, _ := confine.Limits(rel)
	if e.Size > limit {
		return kbsync.File{}, refusal(confine.Oversize(rel, e.Size))
	}
	data, err := kbsync.ReadBlob(ctx, r.root, e.Blob, e.Size, limit)
	if err != nil {
		return kbsync.File{}, err
	}
	f, err := confine.Check(rel, data)
	if err != nil {
		return kbsync.File{}, refusal(err)
	}
	return kbsync.File{Path: rel, Data: f.Data, AsText: f.AsText}, nil
}
