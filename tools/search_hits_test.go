package tools

import (
	"strings"
	"testing"
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
