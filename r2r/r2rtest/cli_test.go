package r2rtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := ParseFlags([]string{"--addr", "127.0.0.1:0", "--seed", "dir", "--auth", "--latency", "200ms",
		"--fail-rate", "0.3", "--token-ttl", "2s", "--ingest-delay", "300ms", "--rate-limit", "5", "--time-format", "naive"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Options
	if cfg.Addr != "127.0.0.1:0" || cfg.SeedDir != "dir" || !o.RequireAuth || o.Latency != 200*time.Millisecond ||
		o.FailRate != 0.3 || o.TokenTTL != 2*time.Second || o.IngestDelay != 300*time.Millisecond || o.RateLimit != 5 ||
		o.TimeFormat != TimeFormatNaive {
		t.Fatalf("%+v", cfg)
	}
	cfg, err = ParseFlags(nil, &stderr)
	if err != nil || cfg.Addr != "127.0.0.1:7272" || cfg.Options.RequireAuth || cfg.Options.TimeFormat != TimeFormatZ {
		t.Fatalf("defaults %+v %v", cfg, err)
	}
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--fail-rate", "2"}, {"--latency", "soon"}, {"--time-format", "iso"}} {
		if _, err := ParseFlags(args, &stderr); err == nil {
			t.Fatalf("%v accepted", args)
		}
	}
	if code := Main(context.Background(), []string{"--bogus"}, &stderr); code != 2 {
		t.Fatalf("exit code %d", code)
	}
	if code := Main(context.Background(), []string{"-h"}, &stderr); code != 0 {
		t.Fatalf("help exit code %d", code)
	}
	if code := Main(context.Background(), []string{"--addr", "256.0.0.1:1"}, &stderr); code != 1 {
		t.Fatalf("bad address exit code %d", code)
	}
}

func writeDocs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// startCLI runs the emulator the way r2r-emulator does, on a free loopback port.
func startCLI(t *testing.T, args ...string) (base string, stderr *SyncBuffer) {
	t.Helper()
	stderr = &SyncBuffer{}
	cfg, err := ParseFlags(append([]string{"--addr", "127.0.0.1:0"}, args...), stderr)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Setup(cfg, stderr)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, e, ln, stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if !strings.Contains(stderr.String(), "r2r-emulator: stopped") {
			t.Errorf("no clean shutdown in log:\n%s", stderr.String())
		}
	})
	return "http://" + ln.Addr().String(), stderr
}

func TestRunnableEmulatorSeeded(t *testing.T) {
	dir := writeDocs(t, map[string]string{
		"runbooks/db.md":   "# Database failover\n\nPromote the replica when the primary stops answering health checks.",
		"notes/tea.txt":    "Green tea should steep for two minutes at eighty degrees.",
		"adr/0001.md":      "We chose Postgres for the ledger because of transactional guarantees.",
		"bin/blob.exe":     "unsupported",
		".hidden/skip.txt": "hidden files are skipped",
	})
	base, stderr := startCLI(t, "--seed", dir)
	c := &tc{t: t, base: base}

	r := c.get("/v3/health")
	if r.status != 200 || string(r.raw) != `{"results":{"message":"ok"}}` {
		t.Fatalf("health %d %s", r.status, r.raw)
	}
	docs := c.get("/v3/documents")
	if docs.body["total_entries"] != float64(3) {
		t.Fatalf("seeded %s\nlog:\n%s", docs.raw, stderr.String())
	}
	hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "steep green tea for two minutes"}))
	if want := uuid5("notes_tea.txt-" + uuid5(AdminEmail)); hits[0]["document_id"] != want {
		t.Fatalf("first hit %v, want document %s", hits[0], want)
	}
	log := stderr.String()
	if !strings.Contains(log, "'exe' is not a valid DocumentType") || !strings.Contains(log, "GET /v3/health 200") ||
		!strings.Contains(log, "listening on http://127.0.0.1:") {
		t.Fatalf("log:\n%s", log)
	}
}

func TestRunnableEmulatorAuth(t *testing.T) {
	dir := writeDocs(t, map[string]string{"a.md": "Seeded as the dev user."})
	base, stderr := startCLI(t, "--auth", "--seed", dir)
	c := &tc{t: t, base: base}
	if !strings.Contains(stderr.String(), DevEmail+" / "+DevPassword) {
		t.Fatalf("log:\n%s", stderr.String())
	}
	wantStatus(t, c.get("/v3/documents"), 401)
	access, _ := c.login(DevEmail, DevPassword)
	r := c.with(access).get("/v3/documents")
	if r.body["total_entries"] != float64(1) || r.list()[0].(map[string]any)["owner_id"] != uuid5(DevEmail) {
		t.Fatalf("%s", r.raw)
	}
	if err := New(Options{}).Seed("nobody@example.com", dir); err == nil {
		t.Fatal("seeding as an unknown user succeeded")
	}
	if err := New(Options{}).Seed(AdminEmail, filepath.Join(dir, "missing")); err == nil {
		t.Fatal("seeding a missing dir succeeded")
	}
	e := New(Options{})
	if err := e.Seed(AdminEmail, dir); err != nil {
		t.Fatal(err)
	}
	if err := e.Seed(AdminEmail, dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second seed: %v", err)
	}
}

