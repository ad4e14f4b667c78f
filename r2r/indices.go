package r2r

import (
	"context"
	"net/http"
	"strconv"
	"strings"
)

// VectorIndex is one entry of GET /v3/indices. R2R lists every index of its schema whose
// definition mentions "vector" — its own B-tree and GIN indexes on the chunks table
// (idx_vectors_*) as well as vector indexes — so callers classify entries by Definition.
type VectorIndex struct {
	Name       string `json:"name"`
	TableName  string `json:"table_name"`
	Definition string `json:"definition"`
	SizeBytes  int64  `json:"size_in_bytes"`
	// RowEstimate is Postgres's estimate of the rows the index covers (pg_class.reltuples:
	// -1 or 0 until the table was first analyzed).
	RowEstimate int64 `json:"row_estimate"`
}

// IsChunkVectorIndex reports whether the index is an approximate-nearest-neighbour index
// (HNSW or IVFFlat) on the chunks' embedding column with the cosine operator class: the
// measure R2R's semantic search orders by unless a request chooses another.
func (ix VectorIndex) IsChunkVectorIndex() bool {
	d := strings.ToLower(ix.Definition)
	return ix.TableName == "chunks" && (strings.Contains(d, "using hnsw (vec vector_cosine_ops)") ||
		strings.Contains(d, "using ivfflat (vec vector_cosine_ops)"))
}

// VectorIndexList is the result of ListIndices.
type VectorIndexList struct {
	Indices []VectorIndexEntry `json:"indices"`
}

// VectorIndexEntry is how R2R wraps each listed index.
type VectorIndexEntry struct {
	Index VectorIndex `json:"index"`
}

// maxIndexListLimit is R2R's upper bound for GET /v3/indices?limit=.
const maxIndexListLimit = 1000

// ListIndices lists the indexes R2R reports (see VectorIndex), at most 1000. R2R 3.6.6
// answers any authenticated user and lists the whole schema's indexes, not the caller's.
func (c *Client) ListIndices(ctx context.Context) (*VectorIndexList, error) {
	q := map[string][]string{"limit": {strconv.Itoa(maxIndexListLimit)}}
	return result[VectorIndexList](ctx, c, &Call{Op: "list indices", Method: http.MethodGet, Path: "/v3/indices",
		Query: q, Idempotent: true})
}

// CreateChunkVectorIndex asks R2R to build an HNSW index on the chunks' embeddings with the
// cosine measure (R2R's default search measure), concurrently so that ingestion and search
// go on meanwhile. R2R names it and uses pgvector's defaults (m=16, ef_construction=64). R2R builds it inside the request (without an orchestrator),
// so the call lasts as long as the build: ctx must allow minutes on a large corpus.
func (c *Client) CreateChunkVectorIndex(ctx context.Context) error {
	const op = "create vector index"
	body, err := jsonBody(op, map[string]any{
		"config": map[string]any{
			"table_name":    "chunks",
			"index_method":  "hnsw",
			"index_measure": "cosine_distance",
			"index_column":  "vec",
			"concurrently":  true,
		},
		"run_with_orchestration": false,
	})
	if err != nil {
		return err
	}
	var out struct {
		Message string `json:"message"`
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodPost, Path: "/v3/indices",
		Body: body, ContentType: "application/json"}, &out)
}
