package tools

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// clockEnv is an env whose Deps and emulator share a fake clock that tests move.
type clockEnv struct {
	*env
	now time.Time
}

func newClockEnv(t *testing.T) *clockEnv {
	ce := &clockEnv{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	clock := func() time.Time { return ce.now }
	ce.env = newEnv(t, withEmulator(r2rtest.Options{Clock: clock}), withDeps(func(d *Deps) { d.Now = clock }))
	return ce
}

func (e *env) remember(args map[string]any) RememberOutput {
	e.t.Helper()
	res := e.ok("r2r_remember", args)
	validateStructured(e.t, e.tools["r2r_remember"], res)
	var o RememberOutput
	structured(e.t, res, &o)
	return o
}

func (e *env) recall(args map[string]any) (RecallOutput, string) {
	e.t.Helper()
	res := e.ok("r2r_recall", args)
	validateStructured(e.t, e.tools["r2r_recall"], res)
	var o RecallOutput
	structured(e.t, res, &o)
	return o, text(res)
}

func titles(o RecallOutput) []string {
	out := make([]string, len(o.Memories))
	for i, m := range o.Memories {
		out[i] = m.Title
	}
	return out
}

// TestMemoryLifecycle: remember → recall by query, by kind (checkpoints newest first) and
// by a pasted error → search and RAG see the memory, labelled → the same memory again is
// one document → supersede → forget.
func TestMemoryLifecycle(t *testing.T) {
	e := newClockEnv(t)
	decision := e.remember(map[string]any{"kind": "decision", "title": "Use pgx for Postgres",
		"body": "We use the pgx driver, not lib/pq: it supports COPY and named prepared statements.", "paths": []any{"db/conn.go"}, "tags": []any{"db"}})
	if decision.Status != "saved" || len(decision.ID) != 36 {
		t.Fatalf("remember: %+v", decision)
	}
	e.now = e.now.Add(time.Hour)
	fix := e.remember(map[string]any{"kind": "fix", "title": "Migrations fail on a fresh clone",
		"error": "ERROR: relation \"schema_migrations\" does not exist (SQLSTATE 42P01)",
		"body":  "Run make db-init before the first migration; it creates the schema_migrations table."})
	for i, body := range []string{"Done: parser rewrite. Next: wire the lexer.", "Done: lexer wired. Next: error recovery in the parser."} {
		e.now = e.now.Add(time.Hour)
		e.remember(map[string]any{"kind": "checkpoint", "title": fmt.Sprintf("Parser work, step %d", i+1), "body": body})
	}
	e.now = e.now.Add(24 * time.Hour)

	for _, tc := range []struct {
		name  string
		args  map[string]any
		first string
		only  bool // the result holds nothing else
	}{
		{"by_query", map[string]any{"query": "which postgres driver do we use"}, "Use pgx for Postgres", false},
		{"by_pasted_error", map[string]any{"query": "migrate: ERROR: relation \"schema_migrations\" does not exist (SQLSTATE 42P01) at line 1"},
			"Migrations fail on a fresh clone", false},
		{"by_kind_newest_first", map[string]any{"kind": "checkpoint"}, "Parser work, step 2", true},
		{"by_path", map[string]any{"path": e.project + "/db/conn.go"}, "Use pgx for Postgres", true},
		{"by_tag", map[string]any{"tag": "db"}, "Use pgx for Postgres", true},
		{"by_author", map[string]any{"author": r2rtest.AdminEmail, "kind": "fix"}, "Migrations fail on a fresh clone", true},
		{"by_age", map[string]any{"max_age_days": 1.0, "kind": "checkpoint"}, "Parser work, step 2", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, txt := e.recall(tc.args)
			if o.Count == 0 || o.Memories[0].Title != tc.first {
				t.Fatalf("recall %v: %v, want %q first\n%s", tc.args, titles(o), tc.first, txt)
			}
			if tc.name == "by_kind_newest_first" && !slices.Equal(titles(o), []string{"Parser work, step 2", "Parser work, step 1"}) {
				t.Errorf("checkpoints %v, want newest first", titles(o))
			}
			if tc.only && tc.name != "by_kind_newest_first" && o.Count != 1 {
				t.Errorf("recall %v: %v, want only %q", tc.args, titles(o), tc.first)
			}
			if m := o.Memories[0]; m.Author != "admin" || m.Age == "" || m.Excerpt == "" || !strings.Contains(txt, m.ID) {
				t.Errorf("entry %+v / text %q", m, txt)
			}
		})
	}

	t.Run("search_and_rag_see_it_labelled", func(t *testing.T) {
		res := e.ok("r2r_search", map[string]any{"query": "pgx driver lib/pq COPY"})
		if !strings.Contains(text(res), "memory (decision): Use pgx for Postgres") {
			t.Errorf("search does not show the memory labelled:\n%s", text(res))
		}
		rag := e.ok("r2r_rag_query", map[string]any{"question": "Which Postgres driver do we use, pgx or lib/pq?"})
		if !strings.Contains(text(rag), "memory (decision)") {
			t.Errorf("RAG does not cite the memory:\n%s", text(rag))
		}
	})

	t.Run("same_content_is_one_document", func(t *testing.T) {
		e.r2r.ResetCounts()
		again := e.remember(map[string]any{"kind": "decision", "title": " Use pgx  for Postgres ",
			"body": "We use the pgx driver, not lib/pq: it supports COPY and named prepared statements.\n\n", "tags": []any{"other"}})
		if again.Status != "already_remembered" || again.ID != decision.ID || e.r2r.Count("POST /v3/documents") != 0 {
			t.Fatalf("second save %+v, %d creates", again, e.r2r.Count("POST /v3/documents"))
		}
	})

	var newer RememberOutput
	t.Run("supersede", func(t *testing.T) {
		o, _ := e.recall(map[string]any{"tag": "db"})
		newer = e.remember(map[string]any{"kind": "decision", "title": "Use pgx v5 for Postgres",
			"body": "pgx v5 with pgxpool; lib/pq is not used.", "supersedes": o.Memories[0].ID})
		if newer.Superseded != decision.ID || newer.Outcome != memory.OutcomeDeleted || !strings.Contains(newer.Message, "R2R deleted") {
			t.Fatalf("supersede: %+v", newer)
		}
		if _, err := e.client.GetDocument(context.Background(), decision.ID); err == nil {
			t.Error("the superseded memory still exists")
		}
		all, _ := e.recall(map[string]any{"kind": "decision"})
		if !slices.Equal(titles(all), []string{"Use pgx v5 for Postgres"}) {
			t.Errorf("decisions after supersede: %v", titles(all))
		}
	})

	t.Run("forget", func(t *testing.T) {
		res := e.ok("r2r_forget", map[string]any{"memory_id": fix.ID})
		var o ForgetOutput
		structured(t, res, &o)
		if !o.Deleted || o.Kind != "fix" {
			t.Fatalf("forget: %+v", o)
		}
		if all, _ := e.recall(map[string]any{"kind": "fix"}); all.Count != 0 {
			t.Errorf("fixes after forget: %v", titles(all))
		}
	})

	t.Run("status_and_context_count_by_kind", func(t *testing.T) {
		var st StatusOutput
		structured(t, e.ok("r2r_status", nil), &st)
		want := map[string]int{"decision": 1, "checkpoint": 2}
		if !mapsEqual(st.Project.Memories, want) {
			t.Errorf("status memories %v, want %v", st.Project.Memories, want)
		}
		pc, err := e.deps.projectContext(context.Background())
		if err != nil || !mapsEqual(pc.Memories, want) {
			t.Errorf("project context memories %v (%v), want %v", pc.Memories, err, want)
		}
	})
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMemoryRefusals: a secret anywhere in a memory is refused with the rule's name and
// no echo, before any request reaches R2R; forget and supersedes act only on memories;
// bad arguments are named.
func TestMemoryRefusals(t *testing.T) {
	e := newEnv(t)
	e.write("docs/guide.md", "# Guide\n\nHow to deploy.\n")
	ing := e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/guide.md", "run_async": false})
	var file IngestOutput
	structured(t, ing, &file)
	key := "ghp_" + strings.Repeat("A1b2", 9)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"body", map[string]any{"kind": "note", "title": "CI token", "body": "The CI token is " + key}},
		{"title", map[string]any{"kind": "note", "title": "token " + key, "body": "b"}},
		{"error", map[string]any{"kind": "fix", "title": "t", "body": "b", "error": "401 for token " + key}},
		{"tag", map[string]any{"kind": "note", "title": "t", "body": "b", "tags": []any{key}}},
		{"path", map[string]any{"kind": "note", "title": "t", "body": "b", "paths": []any{"keys/" + key}}},
		{"base64_body", map[string]any{"kind": "note", "title": "t", "body": base64.StdEncoding.EncodeToString([]byte(key))}},
		{"hex_body", map[string]any{"kind": "note", "title": "t", "body": hex.EncodeToString([]byte(key))}},
		{"escaped_body", map[string]any{"kind": "note", "title": "t", "body": strings.ReplaceAll(key, "_", `\u005f`)}},
		{"zero_width_body", map[string]any{"kind": "note", "title": "t", "body": key[:6] + "\u200b" + key[6:]}},
		{"reversed_body", map[string]any{"kind": "note", "title": "t", "body": reverse(key)}},
		{"two_tags", map[string]any{"kind": "note", "title": "t", "body": "b", "tags": []any{key[:10], key[10:]}}},
	} {
		t.Run("secret_in_"+tc.name, func(t *testing.T) {
			e.r2r.ResetCounts()
			_, info := e.fail("r2r_remember", tc.args)
			if info.Type != refuseSecretInMemory || !strings.Contains(info.Message, "GitHub token") || strings.Contains(info.Message, key) {
				t.Fatalf("refusal %+v", info)
			}
			if c := e.r2r.Counts(); len(c) != 0 {
				t.Fatalf("requests reached R2R: %v", c)
			}
		})
	}
	for _, tc := range []struct {
		name, tool, wantType string
		args                 map[string]any
	}{
		{"forget_a_file", "r2r_forget", refuseNotAMemory, map[string]any{"memory_id": file.DocumentID}},
		{"supersede_a_file", "r2r_remember", refuseNotAMemory, map[string]any{"kind": "note", "title": "t", "body": "b", "supersedes": file.DocumentID}},
		{"error_on_a_note", "r2r_remember", "invalid_params", map[string]any{"kind": "note", "title": "t", "body": "b", "error": "E"}},
		{"path_outside", "r2r_remember", "invalid_params", map[string]any{"kind": "note", "title": "t", "body": "b", "paths": []any{"../other/x.go"}}},
		{"blank_body", "r2r_remember", "invalid_params", map[string]any{"kind": "note", "title": "t", "body": " \n "}},
		{"unknown_short_id", "r2r_forget", "invalid_params", map[string]any{"memory_id": "abcdef12"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, info := e.fail(tc.tool, tc.args)
			if info.Type != tc.wantType {
				t.Fatalf("%s: %+v, want type %s", tc.tool, info, tc.wantType)
			}
		})
	}
	if _, err := e.client.GetDocument(context.Background(), file.DocumentID); err != nil {
		t.Errorf("the ingested file is gone: %v", err)
	}
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// TestRecallIndexIsSmall: ten memories with the longest titles and bodies (multi-byte text,
// some stale) make an index of at most 2,000 bytes as text and as JSON, listing all ten.
func TestRecallIndexIsSmall(t *testing.T) {
	e := newEnv(t)
	for i := range 10 {
		e.remember(map[string]any{"kind": "gotcha", "title": fmt.Sprintf("%d ", i) + strings.Repeat("Überlänge ", 19),
			"body": strings.Repeat("Straße “quoted” <tag> & more ", 240), "paths": []any{"a.go", "b.go", "c.go"}})
	}
	for _, args := range []map[string]any{{}, {"query": "Überlänge Straße quoted"}} {
		res := e.ok("r2r_recall", args)
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var o RecallOutput
		structured(t, res, &o)
		if o.Count != 10 || len(text(res)) > 2000 || len(b) > 2000 {
			t.Errorf("recall %v: %d memories, text %d bytes, JSON %d bytes", args, o.Count, len(text(res)), len(b))
		}
		if o.Memories[0].Title == "" {
			t.Error("titles clipped away")
		}
	}
	ro := Filter(e.list, true)
	names := make([]string, len(ro))
	for i, tl := range ro {
		names[i] = tl.Def.Name
	}
	if !slices.Contains(names, "r2r_recall") || slices.Contains(names, "r2r_remember") || slices.Contains(names, "r2r_forget") {
		t.Errorf("read-only tools %v", names)
	}
}

