package kbsync

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// fixture is an emulated R2R with one collection and a project directory.
type fixture struct {
	t      testing.TB
	r2r    *r2rtest.Server
	client *r2r.Client
	scope  Scope
	root   string
}

func newFixture(t testing.TB, opts r2rtest.Options) *fixture {
	t.Helper()
	srv := r2rtest.NewServer(t, opts)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	coll, err := c.CreateCollection(ctx, "claude-code-demo", "")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, r2r: srv, client: c, root: root,
		scope: Scope{CollectionID: coll.ID, UserID: me.ID, Project: "demo"}}
}

func (f *fixture) writer() *Writer {
	return &Writer{API: f.client, Scope: f.scope, Poll: 1}
}

func (f *fixture) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) remove(rel string) {
	f.t.Helper()
	if err := os.Remove(filepath.Join(f.root, filepath.FromSlash(rel))); err != nil {
		f.t.Fatal(err)
	}
}

// git runs git in the project directory.
func (f *fixture) git(args ...string) {
	f.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			f.t.Fatal("git is required under CI")
		}
		f.t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = f.root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		f.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (f *fixture) syncer(prune bool) *Syncer {
	return &Syncer{
		Opts:   Options{Root: f.root, Prune: prune, Files: testFiles{root: f.root}, Hashes: OpenHashCache("")},
		Writer: f.writer(),
	}
}

// hits returns the source paths of the full-text search hits for query.
func (f *fixture) hits(query string) []string {
	f.t.Helper()
	yes, no := true, false
	res, err := f.client.Search(context.Background(), r2r.SearchRequest{Query: query, SearchMode: "custom",
		SearchSettings: &r2r.SearchSettings{UseSemanticSearch: &no, UseFulltextSearch: &yes,
			Filters: map[string]any{"collection_ids": map[string]any{"$overlap": []string{f.scope.CollectionID}}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, h := range res.ChunkSearchResults {
		p, _ := h.Metadata[MetaSourcePath].(string)
		out = append(out, p)
	}
	return out
}

// testFiles is a FileReader with the shape of the ingest rules: names containing
// "secret" are refused, .md/.txt are sent as files, other text as text, binaries refused.
type testFiles struct{ root string }

func (r testFiles) ReadFile(rel string) (File, error) {
	if strings.Contains(rel, "secret") {
		return File{}, &Refusal{Kind: "secret_file", Reason: rel + " looks like a secret"}
	}
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		return File{}, err
	}
	ext := filepath.Ext(rel)
	asText := ext != ".md" && ext != ".txt"
	if asText && (!utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0) {
		return File{}, &Refusal{Kind: "unsupported_file_type", Reason: rel + " is binary"}
	}
	return File{Path: rel, Data: b, AsText: asText}, nil
}
