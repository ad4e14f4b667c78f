package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// syncFixture is an emulated R2R without auth and a git project.
type syncFixture struct {
	t        *testing.T
	srv      *r2rtest.Server
	root     string
	config   string
	stateDir string
}

func newSyncFixture(t *testing.T) *syncFixture {
	t.Helper()
	auth.MockKeyring()
	root := statusProject(t, "demo", "")
	if _, err := exec.LookPath("git"); err == nil {
		if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "init", "-q")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	return &syncFixture{t: t, srv: r2rtest.NewServer(t, r2rtest.Options{}), root: root,
		config: t.TempDir(), stateDir: t.TempDir()}
}

func (f *syncFixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// sync runs `r2r-mcp sync --json` with args and decodes the summary.
func (f *syncFixture) sync(args ...string) (*kbsync.Summary, cmdResult) {
	f.t.Helper()
	var out, errOut bytes.Buffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(string) string { return "" }}
	c := newSyncCmd(deps, func(o *syncOptions) error {
		o.Env = authEnv{ConfigDir: f.config}
		o.StateDir = f.stateDir
		return runSync(o)
	})
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(append([]string{"--url", f.srv.URL, "--json"}, args...))
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	r := cmdResult{out.String(), errOut.String(), err}
	var s kbsync.Summary
	if err := json.Unmarshal(out.Bytes(), &s); err != nil && r.err == nil {
		f.t.Fatalf("no JSON summary (%v): %q\nstderr %s", err, r.stdout, r.stderr)
	}
	return &s, r
}

