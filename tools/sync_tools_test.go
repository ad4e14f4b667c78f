package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

func withSyncState(t *testing.T) envOption {
	dir := t.TempDir()
	return withDeps(func(d *Deps) { d.SyncStateDir = dir })
}

// hitTexts runs r2r_search and returns the hits' texts.
func (e *env) hitTexts(query string) []string {
	e.t.Helper()
	var so SearchOutput
	structured(e.t, e.ok("r2r_search", map[string]any{"query": query}), &so)
	var out []string
	for _, r := range so.Results {
		out = append(out, r.Text)
	}
	return out
}

func anyContains(texts []string, s string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

func TestIngestEditedFileReplacesIt(t *testing.T) {
	e := newEnv(t)
	e.write("docs/a.md", "# Notes\n\nThe walrus guards the ledger.")
	var first, again, edited IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"}), &first)
	posts := e.r2r.Count("POST /v3/documents")
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"}), &again)
	if again.Status != "already_current" || e.r2r.Count("POST /v3/documents") != posts {
		t.Fatalf("unchanged: %+v", again)
	}
	e.write("docs/a.md", "# Notes\n\nThe narwhal guards the ledger.")
	res := e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"})
	structured(t, res, &edited)
	if edited.Status != "success" || len(edited.Replaced) != 1 || edited.Replaced[0] != first.DocumentID ||
		edited.DocumentID == first.DocumentID || !strings.Contains(text(res), "replaced the older version") {
		t.Fatalf("edited: %+v / %s", edited, text(res))
	}
	hits := e.hitTexts("who guards the ledger")
	if !anyContains(hits, "narwhal") || anyContains(hits, "walrus") {
		t.Fatalf("search after the edit: %q", hits)
	}
}

func TestIngestSourceFilesAsText(t *testing.T) {
	e := newEnv(t)
	e.write("cmd/main.go", "package main\n\n// The heron starts the service.\nfunc main() {}\n")
	e.write("deploy/app.yaml", "service: heron\nreplicas: 3\n")
	e.write("Makefile", "build:\n\tgo build ./...\n")
	e.write("assets/logo.ico", "\x00\x00\x01\x00")
	for _, p := range []string{"cmd/main.go", "deploy/app.yaml", "Makefile"} {
		var o IngestOutput
		structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": p}), &o)
		req := e.r2r.LastRequest("POST /v3/documents")
		if o.Status != "success" || o.SentAs != "text" || req.Form.Get("chunks") == "" || req.FileName != "" {
			t.Fatalf("%s: %+v", p, o)
		}
		doc, err := e.client.GetDocument(context.Background(), o.DocumentID)
		if err != nil || doc.Title == nil || *doc.Title != p {
			t.Fatalf("%s: title %v, %v", p, doc, err)
		}
	}
	if hits := e.hitTexts("heron service"); !anyContains(hits, "The heron starts") || !anyContains(hits, "service: heron") {
		t.Fatalf(".go and .yaml not found: %q", hits)
	}
	_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "assets/logo.ico"})
	if info.Type != confine.Type || !strings.Contains(info.Message, "binary") || !strings.Contains(info.Message, "Export") {
		t.Fatalf("binary: %+v", info)
	}
}

func TestDeleteDocument(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &ing)

	// A document of another collection is refused and left alone.
	ctx := context.Background()
	other, err := e.client.CreateCollection(ctx, "elsewhere", "")
	if err != nil {
		t.Fatal(err)
	}
	ir, err := e.client.CreateDocument(ctx, r2r.DocumentCreate{RawText: "foreign text", CollectionIDs: []string{other.ID},
		Metadata: map[string]any{"title": "foreign.md"}})
	if err != nil {
		t.Fatal(err)
	}
	_, info := e.fail("r2r_delete_document", map[string]any{"document_id": ir.DocumentID})
	if info.Type != refuseOutsideScope || !strings.Contains(info.Message, "foreign.md") {
		t.Fatalf("outside: %+v", info)
	}
	if e.r2r.Count("DELETE /v3/documents/{id}") != 0 {
		t.Fatal("a document outside the project was deleted")
	}

	// The short id a listing showed names the document too.
	e.ok("r2r_list_documents", map[string]any{})
	res := e.ok("r2r_delete_document", map[string]any{"document_id": ing.DocumentID[:8]})
	var del DeleteOutput
	structured(t, res, &del)
	if !del.Deleted || del.Title != "a.md" || del.SourcePath != "a.md" || !strings.Contains(text(res), ing.DocumentID) {
		t.Fatalf("delete: %+v", del)
	}
	if _, err := e.client.GetDocument(ctx, ing.DocumentID); err == nil {
		t.Fatal("the document is still there")
	}
	_, info = e.fail("r2r_delete_document", map[string]any{"document_id": ing.DocumentID})
	if info.Type != "not_found" {
		t.Fatalf("second delete: %+v", info)
	}
}

