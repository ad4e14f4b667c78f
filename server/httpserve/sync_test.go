package httpserve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// syncDocs is an --allow-dir root holding notes/ with two files whose text contains word.
func syncDocs(t *testing.T, word string) (root, notes string) {
	t.Helper()
	root = t.TempDir()
	notes = filepath.Join(root, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.md": "# Runbook A\n\nThe " + word + " rotates the ledger keys.\n",
		"b.md": "# Runbook B\n\nThe " + word + " audits the payouts.\n"} {
		if err := os.WriteFile(filepath.Join(notes, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// r2r_sync keeps its lock and hash cache in the user cache directory.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return root, notes
}

// statusOf calls r2r_sync_status for job through url with key.
func syncStatus(t *testing.T, url, key, job string, wait int) (int, map[string]any, string) {
	t.Helper()
	status, out, _ := invoke(t, url, key, "r2r_sync_status", map[string]any{"job_id": job, "wait_seconds": wait})
	st, _ := out.Structured.(map[string]any)
	return status, st, out.Text
}

// Over HTTP, r2r_sync syncs a directory inside an --allow-dir root on the server host; its
// job's state is shared through Redis, so another replica reports it, to its owner only.
func TestSyncOverHTTPSharedThroughRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	tm := newTeam(t)
	root, notes := syncDocs(t, "wombat")
	adjust := func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{root} }
	repA, repB := newRedisReplica(t, tm, "redis://"+mr.Addr(), adjust), newRedisReplica(t, tm, "redis://"+mr.Addr(), adjust)

	status, out, _ := invoke(t, repA.URL, tm.Alice.Key, "r2r_sync", map[string]any{"directory": notes, "collection_id": tm.Alice.Collection})
	st, _ := out.Structured.(map[string]any)
	if status != http.StatusOK || st["state"] != "running" || st["plan"].(map[string]any)["upload"] != 2.0 {
		t.Fatalf("r2r_sync through A: %d %s %v", status, out.Text, st)
	}
	job := st["job_id"].(string)
	if _, st, text := syncStatus(t, repA.URL, tm.Alice.Key, job, 10); st["state"] != "done" {
		t.Fatalf("the job on A: %s", text)
	}
	status, st, text := syncStatus(t, repB.URL, tm.Alice.Key, job, 0)
	if status != http.StatusOK || st["state"] != "done" || st["result"].(map[string]any)["uploaded"] != 2.0 {
		t.Fatalf("the job through B: %d %s", status, text)
	}
	if text, _ := callText(t, mcpClient(t, repB.URL, bearer(tm.Alice.Key)), "r2r_search",
		map[string]any{"query": "wombat ledger keys", "collection_id": tm.Alice.Collection}); !strings.Contains(text, "Runbook A") {
		t.Errorf("the synced file is not found through B: %s", text)
	}
	// Bob knows the job id but reaches Alice's job through neither replica.
	for _, url := range []string{repA.URL, repB.URL} {
		if status, st, text := syncStatus(t, url, tm.Bob.Key, job, 0); status == http.StatusOK || st != nil || strings.Contains(text, "done") {
			t.Errorf("bob read alice's job: %d %s", status, text)
		}
	}

	// Redis gone: a sync and its status on the same replica still work, from memory.
	mr.Close()
	if err := os.WriteFile(filepath.Join(notes, "a.md"), []byte("# Runbook A\n\nThe wombat rotates the vault keys.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	status, out, _ = invoke(t, repA.URL, tm.Alice.Key, "r2r_sync", map[string]any{"directory": notes, "collection_id": tm.Alice.Collection})
	st, _ = out.Structured.(map[string]any)
	if status != http.StatusOK || st["plan"].(map[string]any)["replace"] != 1.0 {
		t.Fatalf("r2r_sync without Redis: %d %s", status, out.Text)
	}
	if status, st, text := syncStatus(t, repA.URL, tm.Alice.Key, st["job_id"].(string), 10); status != http.StatusOK || st["state"] != "done" {
		t.Fatalf("the job without Redis: %d %s", status, text)
	}
}

// Over HTTP, r2r_sync refuses a directory that is not absolute or not inside an
// --allow-dir root, and needs a collection.
func TestSyncOverHTTPRefusals(t *testing.T) {
	tm := newTeam(t)
	root, notes := syncDocs(t, "numbat")
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{notes} })
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no directory", map[string]any{"collection_id": tm.Alice.Collection}, "path_outside_project"},
		{"relative", map[string]any{"directory": "notes", "collection_id": tm.Alice.Collection}, "path_outside_project"},
		{"outside", map[string]any{"directory": root, "collection_id": tm.Alice.Collection}, "path_outside_project"},
		{"missing", map[string]any{"directory": filepath.Join(notes, "gone"), "collection_id": tm.Alice.Collection}, "file_not_found"},
		{"a file", map[string]any{"directory": filepath.Join(notes, "a.md"), "collection_id": tm.Alice.Collection}, "file_not_found"},
		{"no collection", map[string]any{"directory": notes}, "collection_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_sync", tc.args)
			if status == http.StatusOK || out.Error == nil || !strings.Contains(out.Error.Type+" "+out.Text, tc.want) {
				t.Errorf("%d %+v %s", status, out.Error, out.Text)
			}
		})
	}
	if n := tm.Emu.Count("POST /v3/documents"); n != 0 {
		t.Errorf("%d documents written", n)
	}
}
