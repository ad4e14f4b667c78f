package upload

import (
	"errors"
	"fmt"
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
	f, err := confine.Read(filepath.FromSlash(rel), []string{p.root})
	if ce, ok := errors.AsType[*confine.Error](err); ok {
		return kbsync.File{}, &kbsync.Refusal{Kind: ce.Kind, Reason: ce.Msg}
	}
	switch {
	case err != nil:
		return kbsync.File{}, err
	case f.Rel != rel:
		return kbsync.File{}, &kbsync.Refusal{Kind: "symlink", Reason: fmt.Sprintf("%s is reached through a symbolic link (it is %s); that path is synced instead", rel, f.Rel)}
	}
	return kbsync.File{Path: f.Rel, Data: f.Data, AsText: f.AsText}, nil
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
	// StateDir keeps the lock and hash cache; "" = kbsync.StateDir().
	StateDir string
	// OnWrite is called after every change to the collection (may be nil).
	OnWrite func()
}

// NewSyncer builds the sync engine of c: the project's include/exclude globs from
// .r2r-mcp.json, the upload rules, and the hash cache in the state directory. It returns
// the state directory and the project's key in it too (for kbsync.Lock).
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
	s = &kbsync.Syncer{
		Opts: kbsync.Options{Root: c.Root, Dir: c.Dir, Globs: globs, Prune: c.Prune, Concurrency: c.Concurrency,
			Files: ProjectFiles(c.Root), Hashes: kbsync.OpenHashCache(filepath.Join(stateDir, key+".hashes.json"))},
		Writer: &kbsync.Writer{API: kbsync.WaitOutRateLimits(c.API, 0), Scope: c.Scope, Mode: c.Mode, Poll: c.Poll,
			OnWrite: c.OnWrite},
	}
	return s, stateDir, key, nil
}
