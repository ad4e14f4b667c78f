package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestTitlesOfDocumentsIngestedElsewhere: documents put into R2R by other means carry no
// title in their chunks' metadata; search and RAG show the documents' own titles.
func TestTitlesOfDocumentsIngestedElsewhere(t *testing.T) {
	for _, listFails := range []bool{false, true} {
		name := "titles looked up"
		if listFails {
			name = "lookup fails: untitled, result intact"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, withProjectName("demo-app"))
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "runbooks"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "runbooks", "payout-backlog.md"),
				[]byte("# Payout backlog\n\nScale the payout workers when the payout queue backs up."), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := e.r2r.SeedInto(r2rtest.AdminEmail, dir, "claude-code-demo-app"); err != nil {
				t.Fatal(err)
			}
			want := "payout-backlog.md"
			if listFails {
				e.r2r.ForceStatus("GET /v3/collections/{id}/documents", 503, 10)
				e.r2r.ForceStatus("GET /v3/documents", 503, 10)
				want = untitled
			}

			var so SearchOutput
			structured(t, e.ok("r2r_search", map[string]any{"query": "payout queue backs up"}), &so)
			if so.Count == 0 || so.Results[0].Title != want {
				t.Fatalf("search hits %+v, want title %q", so.Results, want)
			}
			var ro RAGOutput
			structured(t, e.ok("r2r_rag_query", map[string]any{"question": "What if the payout queue backs up?"}), &ro)
			if len(ro.Sources) == 0 || ro.Sources[0].Title != want {
				t.Fatalf("rag sources %+v, want document %q", ro.Sources, want)
			}
		})
	}
}
