package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/chunking"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

const ledgerDoc = `# Ledger design

The ledger is the source of truth for every account balance. Entries are append-only and
double-entry: each transfer writes one debit and one credit in the same transaction.

## Payouts

Payouts are computed nightly from settled ledger entries and sent to the bank.
`

const runbookDoc = `Runbook: database failover

When the primary Postgres node is unhealthy, promote the replica with the failover script,
then point the ledger service at the new primary and watch replication lag.
`

// callMCP calls a tool through the in-process mcp-go client (input and output schema
// validation on) and returns the result.
func callMCP(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// TestToolsOverMCP drives every tool through a real mcp-go server and client, checks each
// structured result against its output schema, and checks what reached R2R.
func TestToolsOverMCP(t *testing.T) {
	e := newEnv(t)
	c := e.mcpClient()
	e.write("docs/ledger.md", ledgerDoc)
	e.write("runbooks/failover.txt", runbookDoc)

	listed, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Tools) != len(e.list) {
		t.Fatalf("tools/list has %d tools", len(listed.Tools))
	}

	// Ingest: creates the project collection, uploads with a deterministic id.
	res := callMCP(t, c, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"})
	validateStructured(t, e.tools["r2r_ingest_document"], res)
	var ing IngestOutput
	structured(t, res, &ing)
	if ing.Status != "success" || !ing.CollectionNew || ing.RelativePath != "docs/ledger.md" || ing.FileName != "ledger.md" {
		t.Fatalf("ingest = %+v", ing)
	}
	if ing.DocumentID != kbsync.VersionID(ing.CollectionID, e.userID(), "docs/ledger.md", kbsync.SHA256([]byte(ledgerDoc))) {
		t.Fatalf("document id %s is not the deterministic id", ing.DocumentID)
	}
	if e.r2r.Count("POST /v3/collections") != 1 {
		t.Fatalf("collection created %d times", e.r2r.Count("POST /v3/collections"))
	}
	up := e.r2r.LastRequest("POST /v3/documents")
	var sent []string
	if err := json.Unmarshal([]byte(up.Form.Get("chunks")), &sent); err != nil || !slices.Equal(sent, chunking.Split("docs/ledger.md", ledgerDoc)) ||
		up.FileName != "" || up.Form.Get("id") != ing.DocumentID || up.Form.Get("ingestion_mode") != "fast" {
		t.Fatalf("upload = chunks %q (%v) id %q mode %q", sent, err, up.Form.Get("id"), up.Form.Get("ingestion_mode"))
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(up.Form.Get("metadata")), &md); err != nil {
		t.Fatal(err)
	}
	if md["title"] != "docs/ledger.md" || md["source_path"] != "docs/ledger.md" || md["project"] != "demo-app" || md["ingested_by"] != "r2r-mcp" ||
		md["source"] != "r2r-mcp" || md["content_sha256"] != kbsync.SHA256([]byte(ledgerDoc)) || ing.ContentSHA != md["content_sha256"] {
		t.Fatalf("metadata = %v", md)
	}
	if got := up.Form.Get("collection_ids"); got != `["`+ing.CollectionID+`"]` {
		t.Fatalf("collection_ids = %s", got)
	}
	res = callMCP(t, c, "r2r_ingest_document", map[string]any{"file_path": filepath.Join(e.project, "runbooks", "failover.txt"), "run_async": false})
	validateStructured(t, e.tools["r2r_ingest_document"], res)

	// Second ingest of the same content: already current, nothing sent.
	res = callMCP(t, c, "r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md"})
	validateStructured(t, e.tools["r2r_ingest_document"], res)
	var again IngestOutput
	structured(t, res, &again)
	if again.Status != "already_current" || again.DocumentID != ing.DocumentID || !strings.Contains(text(res), "nothing was sent") {
		t.Fatalf("second ingest = %+v / %s", again, text(res))
	}

	// Search.
	res = callMCP(t, c, "r2r_search", map[string]any{"query": "ledger double-entry balance"})
	validateStructured(t, e.tools["r2r_search"], res)
	var so SearchOutput
	structured(t, res, &so)
	if so.Count == 0 || so.Results[0].DocumentID != ing.DocumentID || so.Results[0].Title != "docs/ledger.md" || so.Cached {
		t.Fatalf("search = %+v", so)
	}
	if h := so.Results[0]; strings.HasPrefix(h.Text, "Document Title:") || !strings.Contains(h.Text, "ledger") ||
		h.Relevance != 1 {
		t.Fatalf("hit = %+v", h)
	}
	lines := strings.Split(text(res), "\n")
	if first := lines[1]; !strings.HasPrefix(first, "1. docs/ledger.md") || !strings.HasSuffix(first, "(doc "+shortID(ing.DocumentID)+", relevance 1.00)") ||
		lines[2] != "   "+so.Results[0].Text || strings.Contains(lines[2], "Document Title:") {
		t.Fatalf("first hit = %q", lines[1:3])
	}

	// RAG.
	res = callMCP(t, c, "r2r_rag_query", map[string]any{"question": "How are payouts computed?"})
	validateStructured(t, e.tools["r2r_rag_query"], res)
	var ro RAGOutput
	structured(t, res, &ro)
	if ro.Answer == "" || len(ro.Sources) == 0 || !ro.Sources[0].Cited || ro.ModelUsed != r2rtest.DefaultRAGModel {
		t.Fatalf("rag = %+v", ro)
	}
	if !strings.Contains(ro.Answer, "["+ro.Sources[0].ID+"]") || !strings.Contains(text(res), "Sources:\n["+ro.Sources[0].ID+"] ") {
		t.Fatalf("citations not shown: %s", text(res))
	}
	rag := e.r2r.LastRequest("POST /v3/retrieval/rag")
	var ragBody map[string]any
	if err := json.Unmarshal(rag.Body, &ragBody); err != nil {
		t.Fatal(err)
	}
	gen := ragBody["rag_generation_config"].(map[string]any)
	if _, ok := gen["model"]; ok {
		t.Fatalf("a model was imposed: %v", gen)
	}
	if gen["max_tokens_to_sample"] != 500.0 || gen["temperature"] != 0.7 {
		t.Fatalf("generation config = %v", gen)
	}

	// Listing, monitoring, reading.
	res = callMCP(t, c, "r2r_list_documents", map[string]any{})
	validateStructured(t, e.tools["r2r_list_documents"], res)
	var lo ListDocumentsOutput
	structured(t, res, &lo)
	if lo.Total != 2 || len(lo.Documents) != 2 || lo.Limit != 50 {
		t.Fatalf("list = %+v", lo)
	}
	res = callMCP(t, c, "r2r_monitor_task", map[string]any{"document_id": ing.DocumentID})
	validateStructured(t, e.tools["r2r_monitor_task"], res)
	var mo MonitorOutput
	structured(t, res, &mo)
	if mo.IngestionStatus != "success" || mo.Progress != 1 || !mo.Done || mo.Title != "docs/ledger.md" {
		t.Fatalf("monitor = %+v", mo)
	}
	res = callMCP(t, c, "r2r_get_document", map[string]any{"document_id": ing.DocumentID})
	validateStructured(t, e.tools["r2r_get_document"], res)
	var gd GetDocumentOutput
	structured(t, res, &gd)
	if !strings.Contains(gd.Text, "Payouts are computed nightly") || gd.ChunkCount == 0 || gd.NextOffset != nil {
		t.Fatalf("get document = %+v", gd)
	}
	res = callMCP(t, c, "r2r_list_collections", map[string]any{})
	validateStructured(t, e.tools["r2r_list_collections"], res)
	var co ListCollectionsOutput
	structured(t, res, &co)
	marked := 0
	for _, cs := range co.Collections {
		if cs.CurrentProject {
			marked++
			if cs.CollectionID != ing.CollectionID || cs.Name != "claude-code-demo-app" || cs.DocumentCount != 2 {
				t.Fatalf("project collection = %+v", cs)
			}
		}
	}
	if marked != 1 || !strings.Contains(text(res), "[current project]") {
		t.Fatalf("collections = %+v", co)
	}
	res = callMCP(t, c, "r2r_status", map[string]any{})
	validateStructured(t, e.tools["r2r_status"], res)
	var st StatusOutput
	structured(t, res, &st)
	if !st.Health.OK || st.Project.Name != "demo-app" || st.Project.CollectionID != ing.CollectionID || st.SearchHistoryCount != 1 ||
		st.R2RURL != e.r2r.URL || st.Breaker != "n/a" {
		t.Fatalf("status = %+v", st)
	}

	// Resources.
	rr, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: ProjectContextURI}})
	if err != nil {
		t.Fatal(err)
	}
	var pc ProjectContext
	if err := json.Unmarshal([]byte(rr.Contents[0].(mcp.TextResourceContents).Text), &pc); err != nil {
		t.Fatal(err)
	}
	if pc.ProjectName != "demo-app" || pc.DocumentCount != 2 || pc.IngestionStatus["success"] != 2 || pc.CollectionID == nil || pc.LastUpdated == nil {
		t.Fatalf("project context = %+v", pc)
	}
	rr, err = c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: SearchHistoryURI}})
	if err != nil {
		t.Fatal(err)
	}
	var hist SearchHistoryContent
	if err := json.Unmarshal([]byte(rr.Contents[0].(mcp.TextResourceContents).Text), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist.Searches) != 1 || hist.Searches[0].Query != "ledger double-entry balance" || hist.Searches[0].Hits != so.Count {
		t.Fatalf("history = %+v", hist)
	}
	rr, err = c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "r2r://documents/" + ing.DocumentID}})
	if err != nil {
		t.Fatal(err)
	}
	direct := e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID})
	if got := rr.Contents[0].(mcp.TextResourceContents).Text; got != text(direct) {
		t.Fatalf("document resource differs from r2r_get_document:\n%s\n---\n%s", got, text(direct))
	}
	if _, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "r2r://documents/not-a-uuid"}}); err == nil {
		t.Fatal("reading a malformed document URI succeeded")
	}

	// Strict input schema at the server: unknown arguments and wrong types never reach the handler.
	before := e.r2r.Count("POST /v3/retrieval/search")
	for _, args := range []map[string]any{{"query": "x", "top_k": 3}, {"query": "x", "limit": 3.7}, {"query": "x", "limit": 0}} {
		res := callMCP(t, c, "r2r_search", args)
		if !res.IsError {
			t.Fatalf("%v accepted", args)
		}
	}
	if e.r2r.Count("POST /v3/retrieval/search") != before {
		t.Fatal("an invalid call reached R2R")
	}
}

