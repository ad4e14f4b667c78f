package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/chunking"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestIngestWithContext: a Markdown file r2r-mcp chunks itself is found with the heading
// path its chunk carries as the hit's section, and r2r_get_document reads it back without
// the context lines.
func TestIngestWithContext(t *testing.T) {
	e := newEnv(t)
	filler := strings.Repeat("Background that is not about the question at all. ", 12)
	e.write("docs/guide.md", "# Guide\n\n"+filler+"\n\n## Install\n\n"+filler+"\n\n### Linux\n\nRun apt install zebra-tools to set up the zebra service.\n")
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/guide.md", "run_async": false}), &ing)
	var so SearchOutput
	structured(t, e.ok("r2r_search", map[string]any{"query": "how do I install the zebra service on linux"}), &so)
	if so.Count != 1 || so.Results[0].Section != "Guide › Install › Linux" || !strings.Contains(so.Results[0].Text, "apt install zebra-tools") ||
		strings.Contains(so.Results[0].Text, "§") {
		t.Fatalf("search = %+v", so.Results)
	}
	var doc GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID}), &doc)
	if strings.Contains(doc.Text, "§ docs/guide.md") || !strings.Contains(doc.Text, "## Install") {
		t.Fatalf("document text:\n%s", doc.Text)
	}
}

// TestGetDocumentOrdersMadeChunks: R2R 3.6.6 keeps no chunk_order for the chunks r2r-mcp
// sends, so it may list them in any order; r2r_get_document reads such a document whole and
// puts the chunks back in the order of their part numbers.
func TestGetDocumentOrdersMadeChunks(t *testing.T) {
	reverse := func(next r2r.Handler) r2r.Handler {
		return func(ctx context.Context, c *r2r.Call) (*r2r.Response, error) {
			res, err := next(ctx, c)
			if err != nil || c.Method != http.MethodGet || !strings.HasSuffix(c.Path, "/chunks") {
				return res, err
			}
			var page map[string]any
			if err := json.Unmarshal(res.Body, &page); err != nil {
				return nil, err
			}
			items, _ := page["results"].([]any)
			slices.Reverse(items)
			out := *res
			out.Body, _ = json.Marshal(page)
			return &out, nil
		}
	}
	e := newEnv(t, withMiddleware(reverse))
	var b strings.Builder
	b.WriteString("# Long guide\n\n")
	for i := range 120 {
		fmt.Fprintf(&b, "Paragraph %03d of the guide says something about step %d of the set-up.\n\n", i, i)
	}
	e.write("docs/long.md", b.String())
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/long.md", "run_async": false}), &ing)
	e.r2r.ResetCounts()
	var doc GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID, "max_chars": 500}), &doc)
	if doc.ChunkCount < 5 || !doc.TotalCharsExact || !strings.HasPrefix(doc.Text, "# Long guide\n\nParagraph 000 ") {
		t.Fatalf("first page %+v", doc)
	}
	if n, lim := e.r2r.Count("GET /v3/documents/{id}/chunks"), e.r2r.LastRequest("GET /v3/documents/{id}/chunks").Query.Get("limit"); n != 1 || lim != "1000" {
		t.Fatalf("%d chunk pages, limit %s", n, lim)
	}
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID, "max_chars": 50_000}), &doc)
	last := -1
	for _, l := range strings.Split(doc.Text, "\n") {
		var n int
		if _, err := fmt.Sscanf(l, "Paragraph %d", &n); err == nil {
			if n != last+1 {
				t.Fatalf("paragraph %d after %d", n, last)
			}
			last = n
		}
	}
	if last != 119 || strings.Contains(doc.Text, "§") {
		t.Fatalf("last paragraph %d; text %.200q", last, doc.Text)
	}
}

// TestGetDocumentKeepsChunksOfOnePart: two chunks of a document r2r-mcp chunked may carry the
// same part number (a document written to R2R by hand, or two syncs' chunks); each is one
// chunk, known by its id, so r2r_get_document keeps both, as search finds both.
func TestGetDocumentKeepsChunksOfOnePart(t *testing.T) {
	e := newEnv(t)
	chunks := []string{"§ docs/a.md ¶1\nThe walrus ledger opens.", "§ docs/a.md ¶1\nThe narwhal ledger closes.", "§ docs/a.md ¶2\nThe heron settles."}
	res, err := e.client.CreateDocument(context.Background(), r2r.DocumentCreate{Chunks: chunks,
		Metadata: map[string]any{"title": "docs/a.md", kbsync.MetaChunking: chunking.Version}})
	if err != nil {
		t.Fatal(err)
	}
	var doc GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": res.DocumentID}), &doc)
	for _, want := range []string{"walrus", "narwhal", "heron"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("%q missing from %q", want, doc.Text)
		}
	}
}

// TestSectionOfFileNamedWithSeparator: a file whose name holds the heading path's
// separator " › " gives its hits the section of its headings, not a part of its name.
func TestSectionOfFileNamedWithSeparator(t *testing.T) {
	filler := strings.Repeat("Background that is not about the question at all. ", 12)
	for _, file := range []string{"docs/plain.md", "docs/notes › 2024.md", "docs/a › b › c.md", "docs/ › lead.md", "docs/tail ›.md"} {
		t.Run(file, func(t *testing.T) {
			e := newEnv(t)
			e.write(file, "# Guide\n\n"+filler+"\n\n## Install\n\nRun apt install zebra-tools to set up the zebra service.\n")
			e.ok("r2r_ingest_document", map[string]any{"file_path": file, "run_async": false})
			var so SearchOutput
			structured(t, e.ok("r2r_search", map[string]any{"query": "install the zebra service"}), &so)
			if so.Count != 1 || so.Results[0].Section != "Guide › Install" {
				t.Fatalf("search = %+v", so.Results)
			}
		})
	}
}
