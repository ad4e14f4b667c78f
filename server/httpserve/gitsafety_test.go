package httpserve_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync/gittest"
)

// TestGitNeverFetchesOverHTTP: over serve --http, any user calling r2r_sync (dry run or
// real) on a partial clone inside an --allow-dir root, whose promisor remote is a command
// (allowed by the repository's protocol.ext.allow), never makes git fetch, so the command
// never runs on the server host; the sync is refused naming the partial clone. The memory
// tools, which run git only for a local project, run none here.
func TestGitNeverFetchesOverHTTP(t *testing.T) {
	tm := newTeam(t)
	root, _ := syncDocs(t, "quokka")
	p := gittest.NewPartialClone(t, filepath.Join(root, "clone"))
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{root} })
	c := mcpClient(t, rep.URL, bearer(tm.Bob.Key))
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"sync dry run", "r2r_sync", map[string]any{"directory": p.Dir, "collection_id": tm.Bob.Collection, "dry_run": true}},
		{"sync", "r2r_sync", map[string]any{"directory": p.Dir, "collection_id": tm.Bob.Collection}},
		{"remember", "r2r_remember", map[string]any{"kind": "note", "title": "Alpha heading", "body": "The alpha file keeps its heading.",
			"paths": []any{"a.md"}, "collection_id": tm.Bob.Collection}},
		{"recall", "r2r_recall", map[string]any{"collection_id": tm.Bob.Collection}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tool == "r2r_sync" {
				status, out, _ := invoke(t, rep.URL, tm.Bob.Key, tc.tool, tc.args)
				if status == http.StatusOK || out.Error == nil || out.Error.Type != "configuration" ||
					!strings.Contains(out.Text, "partial clone") || !strings.Contains(out.Text, "fetch --refetch") {
					t.Errorf("%d %+v %s", status, out.Error, out.Text)
				}
			} else if text, res := callText(t, c, tc.tool, tc.args); res.IsError {
				t.Errorf("%s: %s", tc.tool, text)
			}
			if p.Ran() {
				t.Fatal("git fetched from the promisor remote and ran its command on the server host")
			}
		})
	}
	if n := tm.Emu.Count("POST /v3/documents"); n != 1 {
		t.Errorf("%d documents written, want the memory's only", n)
	}
}