func TestSearchSendsModesAsExplicitSettings(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	ing := e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	var io IngestOutput
	structured(t, ing, &io)
	scope := map[string]any{"collection_ids": map[string]any{"$overlap": []any{io.CollectionID}}}
	tr, fa := true, false
	tests := []struct {
		mode                       string
		semantic, fulltext, hybrid *bool
	}{
		{"basic", &tr, &fa, &fa},
		{"advanced", &tr, &tr, &tr},
		{"custom", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			e.ok("r2r_search", map[string]any{"query": "ledger", "search_mode": tt.mode, "limit": 7.0,
				"filters": map[string]any{"document_type": map[string]any{"$neq": "pdf"}}})
			var body struct {
				Query      string         `json:"query"`
				SearchMode string         `json:"search_mode"`
				Settings   map[string]any `json:"search_settings"`
			}
			if err := lastJSON(e, "POST /v3/retrieval/search", &body); err != nil {
				t.Fatal(err)
			}
			if body.SearchMode != "custom" || body.Query != "ledger" || body.Settings["limit"] != float64(fetchLimit(7)) {
				t.Fatalf("body = %+v", body)
			}
			for k, want := range map[string]*bool{"use_semantic_search": tt.semantic, "use_fulltext_search": tt.fulltext, "use_hybrid_search": tt.hybrid} {
				got, present := body.Settings[k]
				if want == nil && present || want != nil && got != *want {
					t.Errorf("%s = %v (present %v), want %v", k, got, present, want)
				}
			}
			wantFilters := map[string]any{"$and": []any{scope, map[string]any{"document_type": map[string]any{"$ne": "pdf"}}}}
			if fmt.Sprint(body.Settings["filters"]) != fmt.Sprint(wantFilters) {
				t.Fatalf("filters = %v, want %v", body.Settings["filters"], wantFilters)
			}
		})
	}
}