// TestRecallIndexFits is recallIndex alone on hostile sizes: however long the fields, the
// index stays within the budget for 1 to 20 memories.
func TestRecallIndexFits(t *testing.T) {
	now := time.Now()
	for _, n := range []int{1, 10, 20} {
		ms := make([]memoryFixture, n)
		for i := range ms {
			ms[i] = memoryFixture{title: strings.Repeat("€", 200), excerpt: strings.Repeat("\u200b x ", 100), author: strings.Repeat("a", 300) + "@x"}
		}
		p := recallParams{Limit: n, Query: strings.Repeat("q", 4000)}
		o := recallIndex(fixtureMemories(ms, now), map[string][]string{"id-0": {strings.Repeat("p/", 200), "b", "c"}}, now, p, true)
		b, _ := json.Marshal(o)
		if txt := recallText(o, p, nil); len(b) > recallBudget(n) || len(txt) > recallBudget(n) || o.Count == 0 {
			t.Errorf("%d memories: %d listed, JSON %d, text %d bytes", n, o.Count, len(b), len(txt))
		}
	}
}

type memoryFixture struct{ title, excerpt, author string }

func fixtureMemories(fs []memoryFixture, now time.Time) []memory.Memory {
	out := make([]memory.Memory, len(fs))
	for i, f := range fs {
		out[i] = memory.Memory{ID: fmt.Sprintf("id-%d", i), Kind: memory.KindNote, Title: f.title, Excerpt: f.excerpt,
			Author: f.author, Created: now}
	}
	return out
}

