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

// TestRealMemoryFlow is team memory on the real R2R through the built binary: remember →
// recall by query, by kind (checkpoints newest first) and by a pasted error → search and
// RAG see the memory → the same memory again is one document → supersede → a secret is
// refused with nothing stored → forget; status counts memories by kind; `sync --prune` of a
// project whose files were all deleted removes the files' documents and no memory; the
// memory command lists and exports them.
func TestRealMemoryFlow(t *testing.T) {
	r := liveR2R(t)
	proj := servertest.GitProject(t, "memory-"+unique(t), map[string]string{
		"docs/pool.md": "# Connection pool\n\nThe service keeps twenty Postgres connections.\n",
		"src/pool.go":  "package pool\n\n// Size is the pool size.\nconst Size = 20\n",
	})
	env := servertest.Env(t, r.URL, "R2R_EMAIL="+r.Email, "R2R_PASSWORD="+r.Password,
		"XDG_CACHE_HOME="+t.TempDir(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	run := func(args ...string) servertest.Result {
		t.Helper()
		res := servertest.Run(t, proj, env, "", args...)
		if res.Code != 0 {
			t.Fatalf("%v exited %d:\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
		return res
	}
	run("sync")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, t, proj, env)
	call := func(name string, args map[string]any) servertest.ToolResult {
		t.Helper()
		res, err := s.Call(ctx, name, args)
		if err != nil || res.IsError {
			t.Fatalf("%s %v: %v %s\n%s", name, args, err, res.Text, s.Stderr())
		}
		return res
	}
	str := func(res servertest.ToolResult, key string) string { v, _ := res.Structured[key].(string); return v }
	firstTitle := func(res servertest.ToolResult) string {
		ms, _ := res.Structured["memories"].([]any)
		if len(ms) == 0 {
			return ""
		}
		v, _ := ms[0].(map[string]any)["title"].(string)
		return v
	}

	decision := call("r2r_remember", map[string]any{"kind": "decision", "title": "Pool size stays at twenty",
		"body":  "We keep the Postgres pool at twenty connections: the database allows one hundred and five replicas share it.",
		"paths": []any{"src/pool.go"}, "tags": []any{"db"}})
	fix := call("r2r_remember", map[string]any{"kind": "fix", "title": "Connection refused in the integration tests",
		"error": "dial tcp 127.0.0.1:5432: connect: connection refused",
		"body":  "Start the test database first with make db-up; the integration tests do not start it."})
	call("r2r_remember", map[string]any{"kind": "checkpoint", "title": "Pool tuning, day one", "body": "Done: measured the pool. Next: raise the timeout."})
	call("r2r_remember", map[string]any{"kind": "checkpoint", "title": "Pool tuning, day two", "body": "Done: raised the timeout. Next: load test."})

	if got := firstTitle(call("r2r_recall", map[string]any{"query": "how many postgres connections does the pool keep"})); got != "Pool size stays at twenty" {
		t.Errorf("recall by query: first %q", got)
	}
	pasted := "--- FAIL: TestCheckout (0.02s)\n    store_test.go:41: dial tcp 127.0.0.1:5432: connect: connection refused"
	if got := firstTitle(call("r2r_recall", map[string]any{"query": pasted})); got != "Connection refused in the integration tests" {
		t.Errorf("recall by pasted error: first %q", got)
	}
	if got := firstTitle(call("r2r_recall", map[string]any{"kind": "checkpoint"})); got != "Pool tuning, day two" {
		t.Errorf("resume: newest checkpoint %q", got)
	}
	if found := call("r2r_search", map[string]any{"query": "postgres pool twenty connections replicas"}); !strings.Contains(found.Text, "memory (decision): Pool size stays at twenty") {
		t.Errorf("search does not show the memory:\n%s", found.Text)
	}
	rag := call("r2r_rag_query", map[string]any{"question": "Why is the Postgres pool size twenty connections?"})
	if b, _ := json.Marshal(rag.Structured); !strings.Contains(string(b), str(decision, "id")) {
		t.Errorf("RAG sources lack the memory %s: %s", str(decision, "id"), b)
	}

	if again := call("r2r_remember", map[string]any{"kind": "fix", "title": "Connection refused in the integration tests",
		"error": "dial tcp 127.0.0.1:5432: connect: connection refused",
		"body":  "Start the test database first with make db-up; the integration tests do not start it.\n"}); str(again, "status") != "already_remembered" {
		t.Errorf("the same memory again: %s", again.Text)
	}
	newer := call("r2r_remember", map[string]any{"kind": "decision", "title": "Pool size is twenty-five",
		"body": "Raised to twenty-five connections after the load test.", "supersedes": str(decision, "id"), "paths": []any{"src/pool.go"}})
	if str(newer, "superseded_id") != str(decision, "id") {
		t.Errorf("supersede: %s", newer.Text)
	}

	c := adminClient(ctx, t, r)
	before := collectionDocs(ctx, t, c, str(fix, "collection_id"))
	secret, err := s.Call(ctx, "r2r_remember", map[string]any{"kind": "note", "title": "Deploy key",
		"body": "The deploy token is ghp_" + strings.Repeat("Zx9", 12)})
	if err != nil || !secret.IsError || !strings.Contains(secret.Text, "GitHub token") {
		t.Errorf("a secret memory: %v %s", err, secret.Text)
	}
	if after := collectionDocs(ctx, t, c, str(fix, "collection_id")); after != before {
		t.Errorf("the collection went from %d to %d documents after a refused secret", before, after)
	}
	call("r2r_forget", map[string]any{"memory_id": str(fix, "id")})
	st := call("r2r_status", nil)
	if mem, _ := st.Structured["project"].(map[string]any)["memories"].(map[string]any); mem["decision"] != 1.0 || mem["checkpoint"] != 2.0 || mem["fix"] != nil {
		t.Errorf("status memories %v", mem)
	}
	s.Close()

	for _, p := range []string{"docs/pool.md", "src/pool.go"} {
		if err := os.Remove(filepath.Join(proj, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	var sum struct{ Deleted []string }
	if res := run("sync", "--prune", "--json"); json.Unmarshal([]byte(res.Stdout), &sum) != nil || len(sum.Deleted) != 2 {
		t.Fatalf("prune of the emptied project: %s", res.Stdout)
	}
	list := run("memory", "list")
	for _, want := range []string{"Pool size is twenty-five", "Pool tuning, day one", "Pool tuning, day two"} {
		if !strings.Contains(list.Stdout, want) {
			t.Errorf("memory list after the prune lacks %q:\n%s", want, list.Stdout)
		}
	}
	if exp := run("memory", "export", "--format", "jsonl"); strings.Count(exp.Stdout, "\n") != 3 || !strings.Contains(exp.Stdout, "Raised to twenty-five") {
		t.Errorf("export:\n%s", exp.Stdout)
	}
}

func adminClient(ctx context.Context, t testing.TB, r realR2R) *r2r.Client {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL, UserAgent: "r2r-mcp/e2ereal"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	return c.WithCredentials(r2r.Bearer(tok.AccessToken.Token))
}

func collectionDocs(ctx context.Context, t testing.TB, c *r2r.Client, coll string) int {
	t.Helper()
	p, err := c.ListCollectionDocuments(ctx, coll, r2r.ListParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return p.Total
}

// waitAllIngested waits until the collection holds n documents, all ingested (R2R files a
// document in its collection once its ingestion succeeded).
func waitAllIngested(ctx context.Context, t testing.TB, c *r2r.Client, coll string, n int) {
	t.Helper()
	for {
		p, err := c.ListCollectionDocuments(ctx, coll, r2r.ListParams{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, d := range p.Items {
			if d.IngestionStatus == r2r.IngestionSuccess {
				done++
			}
		}
		if done >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d documents ingested", done, n)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