func TestSearchValidationSendsNothing(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown operator", map[string]any{"query": "x", "filters": map[string]any{"title": map[string]any{"$regex": "x"}}},
			"unknown operator $regex at filters.title; allowed operators: $eq $ne $lt $lte $gt $gte $like $ilike $in $nin $overlap $contains $json_contains $and $or"},
		{"or needs list", map[string]any{"query": "x", "filters": map[string]any{"$or": map[string]any{}}}, "needs a list"},
		{"query too long", map[string]any{"query": strings.Repeat("q", 4001)}, `argument "query" must be at most 4000 characters long, got 4001`},
		{"missing query", map[string]any{}, `missing required argument "query"`},
		{"fractional limit", map[string]any{"query": "x", "limit": 3.7}, `argument "limit" must be integer, got number`},
		{"limit out of range", map[string]any{"query": "x", "limit": 101.0}, `argument "limit" must be at most 100, got 101`},
		{"unknown argument", map[string]any{"query": "x", "top_k": 5.0}, `unknown argument "top_k". Valid arguments: query, collection_id, filters, limit, search_mode.`},
		{"bad mode", map[string]any{"query": "x", "search_mode": "hyde"}, `argument "search_mode" must be one of "basic", "advanced", "custom", got "hyde"`},
		{"bad collection id", map[string]any{"query": "x", "collection_id": "proj"}, "must be a UUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, info := e.fail("r2r_search", tt.args)
			if info.Code != toolerr.CodeInvalidParams || info.Type != "invalid_params" || !strings.Contains(info.Message, tt.want) {
				t.Fatalf("info = %+v, want message containing %q", info, tt.want)
			}
		})
	}
	if n := e.r2r.Count("POST /v3/retrieval/search"); n != 0 {
		t.Fatalf("%d searches reached R2R", n)
	}
}

func TestReadsBeforeTheCollectionExists(t *testing.T) {
	e := newEnv(t, withProjectName("fresh"))
	note := "No collection claude-code-fresh yet — ingest a file with r2r_ingest_document to create it."
	for name, args := range map[string]map[string]any{
		"r2r_search":         {"query": "anything"},
		"r2r_rag_query":      {"question": "anything?"},
		"r2r_list_documents": {},
	} {
		res := e.ok(name, args)
		validateStructured(t, e.tools[name], res)
		if text(res) != note {
			t.Errorf("%s text = %q", name, text(res))
		}
	}
	res := e.ok("r2r_list_collections", nil)
	if !strings.Contains(text(res), "claude-code-fresh does not exist yet") {
		t.Fatalf("list collections = %s", text(res))
	}
	for _, route := range []string{"POST /v3/retrieval/search", "POST /v3/retrieval/rag", "POST /v3/collections"} {
		if n := e.r2r.Count(route); n != 0 {
			t.Errorf("%s called %d times", route, n)
		}
	}
}

func TestProjectConfigFileOverridesCollection(t *testing.T) {
	e := newEnv(t)
	e.write(project.ConfigFile, `{"collection": "team-docs"}`)
	e.write("a.md", ledgerDoc)
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &io)
	coll, err := e.client.GetCollection(context.Background(), io.CollectionID)
	if err != nil || coll.Name != "team-docs" {
		t.Fatalf("collection = %+v, %v", coll, err)
	}
	// A configured id that does not exist is a configuration error, not a silent creation.
	e.write(project.ConfigFile, `{"collection": "00000000-0000-4000-8000-000000000001"}`)
	_, info := e.fail("r2r_search", map[string]any{"query": "ledger"})
	if info.Type != "configuration" || !strings.Contains(info.Message, ".r2r-mcp.json") {
		t.Fatalf("info = %+v", info)
	}
	e.write(project.ConfigFile, `{"collection": `)
	_, info = e.fail("r2r_list_documents", nil)
	if !strings.Contains(info.Message, "not valid JSON") {
		t.Fatalf("info = %+v", info)
	}
}

