package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/tools/passage"
)

// TestSearchStructuredBudget: hits whose chunks carry their documents' 15 KB metadata give
// compact structured content: 10 hits within 4,000 bytes as JSON and as text, 100 hits
// within their budget, one hit per document, each with its title, document id and text.
func TestSearchStructuredBudget(t *testing.T) {
	e := newEnv(t)
	bulky := strings.Repeat("release notes and reviewer comments ", 400) // ~14.8 KB
	const docs = 14
	for i := range docs {
		var body strings.Builder
		for j := range 12 {
			fmt.Fprintf(&body, "Section %d of guide %d. Payouts are computed nightly from the ledger; "+
				"each settlement batch is reconciled against the bank statement before release. %s\n\n",
				j, i, strings.Repeat("Details follow. ", 50))
		}
		rel := fmt.Sprintf("docs/guide%d.md", i)
		e.write(rel, body.String())
		e.ok("r2r_ingest_document", map[string]any{"file_path": rel, "run_async": false,
			"metadata": map[string]any{"notes": bulky, "team": "payments", "tags": []any{"a", "b"}}})
	}
	for _, tc := range []struct{ limit, budget int }{{10, 4000}, {100, 100 * searchBytesPerHit}, {3, 4000}} {
		res := e.ok("r2r_search", map[string]any{"query": "how are payouts computed", "limit": tc.limit})
		validateStructured(t, e.tools["r2r_search"], res)
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var o SearchOutput
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d-hit search: %d bytes structured, %d bytes text", o.Count, len(b), len(text(res)))
		if len(b) > tc.budget || (tc.limit <= 10 && len(text(res)) > 4000) {
			t.Fatalf("limit %d: structured %d bytes (budget %d), text %d bytes", tc.limit, len(b), tc.budget, len(text(res)))
		}
		if o.Count != len(o.Results) || o.Count > tc.limit || o.Count == 0 {
			t.Fatalf("limit %d: count %d, %d results, note %q", tc.limit, o.Count, len(o.Results), o.Note)
		}
		seen := map[string]bool{}
		for _, h := range o.Results {
			if h.Title == untitled || seen[h.DocumentID] ||
				h.Rank == 1 && h.Text == "" || !utf8.ValidString(h.Text) || utf8.RuneCountInString(h.Text) > windowChars[0] {
				t.Fatalf("limit %d: hit %+v", tc.limit, h)
			}
			seen[h.DocumentID] = true
		}
	}
}

// TestFitHits covers fitHits directly, with titles of up to 200 KB: shorter windows for a
// smaller budget, and when even the shortest do not fit, hits left out from the end with a
// note. The counted size always equals the encoded size, and both forms fit.
func TestFitHits(t *testing.T) {
	chunks, titles := fitTestDocs(20, func(i int) (string, string) {
		return strings.Repeat("A payout <ledger> & \"quotes\" \u2028 ünïcödé. ", 40),
			fmt.Sprintf("docs/guide %d <draft>.md", i) + strings.Repeat("t", i*10000)
	})
	for _, budget := range []int{100000, 8000, 3000} {
		o := SearchOutput{Query: "payout ledger", SearchMode: "advanced", Limit: 20, CollectionID: "c", CollectionName: "n"}
		textSize := testTextSize(&o)
		o.Results = fitHits(&o, passage.New(o.Query, chunks, 20), titles, budget, textSize)
		o.Count = len(o.Results)
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != o.jsonSize() {
			t.Fatalf("budget %d: counted %d bytes, encoded %d", budget, o.jsonSize(), len(b))
		}
		if len(b) > budget || textSize(o.Results) > budget {
			t.Fatalf("budget %d: %d bytes, text %d", budget, len(b), textSize(o.Results))
		}
		if (o.Count < 20) != (o.Note != "") {
			t.Fatalf("budget %d: %d hits, note %q", budget, o.Count, o.Note)
		}
		if o.Results[0].Relevance != 1 || o.Count > 1 && o.Results[1].Relevance != 0.75 {
			t.Fatalf("budget %d: relevances %v, %v", budget, o.Results[0].Relevance, o.Results[1].Relevance)
		}
	}
}

