package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// separators are the characters of TestNoLineSeparatorsReachTheModel: Unicode's line and
// paragraph separators, which break a line where a model or a client's display does not
// expect one.
const separators = "\u2028\u2029"

// TestNoLineSeparatorsReachTheModel: a document whose title, metadata and text hold U+2028
// and U+2029 reaches the model without them, in the text and in the structured content, from
// r2r_get_document, r2r_list_documents and r2r_search (fresh and from the cache).
func TestNoLineSeparatorsReachTheModel(t *testing.T) {
	e := newEnv(t, withCache(t))
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": e.write("docs/seed.md", "# Seed\n\nSeed text.\n"), "run_async": false}), &ing)
	body := "The walrus ledger\u2028settles payouts nightly.\u2029The heron queue drains the walrus backlog."
	doc, err := e.client.CreateDocument(t.Context(), r2r.DocumentCreate{RawText: body, CollectionIDs: []string{ing.CollectionID},
		Metadata: map[string]any{"title": "walrus\u2028ledger\u2029notes.txt", "team": "pay\u2028ments"}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, res *mcp.CallToolResult) {
		t.Helper()
		if strings.ContainsAny(text(res), separators) {
			t.Errorf("%s: the text holds a line separator: %q", name, text(res))
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if b, _ = json.Marshal(v); strings.Contains(string(b), `\u2028`) || strings.Contains(string(b), `\u2029`) {
			t.Errorf("%s: the structured content holds a line separator: %s", name, b)
		}
		if !strings.Contains(text(res), "walrus") {
			t.Errorf("%s: the document is not in the result: %q", name, text(res))
		}
	}
	check("r2r_get_document", e.ok("r2r_get_document", map[string]any{"document_id": doc.DocumentID}))
	check("r2r_list_documents", e.ok("r2r_list_documents", map[string]any{}))
	search := map[string]any{"query": "walrus ledger payouts"}
	check("r2r_search", e.ok("r2r_search", search))
	cached := e.ok("r2r_search", search)
	var so SearchOutput
	if structured(t, cached, &so); !so.Cached {
		t.Errorf("the second search was not served from the cache")
	}
	check("r2r_search (cached)", cached)
}