func TestProjectMappingCachedOnDiskAndRevalidated(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &io)
	cacheFile := e.deps.Projects.CacheFile()
	fi, err := os.Stat(cacheFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("projects.json mode %v", fi.Mode().Perm())
	}
	b, _ := os.ReadFile(cacheFile)
	if !strings.Contains(string(b), io.CollectionID) || !strings.Contains(string(b), e.r2r.URL) {
		t.Fatalf("projects.json = %s", b)
	}

	// A new process (new resolver) uses the disk entry after one check, without a name lookup.
	fresh := project.NewResolver(project.Options{WorkDir: e.project, CacheFile: cacheFile})
	e.r2r.ResetCounts()
	pc, err := fresh.Collection(context.Background(), e.client, false)
	if err != nil || pc.ID != io.CollectionID {
		t.Fatalf("resolved %+v, %v", pc, err)
	}
	if e.r2r.Count("GET /v3/collections/name/{name}") != 0 || e.r2r.Count("GET /v3/collections/{id}") != 1 {
		t.Fatalf("counts = %v", e.r2r.Counts())
	}
	if _, err := fresh.Collection(context.Background(), e.client, false); err != nil || e.r2r.Count("GET /v3/collections/{id}") != 1 {
		t.Fatalf("second resolution went to R2R again: %v", e.r2r.Counts())
	}

	// The collection disappears: the stale entry is dropped and the name is looked up again.
	if _, err := deleteCollection(e, io.CollectionID); err != nil {
		t.Fatal(err)
	}
	stale := project.NewResolver(project.Options{WorkDir: e.project, CacheFile: cacheFile})
	pc, err = stale.Collection(context.Background(), e.client, false)
	if err != nil || pc.Exists() {
		t.Fatalf("after delete: %+v, %v", pc, err)
	}
	if b, _ := os.ReadFile(cacheFile); strings.Contains(string(b), io.CollectionID) {
		t.Fatalf("stale entry kept: %s", b)
	}
}

func deleteCollection(e *env, id string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodDelete, e.r2r.URL+"/v3/collections/"+id, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 200 {
			err = fmt.Errorf("delete collection: %s", resp.Status)
		}
	}
	return resp, err
}

func TestClientRootsChooseTheProject(t *testing.T) {
	e := newEnv(t)
	other := filepath.Join(filepath.Dir(e.project), "other-repo")
	mustMkdir(t, filepath.Join(other, ".git"))
	mustMkdir(t, filepath.Join(other, "sub"))
	calls := 0
	e.deps.Projects.SetRootsProvider(func(ctx context.Context) ([]string, error) {
		calls++
		return []string{"file://" + filepath.ToSlash(filepath.Join(other, "sub"))}, nil
	})
	for range 2 {
		pr, err := e.deps.Projects.Project(context.Background())
		if err != nil || pr.Root != other || pr.Name != "other-repo" || pr.CollectionName != "claude-code-other-repo" {
			t.Fatalf("project = %+v, %v", pr, err)
		}
	}
	if calls != 1 {
		t.Fatalf("roots asked %d times", calls)
	}
	e.deps.Projects.InvalidateRoots()
	failing := 0
	e.deps.Projects.SetRootsProvider(func(ctx context.Context) ([]string, error) {
		failing++
		return nil, fmt.Errorf("client did not answer")
	})
	for range 2 {
		if pr, err := e.deps.Projects.Project(context.Background()); err != nil || pr.Root != e.project {
			t.Fatalf("fallback project = %+v, %v", pr, err)
		}
	}
	if failing != 2 {
		t.Fatalf("a failed roots request was cached (%d calls)", failing)
	}
}

