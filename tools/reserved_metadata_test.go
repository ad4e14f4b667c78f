package tools

import (
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestIngestRefusesReservedMetadata: every metadata key r2r-mcp writes or reads back (its
// own document keys, R2R's chunk_order and failure, collection_ids, the team memories'
// keys) is refused in r2r_ingest_document's caller metadata with an error naming it, and
// nothing is sent; a key of the caller's own is kept.
func TestIngestRefusesReservedMetadata(t *testing.T) {
	e := newEnv(t)
	e.write("docs/guide.md", "# Guide\n\nThe walrus ledger settles nightly.\n\n## Payouts\n\nThe heron queue drains.\n")
	for _, key := range []string{"chunk_order", "chunking", "source_path", "content_sha256", "source", "project",
		"ingested_by", "source_root", "source_size_bytes", "collection_ids", "failure", memory.MetaKind, memory.MetaTitle} {
		e.r2r.ResetCounts()
		res := e.call("r2r_ingest_document", map[string]any{"file_path": "docs/guide.md", "run_async": false,
			"metadata": map[string]any{key: 1, "team": "payments"}})
		if msg := text(res); !res.IsError || !strings.Contains(msg, `"`+key+`"`) || !strings.Contains(msg, "metadata") {
			t.Errorf("%s: error %v, %q: want a refusal naming the key", key, res.IsError, msg)
		}
		if n := e.r2r.Count("POST /v3/documents"); n != 0 {
			t.Errorf("%s: %d documents sent", key, n)
		}
		if res.IsError {
			if info, ok := toolerr.Of(res); !ok || info.Code != toolerr.CodeInvalidParams {
				t.Errorf("%s: error info %+v", key, info)
			}
		}
	}
	var ing IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/guide.md", "run_async": false,
		"metadata": map[string]any{"team": "payments"}}), &ing)
	var doc GetDocumentOutput
	structured(t, e.ok("r2r_get_document", map[string]any{"document_id": ing.DocumentID}), &doc)
	if doc.Metadata["team"] != "payments" || doc.Metadata[kbsync.MetaChunking] == nil || !strings.Contains(doc.Text, "heron queue") ||
		!strings.Contains(doc.Text, "walrus ledger") {
		t.Fatalf("document %+v", doc)
	}
}
