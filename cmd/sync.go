package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

type syncOptions struct {
	Dir         string
	Prune       bool
	DryRun      bool
	JSON        bool
	Watch       bool
	Concurrency int
	Mode        string

	r2rCmd
	// StateDir keeps the lock and hash cache; "" = the user cache directory.
	StateDir string
	// Debounce is how long --watch waits for changes to settle; 0 = 500 ms.
	Debounce time.Duration
	// Wait bounds the wait for R2R to ingest each file; 0 = 2 minutes.
	Wait time.Duration
}

func newSyncCmd(deps Deps, runF func(*syncOptions) error) *cobra.Command {
	opts := &syncOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "sync [DIR]",
		Short: "Bring the project's R2R collection in step with its files",
		Long: `Sync the files of DIR (default: the project root) into the project's R2R collection.

Files are listed with "git ls-files -co --exclude-standard" (tracked and untracked, not
ignored; outside git the .gitignore files are honoured), filtered by the "include" and
"exclude" globs of .r2r-mcp.json, and checked by the ingest rules (inside the project, no
secrets, size limits; source code and other text R2R has no parser for is sent as text).
Each file's SHA-256 is compared with the documents r2r-mcp wrote for this project: new
files are uploaded, changed ones replaced (the new version is ingested before the old one
is deleted), unchanged ones left alone. A file with no text (empty or whitespace only) is
not sent and is counted as empty; the documents of one emptied since it was synced are
deleted. A local cache of path, size and modification time spares reading unchanged files. --prune also deletes the documents of files no longer in
the synced set, only after a complete scan in which nothing failed.

One sync per project runs at a time, across processes. Exits 1 when anything failed.`,
		Example: `  r2r-mcp sync                 # the project root
  r2r-mcp sync docs --dry-run  # show what would change
  r2r-mcp sync --prune --json  # also delete documents of removed files; JSON summary
  r2r-mcp sync --watch         # keep syncing as files change`,
		Args: cobra.MaximumNArgs(1),
		RunE: runE(opts, func(args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if opts.Concurrency < 1 || opts.Concurrency > 32 {
				return fmt.Errorf("--concurrency must be between 1 and 32, not %d", opts.Concurrency)
			}
			if !slices.Contains(kbsync.IngestionModes, opts.Mode) {
				return fmt.Errorf("--ingestion-mode must be one of %s, not %q", strings.Join(kbsync.IngestionModes, ", "), opts.Mode)
			}
			return nil
		}, runF, runSync),
	}
	f := c.Flags()
	addURLFlag(f, &opts.URL)
	f.BoolVar(&opts.Prune, "prune", false, "also delete documents of files no longer in the synced set (only documents r2r-mcp wrote for this project)")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the plan and change nothing")
	f.BoolVar(&opts.JSON, "json", false, "print the summary as JSON")
	f.BoolVar(&opts.Watch, "watch", false, "keep running and sync again whenever files change")
	f.IntVar(&opts.Concurrency, "concurrency", 4, "files read and uploaded at once (1-32)")
	f.StringVar(&opts.Mode, "ingestion-mode", "fast", "R2R ingestion mode: "+strings.Join(kbsync.IngestionModes, ", "))
	return c
}

// syncTarget is a resolved sync: the project, its collection and the engine.
type syncTarget struct {
	root, dir string
	syncer    *kbsync.Syncer
	stateDir  string
	key       string
	label     string // the collection, for messages
	// team is the team side of a team project's sync (nil otherwise).
	team *upload.TeamSetup
}

func runSync(o *syncOptions) error {
	ctx := o.ctx()
	t, err := resolveSync(ctx, o)
	if err != nil {
		return err
	}
	if !o.Watch {
		return syncOnce(ctx, o, t)
	}
	return watchSync(ctx, o, t)
}