func TestIngestConfinement(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(filepath.Dir(e.project), "outside")
	mustMkdir(t, outside)
	secretOutside := filepath.Join(outside, "notes.md")
	if err := os.WriteFile(secretOutside, []byte("# not yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write("docs/ok.md", "# fine")
	e.write(".env", "TOKEN=1")
	e.write(".env.local", "TOKEN=1")
	e.write("certs/server.pem", "-----BEGIN")
	e.write("keys/deploy.key", "k")
	e.write("home/id_rsa", "k")
	e.write("home/id_ed25519.pub", "k")
	e.write(".git/config", "[core]")
	e.write(".netrc", "machine x")
	e.write(".npmrc", "//registry:_authToken=x")
	e.write("gcp/credentials.json", "{}")
	e.write("tool.exe", "MZ\x90\x00\x03")
	e.write("noext", "\x7fELF\x02\x01\x00")
	e.write("big.md", strings.Repeat("x", 2_000_001))
	mustMkdir(t, filepath.Join(e.project, "adir.md"))
	if err := os.Symlink(secretOutside, filepath.Join(e.project, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.project, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e.project, ".env"), filepath.Join(e.project, "innocent.md")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(e.project, "pipe.md")
	haveFIFO := mkfifo(fifo) == nil

	tests := []struct {
		name, path, kind string
	}{
		{"dotdot escape", "../outside/notes.md", confine.Outside},
		{"dotdot inside the path", "docs/../../outside/notes.md", confine.Outside},
		{"absolute outside", secretOutside, confine.Outside},
		{"symlink to a file outside", "link.md", confine.Outside},
		{"symlinked directory outside", "linkdir/notes.md", confine.Outside},
		{"proc environ", "/proc/self/environ", confine.System},
		{"dev null", "/dev/null", confine.System},
		{"etc passwd", "/etc/passwd", confine.Outside},
		{"missing", "docs/missing.md", confine.Missing},
		{"directory", "adir.md", confine.Special},
		{"project root", ".", confine.Special},
		{"dotenv", ".env", confine.Secret},
		{"dotenv variant", ".env.local", confine.Secret},
		{"pem", "certs/server.pem", confine.Secret},
		{"key", "keys/deploy.key", confine.Secret},
		{"ssh private key", "home/id_rsa", confine.Secret},
		{"ssh public key", "home/id_ed25519.pub", confine.Secret},
		{"git internals", ".git/config", confine.Secret},
		{"netrc", ".netrc", confine.Secret},
		{"npmrc", ".npmrc", confine.Secret},
		{"credentials.json", "gcp/credentials.json", confine.Secret},
		{"symlink to a secret", "innocent.md", confine.Secret},
		{"unsupported type", "tool.exe", confine.Type},
		{"no extension", "noext", confine.Type},
		{"too large for md", "big.md", confine.TooLarge},
	}
	if haveFIFO {
		tests = append(tests, struct{ name, path, kind string }{"fifo", "pipe.md", confine.Special})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": tt.path})
			if info.Type != tt.kind || info.Code != toolerr.CodeInvalidParams || !strings.HasPrefix(info.Message, "Not ingested: ") {
				t.Fatalf("info = %+v, want type %s", info, tt.kind)
			}
		})
	}
	if n := e.r2r.Count("POST /v3/documents"); n != 0 {
		t.Fatalf("%d uploads reached R2R", n)
	}
	// The one legitimate file goes through.
	e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/ok.md"})
	if n := e.r2r.Count("POST /v3/documents"); n != 1 {
		t.Fatalf("%d uploads", n)
	}
}

func TestIngestExtraRootAndMetadataRules(t *testing.T) {
	extra := t.TempDir()
	if err := os.WriteFile(filepath.Join(extra, "shared.md"), []byte("# shared"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *envConfig) { c.extraRoots = []string{extra} })
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": filepath.Join(extra, "shared.md")}), &io)
	realExtra, _ := filepath.EvalSymlinks(extra)
	if want := filepath.Base(realExtra) + "/shared.md"; io.RelativePath != want {
		t.Fatalf("relative path %q, want %q", io.RelativePath, want)
	}

	e.write("a.md", ledgerDoc)
	for _, tt := range []struct {
		md   map[string]any
		want string
	}{
		{map[string]any{"source_path": "x"}, `must not set "source_path"`},
		{map[string]any{"title": "Ledger"}, "title must be a string ending in .md"},
		{map[string]any{"big": strings.Repeat("x", 17<<10)}, "the limit is 16384 bytes"},
	} {
		_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "a.md", "metadata": tt.md})
		if !strings.Contains(info.Message, tt.want) {
			t.Fatalf("metadata %v: %+v", tt.md, info)
		}
	}
	if n := e.r2r.Count("POST /v3/documents"); n != 1 {
		t.Fatalf("%d uploads", n)
	}
	res := e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md", "metadata": map[string]any{"title": "Ledger Design.md", "team": "payments"}})
	var md map[string]any
	if err := json.Unmarshal([]byte(e.r2r.LastRequest("POST /v3/documents").Form.Get("metadata")), &md); err != nil {
		t.Fatal(err)
	}
	if md["title"] != "Ledger Design.md" || md["team"] != "payments" || md["source_path"] != "a.md" {
		t.Fatalf("metadata = %v (%s)", md, text(res))
	}
}

// progressLog records the progress notifications an MCP client receives.
type progressLog struct {
	mu     sync.Mutex
	values []float64
	done   chan struct{} // closed by the first progress of 1
}

func watchProgress(c *client.Client) *progressLog {
	p := &progressLog{done: make(chan struct{})}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		v, ok := n.Params.AdditionalFields["progress"].(float64)
		if n.Method != string(mcp.MethodNotificationProgress) || !ok {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.values = append(p.values, v)
		if v == 1 && p.done != nil {
			close(p.done)
			p.done = nil
		}
	})
	return p
}

// complete returns the progress values received once one of them reported the work done
// (1), or after 10 s without it. Notifications are dispatched asynchronously and may trail
// the call's response a little.
func (p *progressLog) complete() []float64 {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.values)
}

