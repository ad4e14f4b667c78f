package tools

import (
	"strings"
	"testing"
)

// TestNoResultsAdvice: a search that finds nothing does not suggest the mode it already used,
// and with filters it says a misspelled field matches nothing and names the fields to use.
func TestNoResultsAdvice(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	got := text(e.ok("r2r_search", map[string]any{"query": "payouts", "filters": map[string]any{"document_typ": "md"}}))
	for _, want := range []string{"No results", `filters (on "document_typ")`, "misspelled field", "document_type, title, source_path"} {
		if !strings.Contains(got, want) {
			t.Errorf("filtered search text lacks %q:\n%s", want, got)
		}
	}
	// The emulator's semantic search, like a vector search, always finds something: the
	// no-filter wording is checked on the text itself.
	sc := &scope{Name: "claude-code-demo-app"}
	got = searchText(SearchOutput{Query: "zzz", SearchMode: "advanced"}, sc)
	if !strings.Contains(got, "No results") || strings.Contains(got, `search_mode "advanced"`) {
		t.Errorf("advanced search with no results: %s", got)
	}
	if got = searchText(SearchOutput{Query: "zzz", SearchMode: "basic"}, sc); !strings.Contains(got, `search_mode "advanced"`) {
		t.Errorf("basic search with no results does not suggest advanced: %s", got)
	}
}