// resolveSync finds the project of the directory, its collection (created unless
// --dry-run) and builds the engine.
func resolveSync(ctx context.Context, o *syncOptions) (*syncTarget, error) {
	start := o.Dir
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("find the working directory: %w", err)
		}
		start = wd
	}
	dir, err := filepath.Abs(start)
	if err == nil {
		dir, err = filepath.EvalSymlinks(dir)
	}
	if fi, serr := os.Stat(dir); err != nil || serr != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", start)
	}
	projects := newProjectResolver(dir)
	pr, err := projects.Project(ctx)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(pr.Root)
	if err != nil {
		return nil, err
	}
	if home, herr := os.UserHomeDir(); filepath.Dir(root) == root || (herr == nil && samePathCmd(root, home)) {
		return nil, fmt.Errorf("the project root %s is your home directory or the file-system root; run sync inside a project", root)
	}
	if o.Dir == "" {
		dir = root
	}
	client, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	userID, err := projects.UserID(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("asking R2R who the credential belongs to: %w", err)
	}
	pc, err := projects.Collection(ctx, client, !o.DryRun)
	if err != nil {
		return nil, fmt.Errorf("resolving the project's collection: %w", err)
	}
	label := pc.Name
	if label == "" {
		label = "collection " + pc.ID
	}
	scope := kbsync.Scope{CollectionID: pc.ID, UserID: userID, Project: pr.Name}
	ts, err := upload.TeamSync(ctx, client, pr.CollectionID, pr.TeamOwner, root, scope, !o.DryRun)
	if err != nil {
		return nil, err
	}
	if ts != nil {
		scope = ts.Private
	}
	syncer, stateDir, key, err := upload.NewSyncer(upload.SyncConfig{API: client, Root: root, Dir: dir, Prune: o.Prune,
		Concurrency: o.Concurrency, Mode: o.Mode, StateDir: o.StateDir, Wait: o.Wait, Scope: scope})
	if err != nil {
		return nil, err
	}
	if ts != nil {
		upload.Join(syncer, ts.Team, ts.CollectionID)
	}
	return &syncTarget{root: root, dir: dir, syncer: syncer, stateDir: stateDir, key: key, label: label, team: ts}, nil
}