func TestIngestSynchronousWaitsWithProgress(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{IngestDelay: 5 * time.Millisecond}))
	e.write("docs/ledger.md", ledgerDoc)

	c := e.mcpClient()
	progress := watchProgress(c)
	req := mcp.CallToolRequest{}
	req.Params.Name = "r2r_ingest_document"
	req.Params.Arguments = map[string]any{"file_path": "docs/ledger.md", "run_async": false}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var io IngestOutput
	structured(t, res, &io)
	if io.Status != "success" || io.IngestionStatus != "success" || !strings.Contains(text(res), "searchable now") {
		t.Fatalf("ingest = %+v", io)
	}
	got := progress.complete()
	if len(got) == 0 || got[len(got)-1] != 1 {
		t.Fatalf("progress notifications = %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("progress not increasing: %v", got)
		}
	}

	// Asynchronous (default): returns while R2R still works, and monitor follows it.
	e.r2r.Configure(func(o *r2rtest.Options) { o.IngestDelay = time.Hour })
	e.write("docs/slow.md", runbookDoc)
	var slow IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/slow.md"}), &slow)
	if slow.Status != "pending" {
		t.Fatalf("async ingest = %+v", slow)
	}
	res = e.ok("r2r_monitor_task", map[string]any{"document_id": slow.DocumentID})
	var mo MonitorOutput
	structured(t, res, &mo)
	if mo.Done || mo.Progress >= 1 || !strings.Contains(text(res), "Still processing") {
		t.Fatalf("monitor = %+v", mo)
	}
	// R2R files a document in its collection once the ingestion has succeeded, so the
	// collection's listing does not show it yet.
	var lo ListDocumentsOutput
	structured(t, e.ok("r2r_list_documents", map[string]any{"status_filter": "success"}), &lo)
	if lo.Total != 1 || lo.Documents[0].DocumentID != io.DocumentID {
		t.Fatalf("success list = %+v", lo)
	}
}

func TestIngestSynchronousStopsAtTheWaitLimit(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{IngestDelay: time.Hour}))
	e.deps.IngestWait = 30 * time.Millisecond
	e.write("a.md", ledgerDoc)
	var io IngestOutput
	res := e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md", "run_async": false})
	structured(t, res, &io)
	if io.Status != "pending" || !strings.Contains(text(res), "r2r_monitor_task") {
		t.Fatalf("ingest = %+v: %s", io, text(res))
	}
}

