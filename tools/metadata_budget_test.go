package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestDocumentOutputsBoundedByMetadata: documents whose metadata is huge (a 200 KB title, a
// 500 KB value, a thousand keys, deep nesting; written straight to R2R, which takes them)
// give small results in both forms: r2r_list_documents, r2r_get_document and
// r2r_monitor_task stay within their budgets, cut values end with "…", and
// r2r_get_document says its metadata was shortened.
func TestDocumentOutputsBoundedByMetadata(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &ing)
	title := strings.Repeat("Very long title <&> ", 10000) // 200 KB, escaped characters included
	md := map[string]any{"title": title, "notes": strings.Repeat("x", 500<<10)}
	for i := range 1000 {
		md[fmt.Sprintf("key%04d", i)] = i
	}
	deep := map[string]any{"v": strings.Repeat("d", 1000)}
	for range 10 {
		deep = map[string]any{"next": deep, "list": []any{1, "two", 3.0}}
	}
	md["deep"] = deep
	long := make([]any, 5000)
	for i := range long {
		long[i] = i
	}
	md["long"] = long
	var ids []string
	for i := range 3 {
		res, err := e.client.CreateDocument(t.Context(), r2r.DocumentCreate{RawText: fmt.Sprintf("Payout ledger notes %d.", i),
			Metadata: md, CollectionIDs: []string{ing.CollectionID}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.DocumentID)
	}
	size := func(res any) int {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}

	res := e.ok("r2r_list_documents", map[string]any{})
	t.Logf("list: %d bytes structured, %d text", size(res.StructuredContent), len(text(res)))
	validateStructured(t, e.tools["r2r_list_documents"], res)
	var list ListDocumentsOutput
	structured(t, res, &list)
	if n := size(res.StructuredContent); n > 2500 || len(text(res)) > 2000 || len(list.Documents) != 4 {
		t.Fatalf("list: %d bytes structured, %d text, %d documents", n, len(text(res)), len(list.Documents))
	}
	for _, d := range list.Documents {
		if d.DocumentID != ing.DocumentID && (!strings.HasPrefix(d.Title, "Very long title") || !strings.HasSuffix(d.Title, clipped)) {
			t.Fatalf("list title %q", d.Title)
		}
	}

	res = e.ok("r2r_get_document", map[string]any{"document_id": ids[0]})
	t.Logf("get: %d bytes structured, %d text", size(res.StructuredContent), len(text(res)))
	validateStructured(t, e.tools["r2r_get_document"], res)
	var doc GetDocumentOutput
	structured(t, res, &doc)
	if n := size(res.StructuredContent); n > maxMetadataOutBytes+maxTitleBytes+1500 || len(text(res)) > 1500 ||
		!doc.MetadataCut || size(doc.Metadata) > maxMetadataOutBytes || !utf8.ValidString(doc.Title) {
		t.Fatalf("get: %d bytes structured (metadata %d, cut %v), %d text", n, size(doc.Metadata), doc.MetadataCut, len(text(res)))
	}
	if notes, _ := doc.Metadata["deep"]; notes == nil && doc.Metadata["key0000"] == nil {
		t.Fatalf("nothing of the metadata kept: %v", doc.Metadata)
	}

	res = e.ok("r2r_monitor_task", map[string]any{"document_id": ids[1]})
	if n := size(res.StructuredContent); n > 1200 || len(text(res)) > 1200 {
		t.Fatalf("monitor: %d bytes structured, %d text", n, len(text(res)))
	}
}

// TestClipJSON: a clipped string fits its budget as JSON, escapes counted, on a rune
// boundary, with the mark of the cut; a string that fits is kept.
func TestClipJSON(t *testing.T) {
	for _, tc := range []struct {
		in  string
		max int
	}{
		{"short", 100}, {strings.Repeat("a", 1000), 50}, {strings.Repeat("<>&", 100), 50},
		{strings.Repeat("é漢🙂", 100), 41}, {"\xff\xfe" + strings.Repeat("b", 100), 20}, {strings.Repeat("\"\n", 50), 30},
	} {
		got := clipJSON(tc.in, tc.max)
		b, _ := json.Marshal(got)
		if len(b) > tc.max || !utf8.ValidString(strings.TrimSuffix(got, clipped)) && utf8.ValidString(tc.in) ||
			(got != tc.in) != (jsonStringSize(tc.in) > tc.max) || got != tc.in && !strings.HasSuffix(got, clipped) {
			t.Errorf("clipJSON(%.20q, %d) = %q (%d bytes as JSON)", tc.in, tc.max, got, len(b))
		}
	}
}

// TestCollectionAndDeleteOutputsBounded: a collection with a 100 KB name and description,
// and a document with a 100 KB title and source path, give small listings and deletions.
func TestCollectionAndDeleteOutputsBounded(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &ing)
	huge := strings.Repeat("name <&> ", 12000)
	if _, err := e.client.CreateCollection(t.Context(), huge, huge); err != nil {
		t.Fatal(err)
	}
	res, err := e.client.CreateDocument(t.Context(), r2r.DocumentCreate{RawText: "Payout ledger notes.",
		Metadata: map[string]any{"title": huge, "source_path": huge}, CollectionIDs: []string{ing.CollectionID}})
	if err != nil {
		t.Fatal(err)
	}
	size := func(v any) int {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	list := e.ok("r2r_list_collections", map[string]any{})
	if n := size(list.StructuredContent); n > 2000 || len(text(list)) > 2000 {
		t.Fatalf("collections: %d bytes structured, %d text", n, len(text(list)))
	}
	del := e.call("r2r_delete_document", map[string]any{"document_id": res.DocumentID})
	if n := size(del.StructuredContent); n > 2500 || len(text(del)) > 2500 {
		t.Fatalf("delete: %d bytes structured, %d text", n, len(text(del)))
	}
}
