package conformance

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// keysOf returns the sorted keys of the JSON object at path (dot-separated keys and list
// indexes) inside the body's "results".
func keysOf(t *testing.T, body []byte, path string) []string {
	t.Helper()
	var cur any = object(t, body)["results"]
	if path != "" {
		for _, p := range strings.Split(path, ".") {
			switch x := cur.(type) {
			case map[string]any:
				cur = x[p]
			case []any:
				var i int
				if _, err := fmt.Sscan(p, &i); err != nil || i >= len(x) {
					t.Fatalf("no element %s at %s", p, path)
				}
				cur = x[i]
			default:
				t.Fatalf("cannot descend into %T at %s", cur, path)
			}
		}
	}
	m, ok := cur.(map[string]any)
	if !ok {
		t.Fatalf("%q is %T, not an object", path, cur)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func wantKeys(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", what, got, want)
	}
}

// shapes checks the exact member sets of R2R's objects, so that the emulator sends what R2R
// sends, optional members included (as null).
func (s *suite) shapes(t *testing.T) {
	need(t, s.docText, s.collA)
	get := func(t *testing.T, path string) []byte {
		t.Helper()
		st, _, b := s.raw(t, http.MethodGet, path, s.admin.Credentials(), "", nil)
		if st != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", path, st, b)
		}
		return b
	}
	post := func(t *testing.T, path string, v any) []byte {
		t.Helper()
		st, _, b := s.raw(t, http.MethodPost, path, s.admin.Credentials(), "application/json", mustJSON(t, v))
		if st != http.StatusOK {
			t.Fatalf("POST %s: %d %.300s", path, st, b)
		}
		return b
	}
	t.Run("document", func(t *testing.T) {
		wantKeys(t, "document", keysOf(t, get(t, "/v3/documents/"+s.docText), ""),
			"chunks", "collection_ids", "created_at", "document_type", "extraction_status", "id",
			"ingestion_attempt_number", "ingestion_status", "metadata", "owner_id", "size_in_bytes", "summary",
			"summary_embedding", "title", "total_tokens", "updated_at", "version")
	})
	t.Run("collection", func(t *testing.T) {
		wantKeys(t, "collection", keysOf(t, get(t, "/v3/collections/"+s.collA), ""),
			"created_at", "description", "document_count", "graph_cluster_status", "graph_sync_status", "id",
			"name", "owner_id", "updated_at", "user_count")
	})
	t.Run("user", func(t *testing.T) {
		wantKeys(t, "user", keysOf(t, get(t, "/v3/users/me"), ""),
			"account_type", "bio", "collection_ids", "created_at", "document_ids", "email", "github_id",
			"google_id", "graph_ids", "hashed_password", "id", "is_active", "is_superuser", "is_verified",
			"limits_overrides", "metadata", "name", "num_files", "profile_picture", "total_size_in_bytes",
			"updated_at", "verification_code_expiry")
	})
	t.Run("chunk", func(t *testing.T) {
		b := get(t, "/v3/documents/"+s.docText+"/chunks")
		wantKeys(t, "chunk", keysOf(t, b, "0"), "collection_ids", "document_id", "id", "metadata", "owner_id", "text", "vector")
		wantKeys(t, "chunk metadata", keysOf(t, b, "0.metadata"), "chunk_order", "document_type", "kind", "suite", "title", "version")
	})
	search := r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom, SearchSettings: modeSettings(r2r.SearchModeBasic,
		map[string]any{"document_id": map[string]any{"$eq": s.docText}}, 3)}
	t.Run("search_result", func(t *testing.T) {
		b := post(t, "/v3/retrieval/search", search)
		wantKeys(t, "search result", keysOf(t, b, ""), "chunk_search_results", "document_search_results",
			"generic_tool_result", "graph_search_results", "web_page_search_results", "web_search_results")
		wantKeys(t, "chunk hit", keysOf(t, b, "chunk_search_results.0"),
			"collection_ids", "document_id", "id", "metadata", "owner_id", "score", "text")
		wantKeys(t, "chunk hit metadata", keysOf(t, b, "chunk_search_results.0.metadata"),
			"associated_query", "chunk_order", "document_type", "kind", "suite", "title", "version")
	})
	t.Run("rag_result", func(t *testing.T) {
		req := s.ragRequest("", 256)
		req.SearchSettings.Filters = search.SearchSettings.Filters
		b := post(t, "/v3/retrieval/rag", req)
		wantKeys(t, "rag result", keysOf(t, b, ""), "citations", "completion", "generated_answer", "metadata", "search_results")
		wantKeys(t, "citation", keysOf(t, b, "citations.0"), "id", "is_new", "object", "payload", "source_type", "span")
		wantKeys(t, "citation payload", keysOf(t, b, "citations.0.payload"),
			"collection_ids", "document_id", "id", "metadata", "owner_id", "score", "text")
		md := object(t, b)["results"].(map[string]any)["metadata"].(map[string]any)
		if m, _ := md["model"].(string); m == "" {
			t.Errorf("rag metadata %v: the completion's model is missing", md)
		}
	})
}