// TestRecallThousandMemories: with 1,000 memories in the project's collection, recall with
// and without a query still lists ten in at most 2,000 bytes as text and as JSON (latency
// is measured on the real R2R: server/e2ereal BenchmarkRealRecall1000).
func TestRecallThousandMemories(t *testing.T) {
	e := newEnv(t)
	first := e.remember(map[string]any{"kind": "note", "title": "first", "body": "the first memory"})
	st := &memory.Store{API: e.client, CollectionID: first.CollectionID}
	me, err := e.deps.Projects.UserID(context.Background(), e.client)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 999 {
		d, err := memory.Normalise(memory.Draft{Kind: memory.TextKinds[i%len(memory.TextKinds)], Title: fmt.Sprintf("Memory %d about service %d", i, i%37),
			Body: fmt.Sprintf("Service %d keeps its state in table t%d; restart it after a schema change.", i%37, i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Remember(context.Background(), d, memory.Stamp{UserID: me, Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range []map[string]any{{"query": "restart service 12 after a schema change"}, {"kind": "checkpoint"}, {}} {
		res := e.ok("r2r_recall", args)
		b, _ := json.Marshal(res.StructuredContent)
		var o RecallOutput
		structured(t, res, &o)
		if o.Count != 10 || len(text(res)) > 2000 || len(b) > 2000 {
			t.Errorf("recall %v: %d listed, text %d bytes, JSON %d bytes", args, o.Count, len(text(res)), len(b))
		}
	}
}

// TestRecallMarksStaleMemories: a memory about a file that changed in a later commit is
// shown as maybe stale, in both forms; one about an unchanged file is not.
func TestRecallMarksStaleMemories(t *testing.T) {
	e := newEnv(t)
	git := func(args ...string) {
		t.Helper()
		if _, err := exec.LookPath("git"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("git is required under CI")
			}
			t.Skip("git is not installed")
		}
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		cmd.Dir = e.project
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.RemoveAll(filepath.Join(e.project, ".git")); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	e.write("db/conn.go", "package db // v1")
	e.write("api/router.go", "package api")
	git("add", "-A")
	git("commit", "-qm", "one")
	e.remember(map[string]any{"kind": "gotcha", "title": "Pool is global", "body": "conn.go keeps one global pool.", "paths": []any{"db/conn.go"}})
	e.remember(map[string]any{"kind": "convention", "title": "Routes in one file", "body": "All routes live in router.go.", "paths": []any{"api/router.go"}})
	e.write("db/conn.go", "package db // v2")
	git("commit", "-qam", "two")
	o, txt := e.recall(map[string]any{})
	stale := map[string]string{}
	for _, m := range o.Memories {
		stale[m.Title] = m.Stale
	}
	if !strings.Contains(stale["Pool is global"], "db/conn.go") || stale["Routes in one file"] != "" || !strings.Contains(txt, "may be stale: db/conn.go") {
		t.Fatalf("stale marks %v\n%s", stale, txt)
	}
}
