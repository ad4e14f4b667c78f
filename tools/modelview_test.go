package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// modelVisibleBytes is what a client hands the model of a tool: its name, description and
// input schema (as compact JSON). The output schema and annotations are for programs.
func modelVisibleBytes(t *testing.T, def mcp.Tool) int {
	t.Helper()
	in, err := json.Marshal(def.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	return len(def.Name) + len(def.Description) + len(in)
}

// TestModelView pins what the model is shown within what clients keep: Claude Code keeps
// the first ClientCapBytes of a tool description, and finds deferred tools by name,
// description and search hint. It logs the sizes per tool (the before/after figures).
func TestModelView(t *testing.T) {
	e := newEnv(t)
	total, listed := 0, 0
	for _, tl := range e.list {
		d := tl.Def
		full, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		n := modelVisibleBytes(t, d)
		total += n
		listed += len(full)
		t.Logf("%-22s model-visible %5d B (description %4d B), tools/list entry %5d B", d.Name, n, len(d.Description), len(full))
		if len(d.Description) > ClientCapBytes {
			t.Errorf("%s: description is %d bytes; clients keep %d", d.Name, len(d.Description), ClientCapBytes)
		}
		for name, p := range d.InputSchema.Properties {
			if desc, _ := p.(map[string]any)["description"].(string); len(desc) > ClientCapBytes {
				t.Errorf("%s.%s: description is %d bytes", d.Name, name, len(desc))
			}
		}
		hint, _ := metaOf(d)[MetaSearchHint].(string)
		if hint == "" || len(hint) > 64 {
			t.Errorf("%s: search hint %q, want a phrase of at most 64 bytes", d.Name, hint)
		}
	}
	t.Logf("all tools: model-visible %d B, tools/list %d B", total, listed)
	for _, p := range Prompts(e.deps, false) {
		if len(p.Prompt.Description) > ClientCapBytes {
			t.Errorf("prompt %s: description is %d bytes", p.Prompt.Name, len(p.Prompt.Description))
		}
	}
}

func metaOf(d mcp.Tool) map[string]any {
	if d.Meta == nil {
		return nil
	}
	return d.Meta.AdditionalFields
}

// A tool that may return more than clients keep by default says how much it may return,
// and that figure holds for its largest result, as text and as the JSON of its structured
// content.
func TestMaxResultChars(t *testing.T) {
	e := newEnv(t)
	want := map[string]int{"r2r_get_document": resultChars(maxMaxChars), "r2r_rag_query": resultChars(ragAnswerChars)}
	for _, tl := range e.list {
		got, _ := metaOf(tl.Def)[MetaMaxResultChars].(int)
		if got != want[tl.Def.Name] {
			t.Errorf("%s: %s = %d, want %d", tl.Def.Name, MetaMaxResultChars, got, want[tl.Def.Name])
		}
	}
	// The worst case for JSON: every character one that JSON escapes (quotes, new lines),
	// longer than a page, with metadata at its budget.
	var b strings.Builder
	for i := 0; b.Len() < 2*maxMaxChars; i++ {
		fmt.Fprintf(&b, "line %d: a \"quoted\" \\ path\n", i) // distinct lines: chunks overlap only where R2R overlaps them
	}
	body := b.String()
	e.write("big.txt", body)
	ing := e.ok("r2r_ingest_document", map[string]any{"file_path": "big.txt", "run_async": false,
		"metadata": map[string]any{"note": strings.Repeat("\\", 4000)}})
	var o struct {
		DocumentID string `json:"document_id"`
	}
	structured(t, ing, &o)
	res := e.ok("r2r_get_document", map[string]any{"document_id": o.DocumentID, "max_chars": maxMaxChars})
	var page struct {
		ReturnedChars int `json:"returned_chars"`
	}
	structured(t, res, &page)
	if page.ReturnedChars < maxMaxChars*9/10 {
		t.Fatalf("the page holds %d characters, want about %d (a full page)", page.ReturnedChars, maxMaxChars)
	}
	js, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	limit := want["r2r_get_document"]
	if n := len([]rune(string(js))); n > limit {
		t.Errorf("structured content is %d characters as JSON, over the declared %d", n, limit)
	}
	if n := len([]rune(text(res))); n > limit {
		t.Errorf("text is %d characters, over the declared %d", n, limit)
	}
	t.Logf("largest r2r_get_document page: %d chars of JSON, %d of text; declared %d", len(js), len([]rune(text(res))), limit)
}
