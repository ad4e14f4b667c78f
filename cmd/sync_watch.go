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
// reported and the watch goes on.
func watchSync(ctx context.Context, o *syncOptions, t *syncTarget) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching files: %w", err)
	}
	defer w.Close()
	if err := watchDirs(ctx, w, t); err != nil {
		return err
	}
	errOut := o.Deps.IO.ErrOut
	report := func(err error) {
		if err != nil && !errors.Is(err, SilentError) {
			fmt.Fprintln(errOut, "sync failed:", err)
		}
	}
	report(syncOnce(ctx, o, t))
	fmt.Fprintf(errOut, "Watching %s for changes (Ctrl-C to stop).\n", cleantext.Terminal(t.dir))
	debounce := o.Debounce
	if debounce <= 0 {
		debounce = defaultDebounce
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-w.Errors:
			fmt.Fprintln(errOut, "watch:", err)
		case ev := <-w.Events:
			if inGitDir(t.root, ev.Name) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					_ = addTree(w, ev.Name)
				}
			}
			timer.Reset(debounce)
		case <-timer.C:
			report(syncOnce(ctx, o, t))
		}
	}
}

// watchDirs watches the synced directory and every directory holding a listed file
// (ignored trees such as node_modules are not watched, which keeps within inotify's
// limits).
func watchDirs(ctx context.Context, w *fsnotify.Watcher, t *syncTarget) error {
	files, err := kbsync.ListFiles(ctx, t.root, t.dir)
	if err != nil {
		return err
	}
	dirs := map[string]bool{t.dir: true}
	for _, f := range files {
		for d := path.Dir(f); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		p := d
		if !filepath.IsAbs(p) {
			p = filepath.Join(t.root, filepath.FromSlash(d))
		}
		if err := w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("watching %s: %w", p, err)
		}
	}
	return nil
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
