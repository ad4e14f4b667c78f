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
// sync writes every file under its own path.
func ProjectFiles(root string) kbsync.FileReader { return projectFiles{root: root} }

type projectFiles struct{ root string }

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

// NewSyncer builds the sync engine of c: the project's include/exclude globs from
// .r2r-mcp.json, the hash cache in the state directory, and every file written by Upload.
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
	api := kbsync.WaitOutRateLimits(c.API, 0)
	s = &kbsync.Syncer{
		Opts: kbsync.Options{Root: c.Root, Dir: c.Dir, Globs: globs, Prune: c.Prune, Concurrency: c.Concurrency,
			Files: ProjectFiles(c.Root), Hashes: kbsync.OpenHashCache(filepath.Join(stateDir, key+".hashes.json"))},
		Writer: &kbsync.Writer{API: api, Scope: c.Scope, Mode: c.Mode, Poll: c.Poll, OnWrite: c.OnWrite},
		Put:    syncPut(api, c),
	}
	return s, stateDir, key, nil
}

// syncPut writes one item of a sync's plan with Upload, under the file's own path and with
// the versions the plan found.
func syncPut(api kbsync.API, c SyncConfig) func(ctx context.Context, it kbsync.Item) (kbsync.Outcome, error) {
	pending := c.Pending
	if pending == nil {
		pending = NewPending()
	}
	return func(ctx context.Context, it kbsync.Item) (kbsync.Outcome, error) {
		r, err := Upload(ctx, filepath.FromSlash(it.Path), Options{API: api, Roots: []string{c.Root}, Exact: true,
			Scope: func(context.Context) (kbsync.Scope, error) { return c.Scope, nil },
			Old:   func(context.Context) ([]kbsync.Version, error) { return it.Old, nil },
			Mode:  c.Mode, Poll: c.Poll, Wait: c.Wait, Pending: pending, OnWrite: c.OnWrite})
		if err != nil {
			if we, ok := errors.AsType[*WriteError](err); ok {
				err = we.Err
			}
			return kbsync.Outcome{Action: kbsync.Failed}, refusal(err)
		}
		return r.Outcome, r.Warning
	}
}
