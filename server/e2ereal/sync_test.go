package e2ereal_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestRealSyncFlow keeps a project in step with the real R2R: `r2r-mcp sync` uploads the
// files (source code and YAML as text), a second sync sends nothing, sync --prune after
// edits and a deletion replaces and deletes exactly those; through the MCP tools an edited
// file is replaced on ingest, r2r_delete_document removes a document and refuses one
// outside the project, and r2r_sync runs as a background job.
func TestRealSyncFlow(t *testing.T) {
	r := liveR2R(t)
	proj := servertest.GitProject(t, "sync-"+unique(t), map[string]string{
		"docs/a.md":       "# Alpha\n\nThe walrus keeps the alpha ledger.\n",
		"docs/b.md":       "# Beta\n\nThe beta runbook restarts the settlement worker.\n",
		"docs/c.md":       "# Gamma\n\nThe gamma notes list the escalation contacts.\n",
		"cmd/main.go":     "package main\n\n// The heron service starts here.\nfunc main() {}\n",
		"deploy/app.yaml": "service: kingfisher\nreplicas: 3\n",
		".env":            "TOKEN=do-not-upload\n",
	})
	env := servertest.Env(t, r.URL, "R2R_EMAIL="+r.Email, "R2R_PASSWORD="+r.Password,
		"XDG_CACHE_HOME="+t.TempDir(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	type summary struct {
		Uploaded, Replaced, Deleted []string
		Unchanged                   int
		Refused, Failed             []map[string]string
	}
	sync := func(args ...string) summary {
		t.Helper()
		res := servertest.Run(t, proj, env, "", append([]string{"sync", "--json"}, args...)...)
		var s summary
		if err := json.Unmarshal([]byte(res.Stdout), &s); err != nil || res.Code != 0 {
			t.Fatalf("sync %v exited %d (%v):\n%s%s", args, res.Code, err, res.Stdout, res.Stderr)
		}
		return s
	}
	if s := sync(); len(s.Uploaded) != 5 || len(s.Refused) != 1 || s.Refused[0]["path"] != ".env" {
		t.Fatalf("first sync: %+v", s)
	}
	if s := sync(); s.Unchanged != 5 || len(s.Uploaded)+len(s.Replaced)+len(s.Deleted) != 0 {
		t.Fatalf("second sync: %+v", s)
	}
	write := func(rel, content string) {
		if err := os.WriteFile(filepath.Join(proj, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "# Alpha\n\nThe narwhal keeps the alpha ledger.\n")
	if err := os.Remove(filepath.Join(proj, "docs", "c.md")); err != nil {
		t.Fatal(err)
	}
	if s := sync("--prune"); len(s.Replaced) != 1 || len(s.Deleted) != 1 || s.Unchanged != 3 || len(s.Uploaded) != 0 {
		t.Fatalf("prune sync: %+v", s)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, t, proj, env)
	defer s.Close()
	call := func(name string, args map[string]any) servertest.ToolResult {
		t.Helper()
		res, err := s.Call(ctx, name, args)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, s.Stderr())
		}
		return res
	}
	found := call("r2r_search", map[string]any{"query": "who keeps the alpha ledger", "limit": 10})
	if !strings.Contains(found.Text, "narwhal") || strings.Contains(found.Text, "walrus") {
		t.Fatalf("search after the replacement:\n%s", found.Text)
	}
	for _, q := range []string{"heron service starts", "kingfisher replicas"} {
		if res := call("r2r_search", map[string]any{"query": q, "limit": 3}); !strings.Contains(res.Text, "cmd/main.go") && !strings.Contains(res.Text, "deploy/app.yaml") {
			t.Fatalf("search %q:\n%s", q, res.Text)
		}
	}

	write("docs/b.md", "# Beta\n\nThe beta runbook drains the payout queue first.\n")
	ing := call("r2r_ingest_document", map[string]any{"file_path": "docs/b.md"})
	replaced, _ := ing.Structured["replaced_document_ids"].([]any)
	if ing.IsError || ing.Structured["status"] != "success" || len(replaced) != 1 {
		t.Fatalf("ingest of the edited file: %s", ing.JSON())
	}

	anon, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := anon.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	admin := anon.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	other, err := admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: "a note outside the project " + unique(t),
		Metadata: map[string]any{"title": "outside"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.DeleteDocument(context.Background(), other.DocumentID) })
	if res := call("r2r_delete_document", map[string]any{"document_id": other.DocumentID}); !res.IsError {
		t.Fatalf("a document outside the project was deleted: %s", res.Text)
	}
	del := call("r2r_delete_document", map[string]any{"document_id": ing.Structured["document_id"]})
	if del.IsError || del.Structured["deleted"] != true {
		t.Fatalf("delete: %s", del.JSON())
	}

	started := call("r2r_sync", map[string]any{"prune": true})
	job, _ := started.Structured["job_id"].(string)
	if started.IsError || job == "" {
		t.Fatalf("r2r_sync: %s", started.JSON())
	}
	var st servertest.ToolResult
	for deadline := time.Now().Add(time.Minute); ; {
		st = call("r2r_sync_status", map[string]any{"job_id": job, "wait_seconds": 5})
		if st.Structured["state"] != "running" || time.Now().After(deadline) {
			break
		}
	}
	res, _ := st.Structured["result"].(map[string]any)
	if st.Structured["state"] != "done" || res["uploaded"] != 1.0 {
		t.Fatalf("sync job: %s", st.JSON())
	}
}