// TestSyncCommandAcceptance: a project of many small files — the first sync uploads all,
// the second none; after changing 3 files and deleting 2, sync --prune replaces 3 and
// deletes 2 and nothing else. Counted with the requests the emulator saw.
func TestSyncCommandAcceptance(t *testing.T) {
	const n = 200
	f := newSyncFixture(t)
	for i := range n {
		f.write(fmt.Sprintf("docs/%03d.md", i), fmt.Sprintf("# Note %d\n\nWalrus fact number %d.", i, i))
	}
	s, r := f.sync(f.root)
	if r.err != nil || len(s.Uploaded) != n || f.srv.Count("POST /v3/documents") != n {
		t.Fatalf("first sync: %v, %d uploaded, %d POSTs\n%s", r.err, len(s.Uploaded), f.srv.Count("POST /v3/documents"), r.stderr)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("[%d/%d] uploaded docs/", n, n)) {
		t.Fatalf("no plain progress lines on a non-terminal: %q", r.stderr[:min(len(r.stderr), 300)])
	}

	f.srv.ResetCounts()
	s, r = f.sync(f.root)
	if r.err != nil || s.Unchanged != n || len(s.Uploaded)+len(s.Replaced) != 0 {
		t.Fatalf("second sync: %+v %v", s, r.err)
	}
	if c := f.srv.Counts(); c["POST /v3/documents"] != 0 || c["DELETE /v3/documents/{id}"] != 0 {
		t.Fatalf("second sync wrote: %v", c)
	}

	for i := range 3 {
		f.write(fmt.Sprintf("docs/%03d.md", i), fmt.Sprintf("# Note %d\n\nNarwhal fact number %d.", i, i))
	}
	for _, i := range []int{10, 11} {
		if err := os.Remove(filepath.Join(f.root, "docs", fmt.Sprintf("%03d.md", i))); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.ResetCounts()
	s, r = f.sync(f.root, "--prune")
	if r.err != nil || !slices.Equal(s.Replaced, []string{"docs/000.md", "docs/001.md", "docs/002.md"}) ||
		!slices.Equal(s.Deleted, []string{"docs/010.md", "docs/011.md"}) || len(s.Uploaded) != 0 || s.Unchanged != n-5 {
		t.Fatalf("prune sync: %+v %v", s, r.err)
	}
	// 3 new versions; 3 old versions and 2 pruned documents deleted.
	if c := f.srv.Counts(); c["POST /v3/documents"] != 3 || c["DELETE /v3/documents/{id}"] != 5 {
		t.Fatalf("prune sync requests: %v", c)
	}
}

func TestSyncCommandDryRunAndFailure(t *testing.T) {
	f := newSyncFixture(t)
	f.write("a.md", "alpha")
	f.write("b.go", "package b")
	f.write(".env", "SECRET=1")
	s, r := f.sync(f.root, "--dry-run")
	if r.err != nil || !s.DryRun || len(s.Uploaded) != 2 || len(s.Refused) != 1 || f.srv.Count("POST /v3/documents") != 0 {
		t.Fatalf("dry run: %+v %v", s, r.err)
	}
	if f.srv.Count("POST /v3/collections") != 0 {
		t.Fatal("a dry run created the collection")
	}
	f.srv.ForceStatus("POST /v3/documents", 500, 1)
	s, r = f.sync(f.root)
	if !errors.Is(r.err, SilentError) || len(s.Failed) != 1 || len(s.Uploaded) != 1 {
		t.Fatalf("failure: %+v %v", s, r.err)
	}
}

func TestSyncCommandLocked(t *testing.T) {
	f := newSyncFixture(t)
	f.write("a.md", "alpha")
	unlock, err := kbsync.Lock(f.stateDir, kbsync.Key(f.root, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, r := f.sync(f.root)
	if r.err == nil || !strings.Contains(r.err.Error(), "another sync") {
		t.Fatalf("locked: %v", r.err)
	}
}

func TestSyncCommandFlags(t *testing.T) {
	var got *syncOptions
	c := newSyncCmd(Deps{}, func(o *syncOptions) error { got = o; return nil })
	c.SetArgs([]string{"docs", "--prune", "--dry-run", "--concurrency", "8", "--watch"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "docs" || !got.Prune || !got.DryRun || got.Concurrency != 8 || !got.Watch || got.JSON {
		t.Fatalf("%+v", got)
	}
	c = newSyncCmd(Deps{}, func(*syncOptions) error { return nil })
	c.SetArgs([]string{"--concurrency", "0"})
	c.SilenceErrors, c.SilenceUsage = true, true
	if err := c.Execute(); err == nil {
		t.Fatal("--concurrency 0 accepted")
	}
	var _ *cobra.Command = c
}

// TestSyncCommandWatch: --watch syncs at start, then again after a change.
func TestSyncCommandWatch(t *testing.T) {
	f := newSyncFixture(t)
	f.write("a.md", "alpha")
	waitFor, stop := f.watch(20 * time.Millisecond)
	waitFor("the first sync", func(stderr string) bool { return strings.Contains(stderr, "Watching") })
	f.write("notes/b.md", "beta")
	waitFor("the second upload", func(string) bool { return f.srv.Count("POST /v3/documents") == 2 })
	stop()
}

// watch runs `r2r-mcp sync --watch` on the fixture's project in the background. waitFor
// polls cond (given sync's stderr so far) until it holds, failing after 20 s; stop ends
// the watch and fails the test if it returned an error.
func (f *syncFixture) watch(debounce time.Duration) (waitFor func(what string, cond func(stderr string) bool), stop func()) {
	t := f.t
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(string) string { return "" }}
	done := make(chan error, 1)
	go func() {
		done <- runSync(&syncOptions{Dir: f.root, Watch: true, Concurrency: 2, Mode: "fast", StateDir: f.stateDir, Debounce: debounce,
			r2rCmd: r2rCmd{URL: f.srv.URL, Ctx: ctx, Deps: deps, Env: authEnv{ConfigDir: f.config}}})
	}()
	t.Cleanup(cancel) // a wait that times out ends the watch too
	waitFor = func(what string, cond func(string) bool) {
		t.Helper()
		waitUntil(t, what, func() bool { return cond(errOut.String()) }, errOut.String)
	}
	stop = func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	return waitFor, stop
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSyncCommandWatchIgnoresIgnoredChanges: a file the sync leaves out (here a log that
// .gitignore excludes) being written all the time used to restart the debounce on every
// write, so the watch never synced the real change beside it.
func TestSyncCommandWatchIgnoresIgnoredChanges(t *testing.T) {
	f := newSyncFixture(t)
	f.write(".gitignore", "*.log\n")
	f.write("a.md", "alpha")
	f.write("app.log", "start\n")
	waitFor, stop := f.watch(300 * time.Millisecond)
	waitFor("the first sync", func(stderr string) bool { return strings.Contains(stderr, "Watching") })
	before := f.srv.Count("POST /v3/documents")
	logCtx, stopLog := context.WithCancel(context.Background())
	defer stopLog()
	go func() { // the log keeps growing, faster than the debounce
		lf, err := os.OpenFile(filepath.Join(f.root, "app.log"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer lf.Close()
		for tick := time.NewTicker(20 * time.Millisecond); ; {
			select {
			case <-logCtx.Done():
				return
			case <-tick.C:
				_, _ = lf.WriteString("line\n")
			}
		}
	}()
	f.write("b.md", "beta")
	waitFor("the upload of b.md while app.log is written", func(string) bool { return f.srv.Count("POST /v3/documents") == before+1 })
	stopLog()
	stop()
}

// TestSyncCommandIngestionMode: a mode R2R refuses (with a 422 per file) is refused by the
// flag's check, dry run or not, before R2R is asked anything; the modes offered sync.
func TestSyncCommandIngestionMode(t *testing.T) {
	for _, tc := range []struct {
		mode string
		ok   bool
	}{
		{"slow", false},
		{"Fast", false},
		{"", false},
		{"fast", true},
		{"hi-res", true},
		{"custom", true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newSyncFixture(t)
			f.write("a.md", "alpha")
			for _, dry := range []bool{true, false} {
				args := []string{f.root, "--ingestion-mode", tc.mode}
				if dry {
					args = append(args, "--dry-run")
				}
				s, r := f.sync(args...)
				if tc.ok {
					if r.err != nil || len(s.Uploaded) != 1 {
						t.Errorf("sync %v: %+v %v %s", args, s, r.err, r.stderr)
					}
					continue
				}
				if r.err == nil || !strings.Contains(r.err.Error(), "--ingestion-mode") || !strings.Contains(r.err.Error(), "hi-res") {
					t.Errorf("sync %v: %v, want the flag refused", args, r.err)
				}
				if n := len(f.srv.Counts()); n != 0 {
					t.Errorf("sync %v asked R2R: %v", args, f.srv.Counts())
				}
			}
		})
	}
}

// TestSyncAfterR2RRestart: R2R restarted while a sync's files were being ingested (nothing
// finishes those ingestions). A sync that ends with files R2R is still ingesting exits 1 and
// names them; the next sync sees the ingestions began before R2R's start, sends the files
// again at once and exits 0 with none pending.
func TestSyncAfterR2RRestart(t *testing.T) {
	f := newSyncFixture(t)
	f.srv.Configure(func(o *r2rtest.Options) { o.IngestDelay = time.Hour })
	files := []string{"docs/a.md", "docs/b.md", "docs/c.md"}
	for i, p := range files {
		f.write(p, fmt.Sprintf("# Note %d\n\nWalrus fact number %d.", i, i))
	}
	syncWith := func(wait time.Duration) cmdResult {
		var out, errOut bytes.Buffer
		deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
			Getenv: func(string) string { return "" }}
		c := newSyncCmd(deps, func(o *syncOptions) error {
			o.Env, o.StateDir, o.Wait = authEnv{ConfigDir: f.config}, f.stateDir, wait
			return runSync(o)
		})
		c.SilenceUsage, c.SilenceErrors = true, true
		c.SetArgs([]string{"--url", f.srv.URL, f.root})
		c.SetOut(&out)
		c.SetErr(&errOut)
		err := c.ExecuteContext(context.Background())
		return cmdResult{out.String(), errOut.String(), err}
	}
	r := syncWith(time.Millisecond)
	if !errors.Is(r.err, SilentError) {
		t.Fatalf("a sync ending with files pending: %v, want exit 1\n%s", r.err, r.stdout)
	}
	for _, p := range files {
		if !strings.Contains(r.stdout, "PENDING "+p+"\n") {
			t.Errorf("the pending file %s is not named:\n%s", p, r.stdout)
		}
	}

	f.srv.Restart()
	f.srv.Configure(func(o *r2rtest.Options) { o.IngestDelay = 0 })
	f.srv.ResetCounts()
	r = syncWith(50 * time.Millisecond)
	if r.err != nil || strings.Contains(r.stdout, "PENDING") || !strings.Contains(r.stdout, "3 uploaded") {
		t.Fatalf("the sync after the restart: %v\n%s", r.err, r.stdout)
	}
	if n := f.srv.Count("DELETE /v3/documents/{id}"); n != len(files) {
		t.Fatalf("%d dead documents deleted, want %d", n, len(files))
	}
}
