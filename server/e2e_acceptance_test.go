package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestE2ESearchOutputSize: a 10-hit r2r_search over testdata/docs through the built binary
// answers with at most 4,000 bytes of text, per hit a line with rank, title, section, short
// document id and relevance and a line with its text, and at most 4,000 bytes of
// structuredContent JSON with the same hits, ten distinct documents.
func TestE2ESearchOutputSize(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	if err := emu.SeedInto(r2rtest.AdminEmail, filepath.Join("..", "testdata", "docs"), "claude-code-ledgerline"); err != nil {
		t.Fatal(err)
	}
	proj := servertest.GitProject(t, "ledgerline", nil)
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 60*time.Second)
	for _, c := range clients {
		s := c.connect(ctx, t, p, clientOpts{legacy: true})
		r, err := s.call(ctx, "r2r_search", map[string]any{"query": "payout queue backlog Kafka consumer lag", "limit": 10})
		if err != nil || r.IsError {
			t.Fatalf("%s: search: %v %s", c.name, err, r.Text)
		}
		raw, err := json.Marshal(r.Structured)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Text) > 4000 || len(raw) > 4000 {
			t.Errorf("%s: text is %d bytes, structured %d; want both ≤ 4,000", c.name, len(r.Text), len(raw))
		}
		hitLine := regexp.MustCompile(`(?m)^(\d+)\. (.+?)(?: › (.+))? \(doc ([0-9a-f]{8}), relevance (\d\.\d\d)\)(?:\n   (.{20,}))?$`)
		lines := hitLine.FindAllStringSubmatch(r.Text, -1)
		if len(lines) != 10 {
			t.Fatalf("%s: %d hits, want 10:\n%s", c.name, len(lines), r.Text)
		}
		results, _ := r.Structured["results"].([]any)
		if len(results) != 10 || r.Structured["count"] != float64(10) || r.Structured["cached"] != false {
			t.Fatalf("%s: structured results %d, count %v, cached %v", c.name, len(results), r.Structured["count"], r.Structured["cached"])
		}
		docs := map[any]bool{}
		for i, l := range lines {
			hit := results[i].(map[string]any)
			section, _ := hit["section"].(string)
			text, _ := hit["text"].(string) // lower-ranked hits may come without a window
			if hit["rank"] != float64(i+1) || !strings.HasPrefix(hit["document_id"].(string), l[4]) || docs[hit["document_id"]] ||
				hit["title"] != l[2] || l[2] == "(untitled)" || section != l[3] || text != l[6] || i == 0 && text == "" ||
				fmt.Sprintf("%.2f", hit["relevance"]) != l[5] {
				t.Errorf("%s: hit %d text %q does not match structured %v", c.name, i+1, l[0], hit)
			}
			docs[hit["document_id"]] = true
			for _, k := range []string{"rank", "relevance", "title", "document_id"} {
				if _, ok := hit[k]; !ok {
					t.Errorf("%s: hit %d lacks %q", c.name, i+1, k)
				}
			}
		}
		t.Logf("%s: 10 hits in %d bytes of text, %d bytes of structured JSON", c.name, len(r.Text), len(raw))
		s.close()
		p = servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	}
}

// TestE2EIngestRefusals: through the built binary, r2r_ingest_document refuses every path
// it must not read, each with an isError naming the rule, and R2R receives no upload.
func TestE2EIngestRefusals(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("# outside\n\nnot yours"), 0o644); err != nil {
		t.Fatal(err)
	}
	proj := servertest.GitProject(t, "gamma", map[string]string{
		".env":          "TOKEN=not-a-real-token\n",
		"docs/guide.md": guideText,
	})
	if err := os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(proj, "docs", "link.md")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       []string // all in the text, case-insensitive
	}{
		{"parent escape", "../" + filepath.Base(outside) + "/secret.md", []string{"outside the project"}},
		{"absolute path outside", filepath.Join(outside, "secret.md"), []string{"outside the project"}},
		{"symlink pointing outside", "docs/link.md", []string{"outside the project"}},
		{"proc environ", "/proc/self/environ", []string{"pseudo-filesystem"}},
		{"secret file", ".env", []string{"secret"}},
		{"directory", "docs", []string{"directory"}},
		{"missing file", "docs/nope.md", []string{"does not exist"}},
	}
	p := servertest.Start(t, proj, servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 60*time.Second)
	s := connectMCPGo(ctx, t, p, clientOpts{legacy: true})
	defer s.close()
	for _, tt := range tests {
		r, err := s.call(ctx, "r2r_ingest_document", map[string]any{"file_path": tt.path})
		if err != nil {
			t.Fatalf("%s: protocol error: %v", tt.name, err)
		}
		if !r.IsError {
			t.Errorf("%s: ingest of %s succeeded: %s", tt.name, tt.path, r.Text)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(strings.ToLower(r.Text), w) {
				t.Errorf("%s: text lacks %q:\n%s", tt.name, w, r.Text)
			}
		}
		t.Logf("%s → %s", tt.name, r.Text)
	}
	if n := emu.Count("POST /v3/documents"); n != 0 {
		t.Fatalf("R2R received %d uploads, want 0", n)
	}
}