func TestErrorMapping(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &io)
	missing := "00000000-0000-4000-8000-00000000abcd"

	t.Run("401", func(t *testing.T) {
		e.r2r.ForceStatus("POST /v3/retrieval/search", 401, 1)
		_, info := e.fail("r2r_search", map[string]any{"query": "x"})
		if info.Code != toolerr.CodeAuth || info.Status != 401 || !strings.HasPrefix(info.Message, "R2R requires authentication (401).") || !strings.Contains(info.Message, "Run `r2r-mcp login`") {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("403", func(t *testing.T) {
		e.r2r.ForceStatus("GET /v3/collections", 403, 1)
		_, info := e.fail("r2r_list_collections", nil)
		if info.Code != toolerr.CodeR2RAPI || info.Type != "forbidden" || !strings.Contains(info.Message, "r2r_list_collections") {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("404 document", func(t *testing.T) {
		_, info := e.fail("r2r_monitor_task", map[string]any{"document_id": missing})
		if info.Type != "not_found" || info.Status != 404 || !strings.Contains(info.Message, missing) || !strings.Contains(info.Message, "r2r_list_documents") {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("404 collection", func(t *testing.T) {
		_, info := e.fail("r2r_list_documents", map[string]any{"collection_id": missing})
		if info.Type != "not_found" || !strings.Contains(info.Message, "r2r_list_collections") {
			t.Fatalf("%+v", info)
		}
		uploads := e.r2r.Count("POST /v3/documents")
		_, info = e.fail("r2r_ingest_document", map[string]any{"file_path": "a.md", "collection_id": missing})
		if info.Type != "not_found" || !strings.Contains(info.Message, missing) || e.r2r.Count("POST /v3/documents") != uploads {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("explicit collection", func(t *testing.T) {
		coll, err := e.client.CreateCollection(context.Background(), "shared-notes", "")
		if err != nil {
			t.Fatal(err)
		}
		var out IngestOutput
		structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md", "collection_id": coll.ID}), &out)
		if out.CollectionID != coll.ID || out.CollectionName != "shared-notes" || out.DocumentID != kbsync.VersionID(coll.ID, e.userID(), "a.md", kbsync.SHA256([]byte(ledgerDoc))) || out.Status != "success" {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("429", func(t *testing.T) {
		e.r2r.ForceStatus("POST /v3/retrieval/rag", 429, 1)
		_, info := e.fail("r2r_rag_query", map[string]any{"question": "x"})
		if info.Code != toolerr.CodeRateLimited || !info.Retryable || info.RetryAfter == nil || *info.RetryAfter != 60 {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("502", func(t *testing.T) {
		e.r2r.ForceStatus("GET /v3/documents/{id}", 502, 1)
		_, info := e.fail("r2r_get_document", map[string]any{"document_id": io.DocumentID})
		if info.Type != "server_error" || !info.Retryable || info.Status != 502 {
			t.Fatalf("%+v", info)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		e.r2r.Down(true)
		defer e.r2r.Down(false)
		_, info := e.fail("r2r_monitor_task", map[string]any{"document_id": io.DocumentID})
		if info.Type != "unreachable" || !info.Retryable || !strings.Contains(info.Message, "Cannot reach R2R at "+e.r2r.URL) ||
			!strings.Contains(info.Message, diagnose.StartR2R("")) {
			t.Fatalf("%+v", info)
		}
		res := e.ok("r2r_status", nil)
		var st StatusOutput
		structured(t, res, &st)
		if st.Health.OK || st.Health.Status != "unreachable" || !strings.Contains(text(res), "Start R2R") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		e.r2r.Configure(func(o *r2rtest.Options) { o.Latency = time.Second })
		defer e.r2r.Configure(func(o *r2rtest.Options) { o.Latency = 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		res, err := e.invoke(ctx, "r2r_monitor_task", map[string]any{"document_id": io.DocumentID})
		if err != nil || !res.IsError {
			t.Fatalf("res %v err %v", res, err)
		}
		if info := errInfo(res); info.Type != "timeout" || !info.Retryable {
			t.Fatalf("%+v", info)
		}
	})
}

func TestRAGOptions(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	res := e.ok("r2r_rag_query", map[string]any{"question": "payouts?", "model": "openai/gpt-4.1-mini", "max_tokens": 64.0,
		"temperature": 0.0, "include_sources": false})
	var ro RAGOutput
	structured(t, res, &ro)
	// R2R reports the model without its LiteLLM provider prefix (conformance: TestLive rag).
	if ro.ModelUsed != "gpt-4.1-mini" || len(ro.Sources) != 0 || strings.Contains(text(res), "Sources:") {
		t.Fatalf("rag = %+v / %s", ro, text(res))
	}
	var body map[string]any
	if err := lastJSON(e, "POST /v3/retrieval/rag", &body); err != nil {
		t.Fatal(err)
	}
	gen := body["rag_generation_config"].(map[string]any)
	if gen["model"] != "openai/gpt-4.1-mini" || gen["max_tokens_to_sample"] != 64.0 || gen["temperature"] != 0.0 {
		t.Fatalf("generation config = %v", gen)
	}
	if _, info := e.fail("r2r_rag_query", map[string]any{"question": "x", "temperature": 2.5}); !strings.Contains(info.Message, `argument "temperature" must be at most 2, got 2.5`) {
		t.Fatalf("%+v", info)
	}
}

func TestRetrievedTextIsSanitized(t *testing.T) {
	e := newEnv(t)
	e.write("evil.md", "Normal text \u202eevil\u202c with zero\u200bwidth and \U000E0041tags. Payouts are nightly.")
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "evil.md"}), &io)
	for name, args := range map[string]map[string]any{
		"r2r_search":       {"query": "payouts nightly"},
		"r2r_get_document": {"document_id": io.DocumentID},
		"r2r_rag_query":    {"question": "normal text with zero width?"}, // the emulator quotes sentences sharing terms
	} {
		res := e.ok(name, args)
		b, _ := json.Marshal(res.StructuredContent)
		all := text(res) + string(b)
		for _, bad := range []string{"\u202e", "\u202c", "\u200b", "\U000E0041", `\u202e`, `\u200b`} {
			if strings.Contains(all, bad) {
				t.Fatalf("%s output contains %q", name, bad)
			}
		}
		if !strings.Contains(all, "zerowidth") {
			t.Fatalf("%s lost the text: %s", name, all)
		}
	}
}

func TestGetDocumentPaging(t *testing.T) {
	e := newEnv(t, withEmulator(r2rtest.Options{ChunkSize: 200}))
	var sb strings.Builder
	for i := range 120 {
		fmt.Fprintf(&sb, "Line %03d of the long document about ledgers and payouts.\n", i)
	}
	e.write("long.md", sb.String())
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "long.md"}), &io)

	var all strings.Builder
	offset := 0
	for page := 0; page < 20; page++ {
		res := e.ok("r2r_get_document", map[string]any{"document_id": io.DocumentID, "offset": float64(offset), "max_chars": 2500.0})
		var gd GetDocumentOutput
		structured(t, res, &gd)
		if gd.ChunkCount < 2 || gd.Offset != offset {
			t.Fatalf("page %d = %+v", page, gd)
		}
		all.WriteString(gd.Text)
		if gd.NextOffset == nil {
			break
		}
		if !strings.Contains(text(res), fmt.Sprintf("more chars — call again with offset=%d]", *gd.NextOffset)) {
			t.Fatalf("no paging hint: %s", text(res)[len(text(res))-100:])
		}
		offset = *gd.NextOffset
	}
	got := strings.Join(strings.Fields(all.String()), " ")
	want := strings.Join(strings.Fields(sb.String()), " ")
	if got != want {
		t.Fatalf("reassembled text differs from the file:\n%s\n---\n%s", got[:300], want[:300])
	}
	res := e.ok("r2r_get_document", map[string]any{"document_id": io.DocumentID, "offset": 1e6})
	if !strings.Contains(text(res), "past the end") {
		t.Fatalf("%s", text(res))
	}
}

// TestSearchOutputSize: the default 10-hit search over the sample corpus stays under
// 10,000 bytes of text and carries rank, score, title, short id and snippet per hit.
func TestSearchOutputSize(t *testing.T) {
	e := newEnv(t)
	corpus := filepath.Join("..", "testdata", "docs")
	if _, err := os.Stat(corpus); err != nil {
		corpus = t.TempDir()
		for i := range 12 {
			body := strings.Repeat(fmt.Sprintf("Paragraph %d about the ledger, payouts, incidents and failover. ", i), 60)
			if err := os.WriteFile(filepath.Join(corpus, fmt.Sprintf("doc-%02d.md", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	n := 0
	err := filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(corpus, p)
		dst := e.write(filepath.ToSlash(filepath.Join("docs", rel)), "")
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return err
		}
		e.ok("r2r_ingest_document", map[string]any{"file_path": dst})
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := e.ok("r2r_search", map[string]any{"query": "what happens when payouts are duplicated or the database fails over"})
	var so SearchOutput
	structured(t, res, &so)
	out := text(res)
	t.Logf("corpus %d files; 10-hit search text = %d bytes:\n%s", n, len(out), out)
	if so.Count != 10 {
		t.Fatalf("%d hits, want 10", so.Count)
	}
	if len(out) > 10000 {
		t.Fatalf("search text is %d bytes, want ≤ 10000", len(out))
	}
	// Each hit is a line, then its window on a line of its own; the lower-ranked hits whose
	// window would be under two sentences (minPassageChars) come last, without one.
	lines := strings.Split(out, "\n")[1:]
	for i, h := range so.Results {
		head := lines[0]
		prefix := fmt.Sprintf("%d. %s", h.Rank, h.Title)
		suffix := fmt.Sprintf("(doc %s, relevance %.2f)", shortID(h.DocumentID), h.Relevance)
		if !strings.HasPrefix(head, prefix) || !strings.HasSuffix(head, suffix) {
			t.Fatalf("hit %d = %q, want %q…%q", i+1, head, prefix, suffix)
		}
		lines = lines[1:]
		switch {
		case h.Text != "" && (i > 0 && so.Results[i-1].Text == "" || lines[0] != "   "+h.Text || len(h.Text) < 20):
			t.Fatalf("hit %d's window %q, want %q after a hit with one", i+1, lines[0], h.Text)
		case h.Text != "":
			lines = lines[1:]
		case i < 2:
			t.Fatalf("hit %d has no window", i+1)
		}
	}
	if !strings.Contains(out, "limit=20") {
		t.Fatalf("no hint for more results: %s", out)
	}
}

func TestConcurrentFirstWritesCreateOneCollection(t *testing.T) {
	e := newEnv(t)
	for i := range 6 {
		e.write(fmt.Sprintf("d%d.md", i), fmt.Sprintf("# doc %d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.invoke(context.Background(), "r2r_ingest_document", map[string]any{"file_path": fmt.Sprintf("d%d.md", i)})
			if err != nil || res.IsError {
				errs <- fmt.Sprint(err, text(res))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	if n := e.r2r.Count("POST /v3/collections"); n != 1 {
		t.Fatalf("collection created %d times", n)
	}
	var lo ListDocumentsOutput
	structured(t, e.ok("r2r_list_documents", nil), &lo)
	if lo.Total != 6 {
		t.Fatalf("%d documents", lo.Total)
	}
}

func TestUnknownArgumentsForEveryTool(t *testing.T) {
	e := newEnv(t)
	for _, tl := range e.list {
		_, info := e.fail(tl.Def.Name, map[string]any{"bogus": 1.0})
		if info.Code != toolerr.CodeInvalidParams || !strings.Contains(info.Message, `unknown argument "bogus"`) {
			t.Fatalf("%s: %+v", tl.Def.Name, info)
		}
	}
	if n := len(e.r2r.Counts()); n != 0 {
		t.Fatalf("requests reached R2R: %v", e.r2r.Counts())
	}
}

// lastJSON decodes the JSON body of the last request on route (numbers as float64).
func lastJSON(e *env, route string, v any) error {
	rec := e.r2r.LastRequest(route)
	if rec == nil {
		return fmt.Errorf("no request on %s", route)
	}
	return json.Unmarshal(rec.Body, v)
}

func TestBreakerOpenMapsToCode32003(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	b := r2r.NewBreaker(srv.URL, r2r.BreakerSettings{Failures: 2, Cooldown: time.Minute}, nil)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Middleware: []r2r.Middleware{b.Middleware()}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.deps.Client = c
	e.deps.BreakerState = b.State
	mc := serve(t, []Tool{monitorTaskTool(e.deps, e.deps.writes), statusTool(e.deps, e.deps.limiter)}, e.deps)
	srv.ForceStatus("GET /v3/documents/{id}", 503, 2)
	args := map[string]any{"document_id": "00000000-0000-4000-8000-000000000001"}
	for range 2 {
		res, _ := invoke(context.Background(), mc, "r2r_monitor_task", args)
		if info := errInfo(res); info.Status != 503 {
			t.Fatalf("%+v", info)
		}
	}
	res, _ := invoke(context.Background(), mc, "r2r_monitor_task", args)
	info := errInfo(res)
	if info.Code != toolerr.CodeBreakerOpen || info.Type != "breaker_open" || !info.Retryable || info.RetryAfter == nil || *info.RetryAfter < 1 {
		t.Fatalf("%+v", info)
	}
	for _, want := range []string{"R2R at " + srv.URL + " failed 2 times in a row", "calls are paused for ", "r2r-mcp doctor"} {
		if !strings.Contains(info.Message, want) {
			t.Fatalf("message %q lacks %q", info.Message, want)
		}
	}
	if n := srv.Count("GET /v3/documents/{id}"); n != 2 {
		t.Fatalf("the open breaker let a request through (%d)", n)
	}
	res, _ = invoke(context.Background(), mc, "r2r_status", nil)
	var st StatusOutput
	structured(t, res, &st)
	if st.Breaker != b.Summary() || !strings.Contains(text(res), "Circuit breaker: "+b.Summary()) {
		t.Fatalf("status breaker = %q, summary %q", st.Breaker, b.Summary())
	}
}
