package conformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// vectorIndexNames lists the chunk vector indexes (see r2r.VectorIndex.IsChunkVectorIndex).
func vectorIndexNames(t *testing.T, c *r2r.Client) map[string]bool {
	t.Helper()
	l, err := c.ListIndices(t.Context())
	if err != nil {
		t.Fatalf("list indices: %v", err)
	}
	out := map[string]bool{}
	for _, e := range l.Indices {
		if e.Index.IsChunkVectorIndex() {
			out[e.Index.Name] = true
		}
	}
	return out
}

// indices checks R2R's /v3/indices routes, which `r2r-mcp index` and the index advice of
// doctor and r2r_status use.
func (s *suite) indices(t *testing.T) {
	t.Run("list_names_the_chunks_tables_own_indexes", func(t *testing.T) {
		l, err := s.admin.ListIndices(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]r2r.VectorIndex{}
		for _, e := range l.Indices {
			byName[e.Index.Name] = e.Index
		}
		for name, using := range map[string]string{"idx_vectors_document_id": "USING btree (document_id)",
			"idx_vectors_text": "USING gin (to_tsvector('english'::regconfig, text))"} {
			ix, ok := byName[name]
			if !ok || ix.TableName != "chunks" || !strings.HasSuffix(ix.Definition, using) || ix.IsChunkVectorIndex() {
				t.Errorf("%s = %+v, want a chunks index ending in %q that is no vector index", name, ix, using)
			}
		}
	})
	t.Run("anonymous_is_401", func(t *testing.T) {
		wantStatus(t, s.anon.CreateChunkVectorIndex(t.Context()), http.StatusUnauthorized, r2r.ErrUnauthorized)
		_, err := s.anon.ListIndices(t.Context())
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	t.Run("create_without_config_is_422", func(t *testing.T) {
		st, _, body := s.raw(t, http.MethodPost, "/v3/indices", s.admin.Credentials(), "application/json", []byte(`{}`))
		if st != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"loc":["body","config"]`) {
			t.Errorf("POST /v3/indices {} = %d %.300s, want 422 for body.config", st, body)
		}
	})
	// R2R 3.6.6 checks no role on these routes: a regular user builds (and could drop) an
	// index on every user's chunks.
	t.Run("regular_user_creates_cosine_hnsw_index", func(t *testing.T) {
		before := vectorIndexNames(t, s.admin)
		if err := s.user.CreateChunkVectorIndex(t.Context()); err != nil {
			t.Fatalf("create as a regular user: %v", err)
		}
		var created []string
		for name := range vectorIndexNames(t, s.user) {
			if !before[name] {
				created = append(created, name)
			}
		}
		for _, name := range created {
			s.top.Cleanup(func() {
				st, _, body, err := s.send(http.MethodDelete, "/v3/indices/chunks/"+name, s.admin.Credentials(), "", nil)
				if err != nil || st != http.StatusOK {
					t.Logf("dropping index %s: %d %v %.200s", name, st, err, body)
				}
			})
		}
		if len(created) != 1 || !strings.HasPrefix(created[0], "ix_vector_cosine_ops_hnsw__vec_") {
			t.Fatalf("new vector indexes = %v, want one ix_vector_cosine_ops_hnsw__vec_<timestamp>", created)
		}
	})
	t.Run("delete_missing_index_is_500", func(t *testing.T) {
		st, _, body := s.raw(t, http.MethodDelete, "/v3/indices/chunks/ix_missing_"+s.sfx, s.admin.Credentials(), "", nil)
		if st != http.StatusInternalServerError || !strings.Contains(string(body), "does not exist") {
			t.Errorf("DELETE of a missing index = %d %.300s, want 500 ... does not exist", st, body)
		}
	})
}
