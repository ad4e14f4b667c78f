package searchindex

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func entry(name, table, def string, rows int64) r2r.VectorIndexEntry {
	return r2r.VectorIndexEntry{Index: r2r.VectorIndex{Name: name, TableName: table, Definition: def, RowEstimate: rows}}
}

// R2R 3.6.6's own indexes, as GET /v3/indices lists them (conformance test
// TestLive/indices/list_names_the_chunks_tables_own_indexes).
func builtins(rows int64) []r2r.VectorIndexEntry {
	return []r2r.VectorIndexEntry{
		entry("idx_doc_search_s", "documents", "CREATE INDEX idx_doc_search_s ON s.documents USING gin (raw_tsvector)", 3000),
		entry("idx_vectors_document_id", "chunks", "CREATE INDEX idx_vectors_document_id ON s.chunks USING btree (document_id)", rows),
		entry("idx_vectors_text", "chunks", "CREATE INDEX idx_vectors_text ON s.chunks USING gin (to_tsvector('english'::regconfig, text))", rows),
	}
}

func TestFromList(t *testing.T) {
	hnsw := entry("ix_vector_cosine_ops_hnsw__vec_1", "chunks", "CREATE INDEX ix_vector_cosine_ops_hnsw__vec_1 ON s.chunks USING hnsw (vec vector_cosine_ops) WITH (m='16', ef_construction='64')", 56020)
	l2 := entry("ix_vector_l2_ops_hnsw__vec_1", "chunks", "CREATE INDEX ix_vector_l2_ops_hnsw__vec_1 ON s.chunks USING hnsw (vec vector_l2_ops) WITH (m='16', ef_construction='64')", 56020)
	tests := []struct {
		name       string
		list       []r2r.VectorIndexEntry
		wantChunks int64
		wantIndex  string
		needs      bool
	}{
		{"empty R2R", builtins(0), 0, "", false},
		{"small corpus", builtins(Threshold - 1), Threshold - 1, "", false},
		{"large corpus, no vector index", builtins(56020), 56020, "", true},
		{"large corpus, cosine HNSW", append(builtins(56020), hnsw), 56020, hnsw.Index.Name, false},
		{"an L2 index does not serve cosine search", append(builtins(56020), l2), 56020, "", true},
		{"documents table rows are not chunks", builtins(0)[:1], 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := FromList(&r2r.VectorIndexList{Indices: tt.list})
			if v.Chunks != tt.wantChunks || v.Index != tt.wantIndex || v.NeedsIndex() != tt.needs {
				t.Fatalf("verdict %+v needs=%v, want chunks %d index %q needs %v", v, v.NeedsIndex(), tt.wantChunks, tt.wantIndex, tt.needs)
			}
			if adv := v.Advice(); (adv != "") != tt.needs || (tt.needs && !strings.Contains(adv, Command)) {
				t.Errorf("advice %q", adv)
			}
			if v.Summary() == "" {
				t.Error("empty summary")
			}
		})
	}
}

func TestExplain(t *testing.T) {
	forbidden := &r2r.Error{StatusCode: http.StatusForbidden, Message: "Only superusers can do this"}
	if err := Explain(forbidden); !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "Only superusers") {
		t.Errorf("403: %v", err)
	}
	other := &r2r.Error{StatusCode: http.StatusInternalServerError, Message: "boom"}
	if err := Explain(other); errors.Is(err, ErrNotAllowed) || err != error(other) {
		t.Errorf("500: %v", err)
	}
}
