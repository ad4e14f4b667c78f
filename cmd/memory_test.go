package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// memory runs `r2r-mcp memory <args>` on the fixture's project.
func (f *syncFixture) memory(args ...string) cmdResult {
	f.t.Helper()
	var out, errOut bytes.Buffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(string) string { return "" }}
	c := newMemoryCmd(deps, func(verb string, o *memoryOptions, a []string) error {
		o.Env = authEnv{ConfigDir: f.config}
		return runMemory(verb, o, a)
	})
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(append(args, "--url", f.srv.URL, "--dir", f.root))
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return cmdResult{out.String(), errOut.String(), err}
}

// remember saves a memory straight through the store, as r2r_remember would.
func (f *syncFixture) remember(d memory.Draft) string {
	f.t.Helper()
	ctx := context.Background()
	c, err := r2r.New(r2r.Options{BaseURL: f.srv.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	coll, err := c.GetCollectionByName(ctx, "claude-code-demo")
	if err != nil {
		f.t.Fatal(err)
	}
	n, err := memory.Normalise(d)
	if err != nil {
		f.t.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	st := &memory.Store{API: c, CollectionID: coll.ID}
	saved, err := st.Remember(ctx, n, memory.Stamp{UserID: me.ID, Time: time.Now()})
	if err != nil {
		f.t.Fatal(err)
	}
	return saved.ID
}

// TestSyncPruneLeavesMemories: a project whose files were all deleted is pruned of the
// files' documents and of no memory; the memory commands then list, show, export and
// forget it.
func TestSyncPruneLeavesMemories(t *testing.T) {
	f := newSyncFixture(t)
	for _, p := range []string{"a.md", "docs/b.md", "src/c.go"} {
		f.write(p, "content of "+p)
	}
	if s, r := f.sync(f.root); r.err != nil || len(s.Uploaded) != 3 {
		t.Fatalf("first sync: %+v %v", s, r.err)
	}
	id := f.remember(memory.Draft{Kind: "decision", Title: "Keep docs in Markdown", Body: "All docs are Markdown; no wiki.",
		Paths: []string{"a.md"}, Tags: []string{"docs"}})
	for _, p := range []string{"a.md", "docs/b.md", "src/c.go"} {
		if err := os.Remove(filepath.Join(f.root, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	s, r := f.sync(f.root, "--prune")
	if r.err != nil || len(s.Deleted) != 3 {
		t.Fatalf("prune sync: %+v %v", s, r.err)
	}
	if n := f.srv.Count("DELETE /v3/documents/{id}"); n != 3 {
		t.Fatalf("%d deletes, want the 3 files' documents", n)
	}

	list := f.memory("list")
	if list.err != nil || !strings.Contains(list.stdout, id) || !strings.Contains(list.stdout, "Keep docs in Markdown") {
		t.Fatalf("memory list after prune: %v\n%s%s", list.err, list.stdout, list.stderr)
	}
	show := f.memory("show", id)
	if show.err != nil || !strings.Contains(show.stdout, "## decision: Keep docs in Markdown") || !strings.Contains(show.stdout, "All docs are Markdown; no wiki.") {
		t.Fatalf("memory show: %v\n%s", show.err, show.stdout)
	}
	exp := f.memory("export", "--format", "jsonl")
	var rec memoryRecord
	if exp.err != nil || json.Unmarshal([]byte(strings.TrimSpace(exp.stdout)), &rec) != nil || rec.ID != id ||
		rec.Body != "All docs are Markdown; no wiki." || rec.Author != r2rtest.AdminEmail || rec.Paths[0] != "a.md" {
		t.Fatalf("export jsonl: %v %+v\n%s", exp.err, rec, exp.stdout)
	}
	if md := f.memory("export"); md.err != nil || !strings.HasPrefix(md.stdout, "## decision: Keep docs in Markdown\n") {
		t.Fatalf("export markdown: %v\n%s", md.err, md.stdout)
	}
	if bad := f.memory("show", "not-an-id"); bad.err == nil {
		t.Fatal("a malformed id was accepted")
	}
	if fg := f.memory("forget", id); fg.err != nil || !strings.Contains(fg.stdout, "Forgot decision") {
		t.Fatalf("forget: %v %s", fg.err, fg.stdout)
	}
	if list := f.memory("list"); list.err != nil || strings.TrimSpace(list.stdout) != "" {
		t.Fatalf("list after forget: %v %q", list.err, list.stdout)
	}
}