func TestSyncToolRunsInBackground(t *testing.T) {
	e := newEnv(t, withSyncState(t), withEmulator(r2rtest.Options{IngestDelay: time.Hour}))
	for i := range 12 {
		e.write(fmt.Sprintf("docs/%02d.md", i), fmt.Sprintf("# Doc %d\n\nText %d.", i, i))
	}
	e.write(".env", "TOKEN=x")
	var o SyncOutput
	structured(t, e.ok("r2r_sync", map[string]any{}), &o)
	if o.JobID == "" || o.State != "running" || o.Plan.Upload != 12 || o.Plan.Refused != 1 || o.Refused[0].Path != ".env" {
		t.Fatalf("sync: %+v", o)
	}
	// A second sync while the first runs is refused with the running job's id.
	_, info := e.fail("r2r_sync", map[string]any{})
	if info.Type != "sync_running" || !strings.Contains(info.Message, o.JobID) {
		t.Fatalf("second sync: %+v", info)
	}
	var st SyncStatusOutput
	structured(t, e.ok("r2r_sync_status", map[string]any{}), &st)
	if st.JobID != o.JobID || st.State != jobRunning || st.Total != 12 {
		t.Fatalf("status: %+v", st)
	}
	for {
		e.r2r.StepIngestion()
		structured(t, e.ok("r2r_sync_status", map[string]any{"job_id": o.JobID}), &st)
		if st.State != jobRunning {
			break
		}
	}
	if st.State != jobDone || st.Result == nil || st.Result.Uploaded != 12 || st.Progress != 1 {
		t.Fatalf("finished: %+v", st)
	}
	if n := e.r2r.Count("POST /v3/documents"); n != 12 {
		t.Fatalf("%d uploads", n)
	}

	// Again: nothing to do.
	structured(t, e.ok("r2r_sync", map[string]any{"dry_run": true}), &o)
	if o.State != "planned" || o.Plan.Unchanged != 12 || o.Plan.Upload != 0 {
		t.Fatalf("dry run: %+v", o)
	}
}

func TestSyncToolRefusedWhileAnotherProcessSyncs(t *testing.T) {
	e := newEnv(t, withSyncState(t))
	e.write("a.md", "a")
	unlock, err := kbsync.Lock(e.deps.SyncStateDir, kbsync.Key(e.project, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, info := e.fail("r2r_sync", map[string]any{})
	if info.Type != "sync_running" || !strings.Contains(info.Message, "another r2r-mcp process") {
		t.Fatalf("%+v", info)
	}
	if e.r2r.Count("POST /v3/documents") != 0 {
		t.Fatal("uploaded while locked")
	}
}

// TestSyncStatusWaitSendsProgress: r2r_sync_status with wait_seconds and a progress token
// sends progress notifications until the job is done.
func TestSyncStatusWaitSendsProgress(t *testing.T) {
	e := newEnv(t, withSyncState(t), withEmulator(r2rtest.Options{IngestDelay: time.Hour}))
	for i := range 6 {
		e.write(fmt.Sprintf("%d.md", i), fmt.Sprintf("note %d", i))
	}
	c := e.mcpClient()
	progress := watchProgress(c)
	ctx := context.Background()
	req := mcp.CallToolRequest{}
	req.Params.Name = "r2r_sync"
	req.Params.Arguments = map[string]any{}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	stop := make(chan struct{})
	go func() { // R2R walks each ingestion through its states as soon as it starts
		for {
			started := e.r2r.IngestionStarted()
			if e.r2r.StepIngestion() > 0 {
				continue
			}
			select {
			case <-stop:
				return
			case <-started:
			}
		}
	}()
	defer close(stop)
	req.Params.Name = "r2r_sync_status"
	req.Params.Arguments = map[string]any{"wait_seconds": 10}
	req.Params.Meta = &mcp.Meta{ProgressToken: "sync-1"}
	var st SyncStatusOutput
	for st.State == "" || st.State == jobRunning {
		res, err = c.CallTool(ctx, req)
		if err != nil || res.IsError {
			t.Fatalf("%v %s", err, text(res))
		}
		structured(t, res, &st)
	}
	if st.State != jobDone || st.Result.Uploaded != 6 {
		t.Fatalf("status %+v", st)
	}
	got := progress.complete()
	if len(got) < 2 || got[len(got)-1] != 1 {
		t.Fatalf("progress notifications = %v", got)
	}
}

// hostileGit makes dir a git repository whose config names a command (writing a marker
// into the returned directory) for core.fsmonitor, hooks, the pager and ssh. It skips
// without git (fails under CI).
func hostileGit(t *testing.T, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required under CI")
		}
		t.Skip("git is not installed")
	}
	markers := t.TempDir()
	script := filepath.Join(markers, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+filepath.Join(markers, "ran")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(markers, "hooks")
	mustMkdir(t, hooks)
	if err := os.Symlink(script, filepath.Join(hooks, "post-index-change")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", script}, {"config", "core.hooksPath", hooks},
		{"config", "pager.ls-files", script}, {"config", "core.sshCommand", script}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return markers
}

// TestSyncToolRunsNoGitCommand: r2r_sync of a repository whose config names commands
// lists its files (ignored ones left out) and runs none of them, dry run or not.
func TestSyncToolRunsNoGitCommand(t *testing.T) {
	e := newEnv(t, withSyncState(t))
	markers := hostileGit(t, e.project)
	e.write(".gitignore", "*.log\n")
	e.write("a.md", "# A\n\nalpha")
	e.write("b.log", "ignored")
	var o SyncOutput
	structured(t, e.ok("r2r_sync", map[string]any{"dry_run": true}), &o)
	if o.Plan.Files != 2 || o.Plan.Upload != 2 {
		t.Fatalf("dry run: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(markers, "ran")); err == nil {
		t.Fatal("a dry run ran a command the repository's config names")
	}
	structured(t, e.ok("r2r_sync", map[string]any{}), &o)
	var st SyncStatusOutput
	for st.State == "" || st.State == jobRunning {
		structured(t, e.ok("r2r_sync_status", map[string]any{"wait_seconds": 10}), &st)
	}
	if st.State != jobDone || st.Result == nil || st.Result.Uploaded != 2 {
		t.Fatalf("sync: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(markers, "ran")); err == nil {
		t.Fatal("git ran a command the repository's config names")
	}
}
