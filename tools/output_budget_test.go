package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestSearchStructuredBudget: 100 hits whose chunks carry their documents' 15 KB metadata
// fit into MaxStructuredBytes, still match the output schema, keep where each chunk comes
// from, and say that they were trimmed.
func TestSearchStructuredBudget(t *testing.T) {
	e := newEnv(t)
	bulky := strings.Repeat("release notes and reviewer comments ", 400) // ~14.8 KB
	for i := range 4 {
		var body strings.Builder
		for j := range 40 {
			fmt.Fprintf(&body, "Section %d of guide %d. Payouts are computed nightly from the ledger; "+
				"each settlement batch is reconciled against the bank statement before release. %s\n\n",
				j, i, strings.Repeat("Details follow. ", 50))
		}
		rel := fmt.Sprintf("docs/guide%d.md", i)
		e.write(rel, body.String())
		e.ok("r2r_ingest_document", map[string]any{"file_path": rel, "run_async": false,
			"metadata": map[string]any{"notes": bulky, "team": "payments", "tags": []any{"a", "b"}}})
	}

	res := e.ok("r2r_search", map[string]any{"query": "how are payouts computed", "limit": 100})
	validateStructured(t, e.tools["r2r_search"], res)
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var o SearchOutput
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	// What the structured content was without the budget: every hit as R2R sent it.
	raw, err := e.client.Search(t.Context(), r2r.SearchRequest{Query: "how are payouts computed", SearchMode: r2r.SearchModeCustom,
		SearchSettings: searchSettings(r2r.SearchModeAdvanced, nil, 100)})
	if err != nil {
		t.Fatal(err)
	}
	untrimmed := SearchOutput{Results: []SearchHit{}}
	for i, c := range raw.ChunkSearchResults {
		untrimmed.Results = append(untrimmed.Results, searchHit(i+1, c))
	}
	t.Logf("100-hit search: %d bytes of structured content (%d without the budget), %d bytes of text; %d hits kept",
		len(b), jsonSize(untrimmed), len(text(res)), o.Count)
	if len(b) > MaxStructuredBytes {
		t.Fatalf("structured content is %d bytes, over the %d budget", len(b), MaxStructuredBytes)
	}
	if o.Count != len(o.Results) || o.Count < 90 || !strings.Contains(o.Note, "trimmed") {
		t.Fatalf("count %d, %d results, note %q", o.Count, len(o.Results), o.Note)
	}
	for _, h := range o.Results {
		if !h.Truncated || h.Metadata["notes"] != nil || h.Metadata["tags"] != nil {
			t.Fatalf("hit %d not trimmed: truncated=%v metadata keys %v", h.Rank, h.Truncated, sortedKeys(h.Metadata))
		}
		if h.Metadata["source_path"] == nil || h.Metadata["title"] == nil || h.Title == "(untitled)" || h.Text == "" || !utf8.ValidString(h.Text) {
			t.Fatalf("hit %d lost its origin: %+v", h.Rank, h.Metadata)
		}
	}

	// A small result keeps its small metadata values and its full (short) text.
	res = e.ok("r2r_search", map[string]any{"query": "how are payouts computed", "limit": 3})
	structured(t, res, &o)
	for _, h := range o.Results {
		if h.Metadata["team"] != "payments" || h.Metadata["notes"] != nil || utf8.RuneCountInString(h.Text) > maxItemTextChars {
			t.Fatalf("hit %d: %v, %d characters", h.Rank, sortedKeys(h.Metadata), utf8.RuneCountInString(h.Text))
		}
	}
}

// TestFitSearch covers fitSearch's steps directly: nothing changes for a small result;
// long text is cut to maxItemTextChars; and when even the shortest texts do not fit,
// hits are left out from the end and Note says so.
func TestFitSearch(t *testing.T) {
	hit := func(rank int, text string, md map[string]any) SearchHit {
		return SearchHit{Rank: rank, ID: fmt.Sprintf("c%d", rank), DocumentID: "d", Title: "t", Text: text,
			CollectionIDs: []string{}, Metadata: md}
	}
	small := SearchOutput{Results: []SearchHit{hit(1, "short text", map[string]any{"title": "t", "n": 1.0})}, Count: 1}
	if got := fitSearch(small, MaxStructuredBytes); got.Note != "" || got.Results[0].Truncated || got.Results[0].Text != "short text" {
		t.Fatalf("small result changed: %+v", got)
	}

	long := SearchOutput{Results: []SearchHit{hit(1, strings.Repeat("é", 5000), map[string]any{"title": "t"})}, Count: 1}
	got := fitSearch(long, MaxStructuredBytes)
	if n := utf8.RuneCountInString(got.Results[0].Text); n != maxItemTextChars || !strings.HasSuffix(got.Results[0].Text, "…") || !got.Results[0].Truncated {
		t.Fatalf("%d characters, truncated %v", n, got.Results[0].Truncated)
	}
	if utf8.RuneCountInString(long.Results[0].Text) != 5000 {
		t.Fatal("fitSearch modified its input (the cache may share it)")
	}

	var many SearchOutput
	for i := range 100 {
		many.Results = append(many.Results, hit(i+1, strings.Repeat("x", 3000), map[string]any{"title": strings.Repeat("t", 500)}))
	}
	many.Count = 100
	got = fitSearch(many, 8<<10)
	if len(got.Results) == 0 || len(got.Results) == 100 || got.Count != len(got.Results) || jsonSize(got) > 8<<10 ||
		!strings.Contains(got.Note, fmt.Sprintf("the last %d hits were left out", 100-len(got.Results))) {
		t.Fatalf("%d results, %d bytes, note %q", len(got.Results), jsonSize(got), got.Note)
	}
}

// TestFitRAG: sources are trimmed (the answer never), and uncited sources go first.
func TestFitRAG(t *testing.T) {
	o := RAGOutput{Answer: strings.Repeat("answer ", 2000), ModelUsed: "m"}
	for i := range 6 {
		o.Sources = append(o.Sources, RAGSource{ID: fmt.Sprintf("s%d", i), Text: strings.Repeat("y", 30000), Cited: i < 2})
	}
	got := fitRAG(o, 24<<10)
	if got.Answer != o.Answer || jsonSize(got) > 24<<10 || len(got.Sources) < 2 || !got.Sources[0].Truncated ||
		!strings.Contains(got.Note, "trimmed") {
		t.Fatalf("%d sources, %d bytes, note %q", len(got.Sources), jsonSize(got), got.Note)
	}
	for _, s := range got.Sources[:2] {
		if !s.Cited {
			t.Fatal("a cited source was dropped before an uncited one")
		}
	}
	if o.Sources[0].Text != strings.Repeat("y", 30000) {
		t.Fatal("fitRAG modified its input")
	}
}
