package tools

import (
	"strings"
	"testing"
)

// TestIngestAndListAgreeOnSize: r2r_ingest_document, r2r_list_documents and
// r2r_get_document report one size for a file's document, the file's bytes, however it was
// sent (chunked Markdown, text with multi-byte characters, a type sent as text, a file).
func TestIngestAndListAgreeOnSize(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("The walrus ledger settles payouts nightly. ", 40)
	files := map[string]string{
		"docs/guide.md":  "# Guide\n\n" + long + "\n\n## Install\n\n" + long + "\n",
		"docs/notes.txt": "Ünïcödé nötes — " + long,
		"cmd/main.go":    "package main\n\n// Main runs.\nfunc main() {}\n",
		"data/rows.csv":  "a,b\n1,2\n",
	}
	sizes := map[string]int64{}
	for file, content := range files {
		e.write(file, content)
		var ing IngestOutput
		structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": file, "run_async": false}), &ing)
		if ing.SizeBytes != int64(len(content)) {
			t.Errorf("%s: ingest size %d, want the file's %d bytes", file, ing.SizeBytes, len(content))
		}
		sizes[ing.DocumentID] = ing.SizeBytes
		var doc GetDocumentOutput
		structured(t, e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID}), &doc)
		if doc.SizeBytes != ing.SizeBytes {
			t.Errorf("%s: r2r_get_document size %d, ingest %d", file, doc.SizeBytes, ing.SizeBytes)
		}
	}
	var list ListDocumentsOutput
	structured(t, e.ok("r2r_list_documents", map[string]any{}), &list)
	if len(list.Documents) != len(files) {
		t.Fatalf("%d documents listed", len(list.Documents))
	}
	for _, d := range list.Documents {
		if d.SizeBytes != sizes[d.DocumentID] {
			t.Errorf("%s: listed size %d, ingest %d", d.Title, d.SizeBytes, sizes[d.DocumentID])
		}
	}
}
