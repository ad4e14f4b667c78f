package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

const defaultDebounce = 500 * time.Millisecond

// watchSync syncs once, then again each time files under the directory have changed and
// stayed unchanged for the debounce time, until ctx ends (Ctrl-C). A failed sync is
// reported and the watch goes on. Changes to files the sync leaves out (ignored ones next
// to listed files, such as a log being written) do not count; and a stream of changes
// that never settles syncs at least once per maxWait, so no file can postpone a sync
// forever.
func watchSync(ctx context.Context, o *syncOptions, t *syncTarget) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching files: %w", err)
	}
	defer w.Close()
	ignored, err := watchDirs(ctx, w, t)
	if err != nil {
		return err
	}
	errOut := o.Deps.IO.ErrOut
	resync := func() {
		err := refreshTeam(ctx, t)
		if err == nil {
			err = syncOnce(ctx, o, t)
		}
		if err != nil && !errors.Is(err, SilentError) {
			fmt.Fprintln(errOut, "sync failed:", err)
		}
		// Files may have appeared, gone or become ignored: watch and filter anew.
		if ig, err := watchDirs(ctx, w, t); err == nil {
			ignored = ig
		}
	}
	resync()
	fmt.Fprintf(errOut, "Watching %s for changes (Ctrl-C to stop).\n", cleantext.Terminal(t.dir))
	debounce := o.Debounce
	if debounce <= 0 {
		debounce = defaultDebounce
	}
	maxWait := max(20*debounce, 10*time.Second)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var first time.Time // the first change not yet synced; zero = none
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors:
			fmt.Fprintln(errOut, "watch:", err)
		case ev := <-w.Events:
			if inGitDir(t.root, ev.Name) || ignored[ev.Name] {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					_ = addTree(w, ev.Name)
				}
			}
			now := time.Now()
			if first.IsZero() {
				first = now
			}
			timer.Reset(min(debounce, max(first.Add(maxWait).Sub(now), 0)))
		case <-timer.C:
			first = time.Time{}
			resync()
		}
	}
}

// refreshTeam resolves a team project's ref anew before a watch's run: commits and
// fetches since the last run move the team's version and the merge base.
func refreshTeam(ctx context.Context, t *syncTarget) error {
	if t.team == nil {
		return nil
	}
	return t.team.Refresh(ctx, t.syncer, t.root)
}

// watchDirs watches the synced directory and every directory holding a listed file
// (ignored trees such as node_modules are not watched, which keeps within inotify's
// limits). It returns the files in those directories that the sync leaves out, by path.
func watchDirs(ctx context.Context, w *fsnotify.Watcher, t *syncTarget) (map[string]bool, error) {
	files, err := kbsync.ListFiles(ctx, t.root, t.dir)
	if err != nil {
		return nil, err
	}
	abs := func(rel string) string {
		if filepath.IsAbs(rel) {
			return rel
		}
		return filepath.Join(t.root, filepath.FromSlash(rel))
	}
	listed := make(map[string]bool, len(files))
	dirs := map[string]bool{t.dir: true}
	for _, f := range files {
		listed[abs(f)] = true
		for d := path.Dir(f); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	ignored := map[string]bool{}
	for d := range dirs {
		p := abs(d)
		if err := w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("watching %s: %w", p, err)
		}
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			if f := filepath.Join(p, e.Name()); !e.IsDir() && !listed[f] {
				ignored[f] = true
			}
		}
	}
	return ignored, nil
}

// addTree watches a new directory and the directories below it.
func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		return w.Add(p)
	})
}

func inGitDir(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/")
}
