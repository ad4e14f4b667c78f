package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestStatusSearchIndexAdvice: r2r_status carries one line of advice when R2R lists many
// chunks and no vector index, and nothing otherwise.
func TestStatusSearchIndexAdvice(t *testing.T) {
	list := func(rows int, withVector bool) string {
		ix := []map[string]any{{"index": map[string]any{"name": "idx_vectors_document_id", "table_name": "chunks",
			"definition": "CREATE INDEX idx_vectors_document_id ON s.chunks USING btree (document_id)", "row_estimate": rows}}}
		if withVector {
			ix = append(ix, map[string]any{"index": map[string]any{"name": "ix_vector_cosine_ops_hnsw__vec_1", "table_name": "chunks",
				"definition": "CREATE INDEX ix_vector_cosine_ops_hnsw__vec_1 ON s.chunks USING hnsw (vec vector_cosine_ops)", "row_estimate": rows}})
		}
		b, _ := json.Marshal(map[string]any{"results": map[string]any{"indices": ix}, "total_entries": len(ix)})
		return string(b)
	}
	tests := []struct {
		name   string
		status int
		body   string
		advice bool
	}{
		{"many chunks, no vector index", 200, list(56020, false), true},
		{"many chunks, HNSW", 200, list(56020, true), false},
		{"few chunks", 200, list(500, false), false},
		{"index list refused", 403, `{"message":"forbidden","error_type":"R2RException"}`, false},
	}
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md", "run_async": false})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.r2r.ForceResponse("GET /v3/indices", tt.status, "application/json", []byte(tt.body), 1)
			res := e.ok("r2r_status", nil)
			var st StatusOutput
			structured(t, res, &st)
			if !st.Project.CollectionExists {
				t.Fatalf("no collection: %+v", st.Project)
			}
			hasLine := strings.Contains(text(res), "Search index: ")
			if (st.SearchIndex != "") != tt.advice || hasLine != tt.advice {
				t.Fatalf("search_index %q, text line %v, want advice %v\n%s", st.SearchIndex, hasLine, tt.advice, text(res))
			}
			if tt.advice && !strings.Contains(st.SearchIndex, fmt.Sprintf("%d chunks", 56020)) {
				t.Errorf("advice %q does not give the count", st.SearchIndex)
			}
		})
	}
}
