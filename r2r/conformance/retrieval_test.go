package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// scoped and modeSettings are exactly what r2r-mcp's tools send.
var (
	scoped       = r2r.ScopedFilters
	modeSettings = r2r.ModeSettings
)

const query = "pelican migration"

func (s *suite) searchDocs(t *testing.T, c *r2r.Client, filters map[string]any, limit int) []r2r.ChunkSearchResult {
	t.Helper()
	res, err := c.Search(t.Context(), r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
		SearchSettings: modeSettings(r2r.SearchModeBasic, filters, limit)})
	if err != nil {
		t.Fatal(err)
	}
	return res.ChunkSearchResults
}

// hitsOnly asserts that there are hits and that all of them come from the given documents.
func hitsOnly(t *testing.T, hits []r2r.ChunkSearchResult, docs ...string) {
	t.Helper()
	if len(hits) == 0 {
		t.Fatalf("no hits; want hits from %v", docs)
	}
	for _, h := range hits {
		if !slices.Contains(docs, h.DocumentID) {
			t.Errorf("hit from document %s, want only %v", h.DocumentID, docs)
		}
	}
}

func (s *suite) search(t *testing.T) {
	need(t, s.collA, s.docText, s.docFile, s.docOther, s.docDerived)
	inA := []string{s.docText, s.docFile}
	for _, mode := range []string{r2r.SearchModeBasic, r2r.SearchModeAdvanced, r2r.SearchModeCustom} {
		t.Run("mode_"+mode+"_collection_scope", func(t *testing.T) {
			res, err := s.admin.Search(t.Context(), r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
				SearchSettings: modeSettings(mode, scoped(s.collA, nil), 10)})
			if err != nil {
				t.Fatal(err)
			}
			hitsOnly(t, res.ChunkSearchResults, inA...)
			for _, h := range res.ChunkSearchResults {
				if !isUUID(h.ID) || h.Text == "" || h.OwnerID != s.adminID || !slices.Contains(h.CollectionIDs, s.collA) {
					t.Errorf("hit %+v", h)
				}
				if h.Metadata == nil {
					t.Errorf("hit %s has no metadata", h.ID)
				}
			}
		})
	}
	t.Run("envelope", func(t *testing.T) {
		body := mustJSON(t, r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
			SearchSettings: modeSettings(r2r.SearchModeBasic, scoped(s.collA, nil), 3)})
		st, _, b := s.raw(t, http.MethodPost, "/v3/retrieval/search", s.admin.Credentials(), "application/json", body)
		if st != http.StatusOK {
			t.Fatalf("status %d: %.300s", st, b)
		}
		var env struct {
			Results struct {
				Chunks []map[string]any `json:"chunk_search_results"`
				Graph  json.RawMessage  `json:"graph_search_results"`
			} `json:"results"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		if g := bytes.TrimSpace(env.Results.Graph); len(g) == 0 || g[0] != '[' {
			t.Errorf("graph_search_results %s, want a list", g)
		}
		for _, c := range env.Results.Chunks {
			for _, k := range []string{"id", "document_id", "owner_id", "collection_ids", "score", "text", "metadata"} {
				if _, ok := c[k]; !ok {
					t.Errorf("chunk hit without %q: %v", k, c)
				}
			}
		}
	})
	t.Run("hit_metadata_carries_title", func(t *testing.T) {
		hits := s.searchDocs(t, s.admin, scoped(s.collA, map[string]any{"document_id": map[string]any{"$eq": s.docFile}}), 10)
		hitsOnly(t, hits, s.docFile)
		for _, h := range hits {
			if h.Metadata["title"] != s.fileTitle() {
				t.Errorf("hit metadata title %v, want %q", h.Metadata["title"], s.fileTitle())
			}
		}
	})
	// R2R puts the title in front of a hit's text when the chunk metadata has one (r2r-mcp's
	// tools strip it again).
	t.Run("hit_text_is_titled_chunk_text", func(t *testing.T) {
		p, err := s.admin.ListDocumentChunks(t.Context(), s.docText, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{}
		for _, c := range p.Items {
			texts[c.ID] = c.Text
		}
		hits := s.searchDocs(t, s.admin, map[string]any{"document_id": map[string]any{"$eq": s.docText}}, 10)
		hitsOnly(t, hits, s.docText)
		for _, h := range hits {
			want := "Document Title: conf-" + s.sfx + "-notes\n\nText: " + texts[h.ID]
			if _, ok := texts[h.ID]; !ok || h.Text != want {
				t.Errorf("hit %s text %q, want %q", h.ID, h.Text, want)
			}
		}
	})
	t.Run("filter_metadata_eq_reaches_all_collections", func(t *testing.T) {
		hits := s.searchDocs(t, s.admin, map[string]any{"suite": map[string]any{"$eq": s.sfx}}, 50)
		hitsOnly(t, hits, s.docText, s.docFile, s.docOther, s.docDerived)
		got := ids(hits, func(h r2r.ChunkSearchResult) string { return h.DocumentID })
		if !slices.Contains(got, s.docOther) {
			t.Errorf("hits %v miss %s, which is outside the collection", got, s.docOther)
		}
	})
	t.Run("filter_ne", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, scoped(s.collA, map[string]any{"kind": map[string]any{"$ne": "a"}}), 10), s.docFile)
	})
	t.Run("filter_in", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, scoped(s.collA, map[string]any{"kind": map[string]any{"$in": []any{"a", "zzz"}}}), 10), s.docText)
	})
	t.Run("filter_like_title", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, map[string]any{"$and": []any{
			map[string]any{"suite": map[string]any{"$eq": s.sfx}},
			map[string]any{"title": map[string]any{"$like": "%" + s.sfx + "-guide%"}},
		}}, 10), s.docFile)
	})
	t.Run("filter_document_id_in", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, map[string]any{"document_id": map[string]any{"$in": []any{s.docOther, s.docDerived}}}, 10),
			s.docOther, s.docDerived)
	})
	// r2r_search's identifier request and r2r_rag_query's chosen context rely on these two.
	t.Run("filter_chunk_id_in", func(t *testing.T) {
		all := s.searchDocs(t, s.admin, scoped(s.collA, nil), 10)
		if len(all) < 2 {
			t.Fatalf("%d hits in the collection; want at least 2", len(all))
		}
		res, err := s.admin.Search(t.Context(), r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
			SearchSettings: modeSettings(r2r.SearchModeAdvanced, r2r.ChunkFilters(scoped(s.collA, nil), []string{all[1].ID}), 10)})
		if err != nil {
			t.Fatal(err)
		}
		if hits := res.ChunkSearchResults; len(hits) != 1 || hits[0].ID != all[1].ID {
			t.Errorf("filter on chunk %s: %d hits %v", all[1].ID, len(hits), hits)
		}
	})
	t.Run("fulltext_only_alternatives", func(t *testing.T) {
		res, err := s.admin.Search(t.Context(), r2r.SearchRequest{Query: "zzzabsent or pelican", SearchMode: r2r.SearchModeCustom,
			SearchSettings: r2r.FullTextSettings(scoped(s.collA, nil), 10)})
		if err != nil {
			t.Fatal(err)
		}
		hitsOnly(t, res.ChunkSearchResults, inA...)
		res, err = s.admin.Search(t.Context(), r2r.SearchRequest{Query: "zzzabsent", SearchMode: r2r.SearchModeCustom,
			SearchSettings: r2r.FullTextSettings(scoped(s.collA, nil), 10)})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.ChunkSearchResults); n != 0 {
			t.Errorf("full-text search for an absent word: %d hits", n)
		}
	})
	t.Run("filter_or", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, map[string]any{"$and": []any{
			map[string]any{"suite": map[string]any{"$eq": s.sfx}},
			map[string]any{"$or": []any{
				map[string]any{"kind": map[string]any{"$eq": "c"}},
				map[string]any{"kind": map[string]any{"$eq": "d"}},
			}},
		}}, 10), s.docOther, s.docDerived)
	})
	t.Run("limit", func(t *testing.T) {
		hits := s.searchDocs(t, s.admin, map[string]any{"suite": map[string]any{"$eq": s.sfx}}, 1)
		if len(hits) != 1 {
			t.Errorf("limit 1: %d hits", len(hits))
		}
	})
	t.Run("other_user_sees_nothing", func(t *testing.T) {
		hits := s.searchDocs(t, s.user, map[string]any{"suite": map[string]any{"$eq": s.sfx}}, 10)
		if len(hits) != 0 {
			t.Errorf("a non-owner finds %d chunks of the superuser's documents", len(hits))
		}
	})
	t.Run("other_user_collection_scope_sees_nothing", func(t *testing.T) {
		hits := s.searchDocs(t, s.user, scoped(s.collA, nil), 10)
		if len(hits) != 0 {
			t.Errorf("a non-member finds %d chunks through the collection scope", len(hits))
		}
	})
	t.Run("empty_scope_finds_nothing", func(t *testing.T) {
		hits := s.searchDocs(t, s.admin, scoped(uuid.NewString(), nil), 10)
		if len(hits) != 0 {
			t.Errorf("an unknown collection gives %d hits", len(hits))
		}
	})
}

// ragRequest is what r2r-mcp's RAG tool sends.
func (s *suite) ragRequest(model string, maxTokens int) r2r.RAGRequest {
	t, limit, temp := true, 5, 0.1
	return r2r.RAGRequest{
		Query:      "How do pelicans migrate?",
		SearchMode: r2r.SearchModeCustom,
		SearchSettings: &r2r.SearchSettings{
			UseSemanticSearch: &t,
			Filters:           scoped(s.collA, nil),
			Limit:             &limit,
		},
		RAGGenerationConfig: &r2r.GenerationConfig{
			Model:             model,
			Temperature:       &temp,
			MaxTokensToSample: &maxTokens,
		},
		IncludeTitleIfAvailable: &t,
	}
}

func (s *suite) rag(t *testing.T) {
	need(t, s.collA, s.docText, s.docFile)
	inA := []string{s.docText, s.docFile}
	t.Run("answer_cites_scope", func(t *testing.T) {
		res, err := s.admin.RAG(t.Context(), s.ragRequest("", 512))
		if err != nil {
			t.Fatal(err)
		}
		if res.GeneratedAnswer == "" {
			t.Error("no generated_answer")
		}
		if len(res.Skipped) > 0 {
			t.Errorf("parts of the answer could not be decoded: %v", res.Skipped)
		}
		hitsOnly(t, res.SearchResults.ChunkSearchResults, inA...)
		if len(res.Citations) == 0 {
			t.Fatalf("no citations in %q", res.GeneratedAnswer)
		}
		for _, c := range res.Citations {
			if c.ID == "" {
				t.Errorf("citation without id: %+v", c)
			}
			if c.Payload == nil {
				t.Errorf("citation %s: no chunk payload (raw %s)", c.ID, c.RawPayload)
				continue
			}
			if !slices.Contains(inA, c.Payload.DocumentID) {
				t.Errorf("citation %s cites document %s outside the scope", c.ID, c.Payload.DocumentID)
			}
			// The short id is the start of the cited chunk's id, and the answer marks it in
			// brackets.
			if len(c.ID) != 7 || !strings.HasPrefix(c.Payload.ID, c.ID) || !strings.Contains(res.GeneratedAnswer, "["+c.ID+"]") {
				t.Errorf("citation %s of chunk %s in answer %q", c.ID, c.Payload.ID, res.GeneratedAnswer)
			}
			if c.Object != "citation" {
				t.Errorf("citation object %q", c.Object)
			}
		}
	})
	t.Run("chunk_filter_is_the_context", func(t *testing.T) {
		all := s.searchDocs(t, s.admin, scoped(s.collA, nil), 10)
		if len(all) < 2 {
			t.Fatalf("%d hits in the collection; want at least 2", len(all))
		}
		req := s.ragRequest("", 256)
		req.SearchSettings = modeSettings(r2r.SearchModeAdvanced, r2r.ChunkFilters(scoped(s.collA, nil), []string{all[1].ID}), 5)
		res, err := s.admin.RAG(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.SearchResults.ChunkSearchResults; len(got) != 1 || got[0].ID != all[1].ID {
			t.Errorf("RAG narrowed to chunk %s retrieved %v", all[1].ID, got)
		}
	})
	t.Run("model_and_max_tokens", func(t *testing.T) {
		res, err := s.admin.RAG(t.Context(), s.ragRequest(s.tg.ragModel, 64))
		if err != nil {
			t.Fatal(err)
		}
		if res.GeneratedAnswer == "" {
			t.Error("no generated_answer")
		}
	})
	// r2r-mcp reports metadata.model as the model used. LiteLLM sends the name without its
	// provider prefix, and the provider answers with its own name for the model.
	t.Run("model_reported_without_provider_prefix", func(t *testing.T) {
		res, err := s.admin.RAG(t.Context(), s.ragRequest(s.tg.ragModel, 64))
		if err != nil {
			t.Fatal(err)
		}
		m, _ := res.Metadata["model"].(string)
		if m == "" || strings.HasPrefix(m, "openai/") {
			t.Errorf("metadata.model %q, want the provider's name of %s", m, s.tg.ragModel)
		}
	})
	// A model R2R has no provider for fails inside R2R's RAG with 500 (r2r-mcp reports it
	// as the caller's argument error).
	t.Run("unserved_model", func(t *testing.T) {
		for model, want := range map[string]string{
			"nonexistent/bogus-model": "LLM Provider NOT provided",
			"anthropic/claude-none":   "API key not found",
		} {
			_, err := s.admin.RAG(t.Context(), s.ragRequest(model, 64))
			var e *r2r.Error
			if !errors.As(err, &e) || e.StatusCode != http.StatusInternalServerError || !strings.Contains(e.Message, want) {
				t.Errorf("model %s: %v, want a 500 saying %q", model, err, want)
			}
		}
	})
	t.Run("envelope", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodPost, "/v3/retrieval/rag", s.admin.Credentials(), "application/json",
			mustJSON(t, s.ragRequest("", 256)))
		if st != http.StatusOK {
			t.Fatalf("status %d: %.300s", st, b)
		}
		res, _ := object(t, b)["results"].(map[string]any)
		if _, ok := res["generated_answer"].(string); !ok {
			t.Errorf("generated_answer is not a string: %v", res["generated_answer"])
		}
		if _, ok := res["search_results"].(map[string]any); !ok {
			t.Errorf("search_results is not an object: %v", res["search_results"])
		}
		if _, ok := res["citations"].([]any); !ok {
			t.Errorf("citations is not a list: %v", res["citations"])
		}
	})
	t.Run("empty_scope_still_answers", func(t *testing.T) {
		req := s.ragRequest("", 128)
		req.SearchSettings.Filters = scoped(uuid.NewString(), nil)
		res, err := s.admin.RAG(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.SearchResults.ChunkSearchResults) != 0 {
			t.Errorf("%d hits from an unknown collection", len(res.SearchResults.ChunkSearchResults))
		}
	})
}

// errorBodies checks the body shapes r2r.Error parses, on the wire and through the client.
func (s *suite) errorBodies(t *testing.T) {
	// messageBody asserts R2R's own exception shape: {"message": "...", "error_type": "..."}.
	messageBody := func(t *testing.T, st, want int, b []byte) {
		t.Helper()
		if st != want {
			t.Fatalf("status %d, want %d: %.300s", st, want, b)
		}
		m := object(t, b)
		if msg, _ := m["message"].(string); msg == "" {
			t.Errorf("no message in %s", b)
		}
		if m["error_type"] != "R2RException" {
			t.Errorf("error_type %v in %s, want R2RException", m["error_type"], b)
		}
	}
	t.Run("401_message_body", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodGet, "/v3/users/me", nil, "", nil)
		messageBody(t, st, http.StatusUnauthorized, b)
	})
	t.Run("403_message_body", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodGet, "/v3/users/"+s.adminID+"/api-keys", s.user.Credentials(), "", nil)
		messageBody(t, st, http.StatusForbidden, b)
	})
	t.Run("404_message_body", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodGet, "/v3/documents/"+uuid.NewString(), s.admin.Credentials(), "", nil)
		messageBody(t, st, http.StatusNotFound, b)
	})
	t.Run("409_message_body", func(t *testing.T) {
		need(t, s.docText)
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("raw_text", "again")
		_ = w.WriteField("id", s.docText)
		_ = w.Close()
		st, _, b := s.raw(t, http.MethodPost, "/v3/documents", s.admin.Credentials(), w.FormDataContentType(), buf.Bytes())
		messageBody(t, st, http.StatusConflict, b)
	})
	t.Run("422_validation_list", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodPost, "/v3/retrieval/search", s.admin.Credentials(), "application/json", []byte(`{}`))
		if st != http.StatusUnprocessableEntity {
			t.Fatalf("status %d, want 422: %.300s", st, b)
		}
		var body struct {
			Detail []struct {
				Type string `json:"type"`
				Loc  []any  `json:"loc"`
				Msg  string `json:"msg"`
			} `json:"detail"`
		}
		if err := json.Unmarshal(b, &body); err != nil || len(body.Detail) == 0 {
			t.Fatalf("body %s (%v), want a FastAPI validation list", b, err)
		}
		d := body.Detail[0]
		if d.Type != "missing" || len(d.Loc) != 2 || d.Loc[0] != "body" || d.Loc[1] != "query" || d.Msg != "Field required" {
			t.Errorf("detail %+v, want the missing body.query", d)
		}
	})
	// Filters R2R cannot turn into SQL, or that Postgres rejects, answer 500 with the detail
	// object of R2R's generic exception wrapper.
	for _, tc := range []struct {
		name, errType, msg string
		filters            map[string]any
	}{
		{"500_unsupported_column_operator", "FilterError", "Unsupported operator '$bogus' for standard column 'document_id'.",
			map[string]any{"document_id": map[string]any{"$bogus": "x"}}},
		{"500_bad_uuid_in_overlap", "FilterError", "Invalid UUID format in list for 'collection_ids' filter: badly formed hexadecimal UUID string",
			map[string]any{"collection_ids": map[string]any{"$overlap": []any{"not-a-uuid"}}}},
		{"500_and_not_a_list", "FilterError", "'$and' value must be a list of filter dictionaries.",
			map[string]any{"$and": "x"}},
		{"500_in_not_a_list", "FilterError", "'$in' requires list value for 'kind'.",
			map[string]any{"kind": map[string]any{"$in": "x"}}},
		{"500_like_not_a_string", "FilterError", "'$like' requires string value for 'kind'.",
			map[string]any{"kind": map[string]any{"$like": 5}}},
		{"500_unknown_column", "UndefinedColumnError", `column "created_at" does not exist`,
			map[string]any{"created_at": map[string]any{"$eq": "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := mustJSON(t, r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
				SearchSettings: modeSettings(r2r.SearchModeBasic, tc.filters, 3)})
			st, _, b := s.raw(t, http.MethodPost, "/v3/retrieval/search", s.admin.Credentials(), "application/json", body)
			if st != http.StatusInternalServerError {
				t.Fatalf("status %d, want 500: %.300s", st, b)
			}
			var env struct {
				Detail struct {
					Message   string `json:"message"`
					Error     string `json:"error"`
					ErrorType string `json:"error_type"`
				} `json:"detail"`
			}
			if err := json.Unmarshal(b, &env); err != nil {
				t.Fatalf("body %s: %v", b, err)
			}
			d := env.Detail
			if d.Error != tc.msg || d.ErrorType != tc.errType || d.Message != "An error '"+tc.msg+"' occurred during search_app" {
				t.Errorf("detail %+v, want error %q of type %s", d, tc.msg, tc.errType)
			}
			// The same through the client.
			_, err := s.admin.Search(t.Context(), r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
				SearchSettings: modeSettings(r2r.SearchModeBasic, tc.filters, 3)})
			e := wantStatus(t, err, http.StatusInternalServerError, nil)
			if e.ErrorType != tc.errType || e.Message != d.Message {
				t.Errorf("client error %+v, want message %q and type %s", e, d.Message, tc.errType)
			}
		})
	}
	t.Run("unknown_metadata_operator_matches_nothing", func(t *testing.T) {
		need(t, s.collA)
		hits := s.searchDocs(t, s.admin, map[string]any{"$and": []any{
			map[string]any{"suite": map[string]any{"$eq": s.sfx}},
			map[string]any{"kind": map[string]any{"$bogus": "a"}},
		}}, 10)
		if len(hits) != 0 {
			t.Errorf("%d hits; R2R turns an unknown operator on a metadata field into FALSE", len(hits))
		}
	})
	t.Run("401_messages", func(t *testing.T) {
		_, err := s.anon.Me(t.Context())
		e := wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
		// R2R goes on "Create an account at https://app.sciphi.ai and set your API key using
		// `r2r configure key` OR change your base URL to a custom deployment."; the client drops
		// that hosted-service advice (r2r.withoutHostedAdvice).
		wantMessage(t, e, "No credentials provided.")
		for _, cr := range []r2r.Credentials{r2r.Bearer("abc"), r2r.APIKey("key_abc.def"), r2r.APIKey("nodot")} {
			_, err := s.client(t, cr).Me(t.Context())
			e := wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
			wantMessage(t, e, "Invalid token or API key")
		}
	})
	// Out-of-range parameters are FastAPI validation errors, which the client flattens into
	// "loc: msg".
	t.Run("422_list_limit_above_1000", func(t *testing.T) {
		_, err := s.admin.ListDocuments(t.Context(), r2r.ListParams{Limit: 1001})
		e := wantStatus(t, err, http.StatusUnprocessableEntity, nil)
		wantMessage(t, e, "query.limit: Input should be less than or equal to 1000")
	})
	t.Run("422_search_limit_above_1000", func(t *testing.T) {
		_, err := s.admin.Search(t.Context(), r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
			SearchSettings: modeSettings(r2r.SearchModeBasic, nil, 1001)})
		e := wantStatus(t, err, http.StatusUnprocessableEntity, nil)
		wantMessage(t, e, "body.search_settings.limit: Input should be less than or equal to 1000")
	})
	t.Run("500_malformed_id_in_list_filter", func(t *testing.T) {
		_, err := s.admin.ListDocuments(t.Context(), r2r.ListParams{IDs: []string{"nope"}})
		e := wantStatus(t, err, http.StatusInternalServerError, nil)
		wantMessage(t, e, "An error 'badly formed hexadecimal UUID string' occurred during get_documents")
		if e.ErrorType != "ValueError" {
			t.Errorf("error_type %q, want ValueError", e.ErrorType)
		}
	})
	t.Run("404_unknown_route", func(t *testing.T) {
		st, _, b := s.raw(t, http.MethodGet, "/v3/no-such-route", s.admin.Credentials(), "", nil)
		if st != http.StatusNotFound {
			t.Fatalf("status %d", st)
		}
		if m := object(t, b); m["detail"] != "Not Found" {
			t.Errorf("body %s, want {\"detail\":\"Not Found\"}", b)
		}
	})
}

// regularUserScope checks why r2r-mcp always puts its collection condition inside $and: for
// a user who is not a superuser, R2R rewrites a top-level collection_ids condition into
// "owned by the user OR in these collections", which lets the user's other documents in.
func (s *suite) regularUserScope(t *testing.T) {
	ctx := t.Context()
	var coll, inColl, outside string
	t.Run("setup", func(t *testing.T) {
		c, err := s.user.CreateCollection(ctx, "conf-"+s.sfx+"-user", "")
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupCollection(c.ID)
		for _, d := range []struct {
			id    *string
			text  string
			colls []string
		}{
			{&inColl, "Pelican scope notes inside " + s.sfx + ".", []string{c.ID}},
			{&outside, "Pelican scope notes outside " + s.sfx + ".", nil},
		} {
			id := uuid.NewString()
			s.top.Cleanup(func() {
				ctx, cancel := cleanupCtx()
				defer cancel()
				_ = s.user.DeleteDocument(ctx, id)
			})
			if _, err := s.user.CreateDocument(ctx, r2r.DocumentCreate{RawText: d.text, ID: id,
				Metadata: map[string]any{"suite": s.sfx}, CollectionIDs: d.colls}); err != nil {
				t.Fatal(err)
			}
			s.waitIngestedAs(t, s.user, id)
			*d.id = id
		}
		coll = c.ID
	})
	need(t, coll, inColl, outside)
	t.Run("and_wrapped_scope_is_exact", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.user, scoped(coll, nil), 10), inColl)
	})
	t.Run("top_level_collection_filter_lets_own_documents_in", func(t *testing.T) {
		hits := s.searchDocs(t, s.user, map[string]any{"collection_ids": map[string]any{"$overlap": []any{coll}}}, 10)
		hitsOnly(t, hits, inColl, outside)
		if !slices.ContainsFunc(hits, func(h r2r.ChunkSearchResult) bool { return h.DocumentID == outside }) {
			t.Errorf("the top-level collection_ids filter kept only the collection; R2R's rewrite should let %s in", outside)
		}
	})
	t.Run("superuser_top_level_filter_is_exact", func(t *testing.T) {
		hitsOnly(t, s.searchDocs(t, s.admin, map[string]any{"collection_ids": map[string]any{"$overlap": []any{coll}}}, 10), inColl)
	})
}
