package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// r2r-mcp analytics names the search that found nothing with how often it was asked, in
// the period only, from the file serve keeps for the project.
func TestAnalyticsCommandNamesGaps(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "demo-app")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	pr, err := newProjectResolver(proj).Project(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	now := time.Now().UTC()
	rec := analytics.NewRecorder(&analytics.FileStore{Dir: dir}, nil)
	for _, e := range []analytics.Event{
		{Time: now.Add(-time.Hour), Kind: analytics.KindSearch, Query: "How is the quokka migrated?", Hits: 0},
		{Time: now.Add(-2 * time.Hour), Kind: analytics.KindSearch, Query: "how is the QUOKKA migrated", Hits: 0},
		{Time: now.Add(-3 * time.Hour), Kind: analytics.KindRAG, Query: "how is the quokka migrated", Hits: 0},
		{Time: now.Add(-time.Hour), Kind: analytics.KindSearch, Query: "ledger", Hits: 3, Cached: true,
			Docs: []analytics.Doc{{ID: "0d6c0d8e-0000-4000-8000-000000000001", Title: "docs/ledger.md"}}},
		{Time: now.Add(-20 * 24 * time.Hour), Kind: analytics.KindSearch, Query: "ancient question", Hits: 0},
	} {
		rec.Record(pr.Root, e)
	}
	rec.Close(context.Background())

	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--offline"}, []string{`3× "how is the quokka migrated" — found nothing`, "3 searches, 1 RAG questions", "cache hit rate 25%",
			"1× docs/ledger.md"}, []string{"ancient"}},
		{[]string{"--offline", "--since", "30d"}, []string{`1× "ancient question"`}, nil},
		{[]string{"--offline", "--json"}, []string{`"query": "how is the quokka migrated"`, `"asked": 3`}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			c := newAnalyticsCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}},
				func(o *analyticsOptions) error { o.Dir = dir; return runAnalytics(o) })
			c.SetArgs(tt.args)
			c.SetOut(&out)
			c.SetErr(&errOut)
			if err := c.Execute(); err != nil {
				t.Fatalf("%v: %s", err, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
		})
	}
}

// The flags are checked before anything is read.
func TestAnalyticsCommandFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "week"}, "--since"},
		{[]string{"--top", "0"}, "--top"},
		{[]string{"--redis-url", "redis://127.0.0.1:1/0"}, "--collection"},
	} {
		c := newAnalyticsCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}},
			func(*analyticsOptions) error { t.Fatal("ran with bad flags"); return nil })
		c.SetArgs(tt.args)
		c.SetOut(&bytes.Buffer{})
		c.SetErr(&bytes.Buffer{})
		if err := c.Execute(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v", tt.args, err)
		}
	}
}

// --no-analytics and its environment twin turn analytics off; without them serve keeps
// them in the user cache directory.
func TestServeNoAnalytics(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		off  bool
	}{
		{"default", nil, nil, false},
		{"flag", []string{"--no-analytics"}, nil, true},
		{"flag false", []string{"--no-analytics=false"}, map[string]string{"R2R_MCP_NO_ANALYTICS": "true"}, false},
		{"env", nil, map[string]string{"R2R_MCP_NO_ANALYTICS": "1"}, true},
		{"env bad", nil, map[string]string{"R2R_MCP_NO_ANALYTICS": "maybe"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			var got *bool
			deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
				Getenv: func(k string) string { return env[k] }}
			c := newServeCmd(deps, func(_ context.Context, cfg server.Config) error {
				off := cfg.Options.NoAnalytics
				got = &off
				return nil
			})
			c.SetArgs(append([]string{"--project-dir", t.TempDir()}, tt.args...))
			c.SetOut(&bytes.Buffer{})
			c.SetErr(&bytes.Buffer{})
			err := c.Execute()
			if tt.name == "env bad" {
				if err == nil || !strings.Contains(err.Error(), "R2R_MCP_NO_ANALYTICS") {
					t.Fatalf("bad value accepted: %v", err)
				}
				return
			}
			if err != nil || got == nil || *got != tt.off {
				t.Fatalf("err %v, off %v, want %v", err, got, tt.off)
			}
		})
	}
}