// TestSeededProjectDocs checks that, for the shared test corpus, a phrase from each document
// finds a chunk of that document first.
func TestSeededProjectDocs(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	raw, err := os.ReadFile(filepath.Join(root, "docs-phrases.json"))
	if err != nil {
		t.Skip("testdata/docs-phrases.json not present")
	}
	var phrases []struct{ File, Phrase string }
	if err := json.Unmarshal(raw, &phrases); err != nil {
		t.Fatal(err)
	}
	s := NewServer(t, Options{})
	if err := s.Seed(AdminEmail, filepath.Join(root, "docs")); err != nil {
		t.Fatal(err)
	}
	c := newTC(t, s)
	for _, p := range phrases {
		t.Run(p.File, func(t *testing.T) {
			hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": p.Phrase}))
			want := uuid5(strings.ReplaceAll(p.File, "/", "_") + "-" + uuid5(AdminEmail))
			if len(hits) == 0 || hits[0]["document_id"] != want {
				var got any = "nothing"
				if len(hits) > 0 {
					got = hits[0]["document_id"]
				}
				t.Fatalf("phrase %q: first hit is %v, want %s", p.Phrase, got, want)
			}
		})
	}
}

// TestREADMEQuestion is the README's try-it question against the seeded corpus: the payout
// queue runbook ranks first, and the RAG answer quotes it (not the Kafka-vs-SQS ADR), with its
// citation.
func TestREADMEQuestion(t *testing.T) {
	s := NewServer(t, Options{})
	if err := s.Seed(AdminEmail, filepath.Join("..", "..", "testdata", "docs")); err != nil {
		t.Fatal(err)
	}
	c := newTC(t, s)
	const question = "What do we do when the payout queue backs up?"
	runbook := uuid5("runbooks_payout-queue-backlog.md-" + uuid5(AdminEmail))
	hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": question}))
	if len(hits) == 0 || hits[0]["document_id"] != runbook {
		t.Fatalf("first hit %v, want the payout queue runbook %s", hits[0]["metadata"], runbook)
	}
	r := c.postJSON("/v3/retrieval/rag", map[string]any{"query": question})
	wantStatus(t, r, 200)
	res := r.results()
	answer := res["generated_answer"].(string)
	cits := res["citations"].([]any)
	if len(cits) == 0 {
		t.Fatalf("answer %q cites nothing", answer)
	}
	first := cits[0].(map[string]any)["payload"].(map[string]any)
	if first["document_id"] != runbook || strings.Contains(answer, "SQS") || !strings.Contains(strings.ToLower(answer), "payout") {
		t.Fatalf("answer %q, first citation from %v: want the runbook's own sentences", answer, first["document_id"])
	}
	t.Logf("answer: %s", answer)
}

func TestRunnableEmulatorSeedsIntoNamedCollection(t *testing.T) {
	dir := writeDocs(t, map[string]string{
		"a.md": "# Payout backlog\n\nDrain the payout queue before paging the bank.",
		"b.md": "# Signing keys\n\nRotate signing keys every ninety days.",
	})
	base, stderr := startCLI(t, "--seed", dir, "--seed-collection", "claude-code-demo")
	c := &tc{t: t, base: base}
	r := c.get("/v3/collections/name/claude-code-demo")
	if r.status != 200 {
		t.Fatalf("collection by name: %d %s\nlog:\n%s", r.status, r.raw, stderr.String())
	}
	col := r.body["results"].(map[string]any)
	if col["document_count"] != float64(2) {
		t.Fatalf("collection %v, want 2 documents", col)
	}
	// A search scoped to that collection, as r2r-mcp sends it, finds the seeded document.
	hits := searchHits(t, c.postJSON("/v3/retrieval/search", map[string]any{"query": "drain the payout queue",
		"search_settings": map[string]any{"filters": map[string]any{"collection_ids": map[string]any{"$overlap": []any{col["id"]}}}}}))
	if want := uuid5("a.md-" + uuid5(AdminEmail)); len(hits) == 0 || hits[0]["document_id"] != want {
		t.Fatalf("hits %v, want %s first", hits, want)
	}
	if !strings.Contains(stderr.String(), "into collection claude-code-demo") {
		t.Fatalf("log:\n%s", stderr.String())
	}
}
