package tools

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

// Every prompt has a title, a description and described arguments; a read-only server
// offers no sync, since r2r_sync is not offered then.
func TestPromptsList(t *testing.T) {
	e := newEnv(t)
	res, err := e.mcpClient().ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Prompts {
		names = append(names, p.Name)
		if p.Title == "" || p.Description == "" || len(p.Arguments) == 0 {
			t.Errorf("%s: title %q, description %q, %d arguments", p.Name, p.Title, p.Description, len(p.Arguments))
		}
		for _, a := range p.Arguments {
			if a.Description == "" {
				t.Errorf("%s: argument %s has no description", p.Name, a.Name)
			}
		}
	}
	slices.Sort(names)
	if want := []string{"ask", "remember", "resume", "search", "sync"}; !slices.Equal(names, want) {
		t.Errorf("prompts %v, want %v", names, want)
	}
	for _, p := range Prompts(e.deps, true) {
		if p.Prompt.Name == "sync" || p.Prompt.Name == "remember" {
			t.Errorf("a read-only server offers the %s prompt", p.Prompt.Name)
		}
	}
}

func getPrompt(c *client.Client, name string, args map[string]string) (string, error) {
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.GetPrompt(context.Background(), req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range res.Messages {
		if m.Role != mcp.RoleUser {
			return "", nil
		}
		if tc, ok := m.Content.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// Each prompt renders a user message that names the tool to call with its arguments and
// says how to present the result; bad arguments are protocol errors that say what is wrong.
func TestPromptsGet(t *testing.T) {
	e := newEnv(t)
	coll, err := e.client.CreateCollection(context.Background(), "team-runbooks", "")
	if err != nil {
		t.Fatal(err)
	}
	c := e.mcpClient()
	tests := []struct {
		name   string
		prompt string
		args   map[string]string
		want   []string
		reject string
	}{
		{"ask", "ask", map[string]string{"question": "Which worker drains the <payout> queue?"},
			[]string{`r2r_rag_query with {"question":"Which worker drains the <payout> queue?"}`, "[shortid] citations",
				`r2r_search with {"query":"Which worker drains the <payout> queue?"}`, "do not answer from memory", "cut short"}, ""},
		{"search", "search", map[string]string{"query": "ERR_QUEUE_FULL"},
			[]string{`r2r_search with {"query":"ERR_QUEUE_FULL"}`, "short id", "r2r_get_document"}, ""},
		{"sync dry run first", "sync", nil,
			[]string{`1. Call r2r_sync with {"dry_run":true}`, `2. If the plan deletes documents, ask me before going on. Otherwise call r2r_sync with {}.`,
				"r2r_sync_status"}, ""},
		{"sync with prune into a named collection", "sync", map[string]string{"prune": "yes", "collection": "team-runbooks"},
			[]string{`{"collection_id":"` + coll.ID + `","dry_run":true,"prune":true}`, `r2r_sync with {"collection_id":"` + coll.ID + `","prune":true}`}, ""},
		{"sync into a collection by id", "sync", map[string]string{"collection": strings.ToUpper(coll.ID)},
			[]string{`{"collection_id":"` + coll.ID + `","dry_run":true}`}, ""},
		{"sync into an unknown collection", "sync", map[string]string{"collection": "nowhere"},
			[]string{`I asked for the collection "nowhere": find its collection_id with r2r_list_collections`}, ""},
		{"remember, the model picks the kind", "remember", map[string]string{"note": "We pin pgvector 0.8.5: 0.8.6 breaks HNSW builds"},
			[]string{"We pin pgvector 0.8.5", "Call r2r_remember with the kind that fits (decision, convention, fix, gotcha, checkpoint, note)", "exact error text in error", "cut short"}, ""},
		{"remember a fix", "remember", map[string]string{"note": "x", "kind": "Fix"}, []string{`r2r_remember with kind {"kind":"fix"}`}, ""},
		{"remember an unknown kind", "remember", map[string]string{"note": "x", "kind": "idea"}, nil, `kind must be one of`},
		{"resume the newest", "resume", nil, []string{`r2r_recall with {"kind":"checkpoint","limit":3}`, "r2r_get_document", "what is next", "may be stale"}, ""},
		{"resume a topic", "resume", map[string]string{"topic": "the index rebuild"}, []string{`{"kind":"checkpoint","limit":3,"query":"the index rebuild"}`}, ""},
		{"missing question", "ask", nil, nil, "needs its question argument"},
		{"blank query", "search", map[string]string{"query": "  "}, nil, "needs its query argument"},
		{"bad prune", "sync", map[string]string{"prune": "maybe"}, nil, `prune must be "yes" or "no"`},
		{"unknown argument", "ask", map[string]string{"question": "x", "colection": "y"}, nil, `has no argument "colection"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := getPrompt(c, tt.prompt, tt.args)
			if tt.reject != "" {
				if err == nil || !strings.Contains(err.Error(), tt.reject) {
					t.Fatalf("error %v, want one with %q (text %q)", err, tt.reject, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("message lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// Over HTTP (a remote project resolver) sync takes the directory on the server host, as
// r2r_sync does there.
func TestSyncPromptRemote(t *testing.T) {
	e := newEnv(t)
	e.deps.Projects = project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-", Remote: true})
	var sync mcp.Prompt
	for _, p := range Prompts(e.deps, false) {
		if p.Prompt.Name == "sync" {
			sync = p.Prompt
		}
	}
	if len(sync.Arguments) == 0 || sync.Arguments[0].Name != "directory" || !sync.Arguments[0].Required {
		t.Fatalf("remote sync arguments %+v, want directory first and required", sync.Arguments)
	}
	text, err := e.deps.renderSync(context.Background(), map[string]string{"directory": "/srv/docs"})
	if err != nil || !strings.Contains(text, `{"directory":"/srv/docs","dry_run":true}`) {
		t.Fatalf("text %q, error %v", text, err)
	}
}

// Completions return the known values that start with what was typed.
func TestPromptCompletions(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"team-runbooks", "team-adr", "personal"} {
		if _, err := e.client.CreateCollection(context.Background(), name, ""); err != nil {
			t.Fatal(err)
		}
	}
	c := e.mcpClient()
	tests := []struct {
		prompt, arg, value string
		want               []string
	}{
		{"sync", "collection", "team", []string{"team-adr", "team-runbooks"}},
		{"sync", "collection", "TEAM-R", []string{"team-runbooks"}},
		{"sync", "collection", "", []string{"Default", "personal", "team-adr", "team-runbooks"}}, // R2R makes Default
		{"sync", "collection", "zzz", []string{}},
		{"sync", "prune", "y", []string{"yes"}},
		{"remember", "kind", "c", []string{"checkpoint", "convention"}},
		{"ask", "question", "wh", []string{}},
	}
	for _, tt := range tests {
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: tt.prompt}
		req.Params.Argument = mcp.CompleteArgument{Name: tt.arg, Value: tt.value}
		res, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("%s %s %q: %v", tt.prompt, tt.arg, tt.value, err)
		}
		got := slices.Sorted(slices.Values(res.Completion.Values))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s %s %q: %v, want %v", tt.prompt, tt.arg, tt.value, got, tt.want)
		}
	}
}

// The document_id of r2r://documents/{document_id} completes from the project's documents;
// without a project collection there is nothing to offer, and no error.
func TestDocumentIDCompletions(t *testing.T) {
	e := newEnv(t, withCache(t))
	c := e.mcpClient()
	complete := func(value string) []string {
		t.Helper()
		req := mcp.CompleteRequest{}
		req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: DocumentTemplateURI}
		req.Params.Argument = mcp.CompleteArgument{Name: "document_id", Value: value}
		res, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("complete %q: %v", value, err)
		}
		return res.Completion.Values
	}
	if got := complete(""); len(got) != 0 {
		t.Fatalf("no collection yet, completions %v", got)
	}
	var ids []string
	for _, f := range []string{"a.md", "b.md"} {
		e.write(f, "# "+f+"\n\ntext of "+f)
		var o struct {
			DocumentID string `json:"document_id"`
		}
		structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": f, "run_async": false}), &o)
		ids = append(ids, o.DocumentID)
	}
	later := time.Now().Add(upload.MaxIngestAge + time.Minute) // the ingestions no longer hold off the cache
	e.deps.Now = func() time.Time { return later }
	if got := slices.Sorted(slices.Values(complete(""))); !slices.Equal(got, slices.Sorted(slices.Values(ids))) {
		t.Errorf("completions %v, want %v", got, ids)
	}
	if got := complete(strings.ToUpper(ids[0][:8])); !slices.Contains(got, ids[0]) || (ids[0][:8] != ids[1][:8] && len(got) != 1) {
		t.Errorf("completions of %s: %v", ids[0][:8], got)
	}
	// The completion's listing is r2r_list_documents' cache entry: the tool answering from
	// it still names the collection.
	var list struct {
		CollectionName string `json:"collection_name"`
		Cached         bool   `json:"cached"`
	}
	structured(t, e.ok("r2r_list_documents", map[string]any{"limit": maxCompletions}), &list)
	if !list.Cached || list.CollectionName == "" {
		t.Errorf("r2r_list_documents after a completion: %+v, want the cached page with its collection's name", list)
	}
}

// What was typed is lowered once per completion, not once per known value: a 1 MiB value
// against 40 collection names allocates about its own size a few times, not 40 times.
func TestCompletionOfALongValueAllocatesLittle(t *testing.T) {
	e := newEnv(t)
	for i := range 40 {
		if _, err := e.client.CreateCollection(context.Background(), fmt.Sprintf("team-%02d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	complete := PromptCompletions(e.deps, false)
	for _, tc := range []struct {
		name, value string
	}{
		{"upper case", strings.Repeat("A", 1<<20)},
		{"mixed case", strings.Repeat("Team-", 1<<18)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arg := mcp.CompleteArgument{Name: "collection", Value: tc.value}
			if _, err := complete.CompletePromptArgument(context.Background(), "sync", arg, mcp.CompleteContext{}); err != nil { // caches the names
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := complete.CompletePromptArgument(context.Background(), "sync", arg, mcp.CompleteContext{})
			runtime.ReadMemStats(&after)
			if err != nil || len(res.Values) != 0 {
				t.Fatalf("%v %v", res, err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(tc.value)) {
				t.Errorf("one completion of a %d KiB value allocated %d KiB", len(tc.value)>>10, got>>10)
			}
		})
	}
}