func samePathCmd(a, b string) bool {
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// syncOnce takes the project's lock, plans, runs and prints the summary.
func syncOnce(ctx context.Context, o *syncOptions, t *syncTarget) error {
	unlock, err := kbsync.Lock(t.stateDir, t.key)
	if errors.Is(err, kbsync.ErrLocked) {
		return fmt.Errorf("another sync of %s is running (an r2r-mcp sync or r2r_sync in a server); try again when it has finished", t.root)
	}
	if err != nil {
		return err
	}
	defer unlock()
	plan, err := t.syncer.Plan(ctx)
	if err != nil {
		return err
	}
	var sum *kbsync.Summary
	if o.DryRun {
		sum = plan.DryRun()
	} else {
		progress, done := progressReporter(o.Deps.IO.ErrOut, plan.Steps())
		sum = t.syncer.Run(ctx, plan, progress)
		done()
	}
	if err := printSummary(o.Deps.IO.Out, o.JSON, t, sum); err != nil {
		return err
	}
	if !sum.OK() || len(sum.Pending) > 0 {
		return SilentError
	}
	return nil
}

// progressReporter shows progress on w: a bar when w is a terminal, else one line per
// step. done ends the bar.
func progressReporter(w io.Writer, total int) (func(kbsync.Progress), func()) {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && total > 0 {
		bar := progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("syncing"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		return func(kbsync.Progress) { _ = bar.Add(1) }, func() { _ = bar.Finish() }
	}
	return func(p kbsync.Progress) {
		fmt.Fprintf(w, "[%d/%d] %s %s\n", p.Done, p.Total, p.Action, cleantext.Terminal(p.Path))
	}, func() {}
}

func printSummary(w io.Writer, asJSON bool, t *syncTarget, s *kbsync.Summary) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	verb := "Synced"
	if s.DryRun {
		verb = "Dry run: would sync"
	}
	into := cleantext.Terminal(t.label)
	if s.Team != nil {
		printTeamSummary(w, s)
		into = "your private collection (your own versions, which only you see)"
	}
	fmt.Fprintf(w, "%s %s into %s: %d uploaded, %d replaced, %d unchanged%s, %d deleted, %d refused, %d failed",
		verb, cleantext.Terminal(t.dir), into, len(s.Uploaded), len(s.Replaced), s.Unchanged, emptyCount(s.Empty), len(s.Deleted), len(s.Refused), len(s.Failed))
	if !s.DryRun {
		fmt.Fprintf(w, " (%.1f s)", float64(s.DurationMS)/1000)
	}
	fmt.Fprintln(w, ".")
	if s.DryRun {
		for _, l := range []struct {
			what  string
			paths []string
		}{{"upload", s.Uploaded}, {"replace", s.Replaced}, {"delete", s.Deleted}} {
			for _, p := range l.paths {
				fmt.Fprintf(w, "  %s %s\n", l.what, cleantext.Terminal(p))
			}
		}
	}
	if len(s.Pending) > 0 {
		fmt.Fprintf(w, "R2R was still ingesting %d file(s) when the sync ended; their older versions are kept. Sync again to finish them"+
			" (an ingestion R2R has not finished within %d min is reported as stuck, with the way out):\n", len(s.Pending), int(kbsync.SlowAfter.Minutes()))
		for _, p := range s.Pending {
			fmt.Fprintf(w, "  PENDING %s\n", cleantext.Terminal(p))
		}
	}
	if s.Stale > 0 {
		fmt.Fprint(w, kbsync.StaleKept(s.Stale))
		if s.PruneSkipped != "" {
			fmt.Fprintf(w, ": %s.\n", cleantext.Line(s.PruneSkipped))
		} else {
			fmt.Fprintln(w, " (sync with --prune to delete them).")
		}
	}
	for _, p := range s.Refused {
		fmt.Fprintf(w, "  refused %s: %s\n", cleantext.Terminal(p.Path), cleantext.Line(p.Reason))
	}
	for _, p := range s.Failed {
		switch {
		case p.Path != "":
			fmt.Fprintf(w, "  FAILED %s: %s\n", cleantext.Terminal(p.Path), cleantext.Line(p.Reason))
		case p.Kind == kbsync.KindCancelled:
			fmt.Fprintf(w, "  stopped: %s\n", cleantext.Line(p.Reason))
		default: // a problem of the run, not of a file
			fmt.Fprintf(w, "  FAILED: %s\n", cleantext.Line(p.Reason))
		}
	}
	return nil
}

// emptyCount is the summary's count of files with no text (not sent): ", N empty", or
// nothing when there were none.
func emptyCount(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d empty", n)
}

// printTeamSummary prints what a team sync did to the team's version.
func printTeamSummary(w io.Writer, s *kbsync.Summary) {
	t := s.Team
	verb := "Team's version"
	if s.DryRun {
		verb = "Dry run of the team's version"
	}
	fmt.Fprintf(w, "%s (%s at %.12s): %d uploaded, %d replaced, %d unchanged%s, %d retired", verb, cleantext.Terminal(t.Ref), t.Commit,
		len(t.Uploaded), len(t.Replaced), t.Unchanged, emptyCount(t.Empty), len(t.Deleted))
	if len(t.Migrated) > 0 {
		fmt.Fprintf(w, "; %d of your copies from before team syncs removed", len(t.Migrated))
	}
	fmt.Fprintln(w, ".")
	if t.Behind != "" {
		fmt.Fprintf(w, "  Not written: %s.\n", cleantext.Line(t.Behind))
	}
	if s.DryRun {
		for _, l := range []struct {
			what  string
			paths []string
		}{{"upload", t.Uploaded}, {"replace", t.Replaced}, {"retire", t.Deleted}} {
			for _, p := range l.paths {
				fmt.Fprintf(w, "  team: %s %s\n", l.what, cleantext.Terminal(p))
			}
		}
	}
	for _, p := range t.Left {
		fmt.Fprintf(w, "  left %s: %s\n", cleantext.Terminal(p.Path), cleantext.Line(p.Reason))
	}
}
