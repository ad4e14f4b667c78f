package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// target is an emulated R2R with one collection, and a project directory.
type target struct {
	srv   *r2rtest.Server
	api   *r2r.Client
	scope kbsync.Scope
	root  string
}

func newTarget(t *testing.T) *target {
	t.Helper()
	return newTargetWith(t, r2rtest.Options{})
}

// newTargetWith is newTarget with an emulator configured by opts.
func newTargetWith(t *testing.T, opts r2rtest.Options) *target {
	t.Helper()
	srv := r2rtest.NewServer(t, opts)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	coll, err := c.CreateCollection(ctx, "claude-code-demo", "test")
	if err != nil {
		t.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &target{srv: srv, api: c, root: root, scope: kbsync.Scope{CollectionID: coll.ID, UserID: me.ID, Project: "demo"}}
}

func (tg *target) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(tg.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUpload(t *testing.T) {
	tg := newTarget(t)
	tg.write(t, "docs/a.md", "# Ledger\n\nPayouts settle nightly.")
	tg.write(t, ".env", "TOKEN=x")
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join("docs", "a.md"), filepath.Join(tg.root, "link.md")); err != nil {
			t.Fatal(err)
		}
	}
	pending := NewPending()
	tests := []struct {
		name     string
		path     string
		metadata map[string]any
		exact    bool
		scopeErr error
		want     kbsync.Action // "" = an error
		check    func(error) bool
	}{
		{name: "new file", path: "docs/a.md", want: kbsync.Uploaded},
		{name: "same content sends nothing", path: "docs/a.md", want: kbsync.Unchanged},
		{name: "secret by name", path: ".env", check: func(err error) bool {
			ce, ok := errors.AsType[*confine.Error](err)
			return ok && ce.Kind == confine.Secret
		}},
		{name: "reserved metadata", path: "docs/a.md", metadata: map[string]any{kbsync.MetaSourcePath: "x"}, check: func(err error) bool {
			_, ok := errors.AsType[*MetadataError](err)
			return ok
		}},
		{name: "secret in metadata", path: "docs/a.md", metadata: map[string]any{"note": "key \u0067hp_" + strings.Repeat("a1B2", 9)}, check: func(err error) bool {
			_, ok := errors.AsType[*MetadataError](err)
			return ok && !strings.Contains(err.Error(), "a1B2")
		}},
		{name: "no collection", path: "docs/a.md", scopeErr: errors.New("no collection"), check: func(err error) bool {
			_, ok := errors.AsType[*ScopeError](err)
			return ok && err.Error() == "no collection"
		}},
		{name: "symlink with Exact", path: "link.md", exact: true, check: func(err error) bool {
			ce, ok := errors.AsType[*confine.Error](err)
			return runtime.GOOS == "windows" || (ok && ce.Kind == "symlink")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scopeCalled := false
			r, err := Upload(context.Background(), filepath.FromSlash(tt.path), Options{API: tg.api, Roots: []string{tg.root},
				Metadata: tt.metadata, Exact: tt.exact, Async: true, Pending: pending, Poll: 1,
				Scope: func(context.Context) (kbsync.Scope, error) { scopeCalled = true; return tg.scope, tt.scopeErr }})
			if tt.want == "" {
				if err == nil || !tt.check(err) {
					t.Fatalf("err = %v (%T)", err, err)
				}
				if scopeCalled && tt.scopeErr == nil {
					t.Fatal("the collection was resolved for a file that was refused")
				}
				return
			}
			if err != nil || r.Action != tt.want || r.Path != tt.path || r.DocumentID == "" {
				t.Fatalf("result %+v, %v", r, err)
			}
			if pending.Busy(tg.scope.CollectionID, time.Now()) {
				t.Fatal("an upload R2R finished with still marks its collection busy")
			}
		})
	}
}

// TestSyncWritesWithUpload: the sync engine reads the files it writes under the upload
// rules (ProjectFiles, which holds the memory budget as Upload does), so a sync writes the
// files a plan listed under the same rules as r2r_ingest_document.
func TestSyncWritesWithUpload(t *testing.T) {
	tg := newTarget(t)
	tg.write(t, "docs/a.md", "# Ledger\n\nPayouts settle nightly.")
	tg.write(t, "docs/b.md", "# Runbook\n\nRestart the worker.")
	s, _, _, err := NewSyncer(SyncConfig{API: tg.api, Scope: tg.scope, Root: tg.root, StateDir: t.TempDir(), Poll: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Opts.Files.(kbsync.Reserver); !ok {
		t.Fatal("the syncer reads files outside the upload rules")
	}
	ctx := context.Background()
	plan, err := s.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A file that turns into a secret after the plan is refused when it is written.
	tg.write(t, "docs/b.md", "token: ghp_"+strings.Repeat("a1B2", 9))
	sum := s.Run(ctx, plan, nil)
	if len(sum.Uploaded) != 1 || sum.Uploaded[0] != "docs/a.md" || len(sum.Refused) != 1 || sum.Refused[0].Kind != confine.Secret {
		t.Fatalf("summary %+v", sum)
	}
}