// TestFitHitsGivesTheRoomToTheBest: in 4,000 bytes, ten documents are all listed, the best
// ones with windows, longest first, and the lower-ranked ones whose window would be under
// minPassageChars without one (they come after every hit with a window).
func TestFitHitsGivesTheRoomToTheBest(t *testing.T) {
	chunks, titles := fitTestDocs(10, func(i int) (string, string) {
		return fmt.Sprintf("Guide %d. ", i) + strings.Repeat("Payouts settle nightly against the ledger. ", 50), fmt.Sprintf("docs/guide%d.md", i)
	})
	o := SearchOutput{Query: "payout ledger", SearchMode: "advanced", Limit: 10, CollectionID: "c", CollectionName: "n"}
	textSize := testTextSize(&o)
	o.Results = fitHits(&o, passage.New(o.Query, chunks, 10), titles, 4000, textSize)
	o.Count = len(o.Results)
	if b, _ := json.Marshal(o); len(b) != o.jsonSize() || len(b) > 4000 || textSize(o.Results) > 4000 {
		t.Fatalf("counted %d bytes, encoded %d, text %d", o.jsonSize(), len(b), textSize(o.Results))
	}
	if o.Count != 10 || o.Note != "" {
		t.Fatalf("%d hits, note %q", o.Count, o.Note)
	}
	windows := 0
	for i, h := range o.Results {
		n := utf8.RuneCountInString(h.Text)
		switch {
		case n == 0:
		case windows < i:
			t.Fatalf("hit %d has a window after a hit without one", i+1)
		case i > 0 && (n < minPassageChars*3/4 || n > utf8.RuneCountInString(o.Results[i-1].Text)):
			t.Fatalf("hit %d's window is %d characters after %d", i+1, n, utf8.RuneCountInString(o.Results[i-1].Text))
		default:
			windows++
		}
	}
	if windows < 2 || windows == 10 || utf8.RuneCountInString(o.Results[0].Text) < 1000 {
		t.Fatalf("%d windows, the first %d characters", windows, utf8.RuneCountInString(o.Results[0].Text))
	}
}

// fitTestDocs are n documents of one chunk each, scored in order, with the text and title
// doc gives.
func fitTestDocs(n int, doc func(i int) (text, title string)) (chunks []passage.Chunk, titles []string) {
	for i := range n {
		text, title := doc(i)
		chunks = append(chunks, passage.Chunk{DocumentID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Score: 1 / float64(i+3), Text: text})
		titles = append(titles, title)
	}
	return chunks, titles
}

// testTextSize measures the text form of o with other hits, as r2r_search's does.
func testTextSize(o *SearchOutput) func([]SearchHit) int {
	return func(h []SearchHit) int {
		t := *o
		t.Results, t.Count = h, len(h)
		return len(searchText(t, &scope{ID: "c", Name: "n"}))
	}
}

// TestJSONSizes: the counted sizes of strings and scores equal encoding/json's.
func TestJSONSizes(t *testing.T) {
	for _, s := range []string{"", "plain", "<a & b>", "quote \" back \\ nl \n tab \t cr \r", "\x01\x1f",
		"ünïcödé 日本", "\u2028\u2029", "bad \xff utf8"} {
		b, _ := json.Marshal(s)
		if got := jsonStringSize(s); got != len(b) {
			t.Errorf("jsonStringSize(%q) = %d, want %d", s, got, len(b))
		}
	}
	for _, f := range []float64{0, 1, 0.5, 0.12345678, 1e-7, 1e21, 123456789, -0.25, math.SmallestNonzeroFloat64} {
		b, _ := json.Marshal(f)
		if got := jsonFloatSize(f); got != len(b) {
			t.Errorf("jsonFloatSize(%v) = %d, want %d", f, got, len(b))
		}
	}
	r := RAGOutput{Answer: "a <b> [abc1234]", Question: "q", ModelUsed: "m", CollectionID: "c", Note: "n", Cached: true,
		Sources: []RAGSource{{ID: "abc1234", Title: "t", DocumentID: "d", URI: "r2r://documents/d", Score: 0.5, Cited: true}, {ID: "x"}}}
	if b, _ := json.Marshal(r); len(b) != r.jsonSize() {
		t.Errorf("RAGOutput: counted %d, encoded %d", r.jsonSize(), len(b))
	}
}
