package r2r

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Search runs POST /v3/retrieval/search. Only the settings fields that are set are sent,
// so for basic/advanced modes R2R's mode defaults stay in force for the rest.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	const op = "search"
	if err := requireID(op, "query", req.Query); err != nil {
		return nil, err
	}
	body, err := jsonBody(op, req)
	if err != nil {
		return nil, err
	}
	return result[SearchResult](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: "/v3/retrieval/search",
		Body: body, ContentType: "application/json", Idempotent: true})
}

// RAG runs POST /v3/retrieval/rag without streaming; a request asking for a stream is
// rejected.
func (c *Client) RAG(ctx context.Context, req RAGRequest) (*RAGResponse, error) {
	const op = "rag"
	if err := requireID(op, "query", req.Query); err != nil {
		return nil, err
	}
	if g := req.RAGGenerationConfig; g != nil && g.Stream != nil && *g.Stream {
		return nil, fmt.Errorf("r2r %s: %w: streaming is not supported", op, ErrInvalidRequest)
	}
	body, err := jsonBody(op, req)
	if err != nil {
		return nil, err
	}
	return result[RAGResponse](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: "/v3/retrieval/rag",
		Body: body, ContentType: "application/json", Idempotent: true})
}

// maxSkipped bounds RAGResponse.Skipped, so a response full of odd citations cannot make it
// grow with the response.
const maxSkipped = 20

// UnmarshalJSON decodes a RAG result best-effort. Only a body that is not an object, or an
// answer that is not a string, fails; a citation, a chunk hit or the metadata that cannot
// be read is left out and noted in Skipped. generated_answer falls back to completion.
func (r *RAGResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		GeneratedAnswer *string         `json:"generated_answer"`
		Completion      *string         `json:"completion"`
		SearchResults   json.RawMessage `json:"search_results"`
		Citations       json.RawMessage `json:"citations"`
		Metadata        json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := RAGResponse{}
	if w.Completion != nil {
		out.Completion = *w.Completion
	}
	out.GeneratedAnswer = out.Completion
	if w.GeneratedAnswer != nil {
		out.GeneratedAnswer = *w.GeneratedAnswer
	}
	out.SearchResults = out.decodeSearchResults(w.SearchResults)
	out.Citations = decodeEach[Citation](&out, "citations", w.Citations)
	if !isNull(w.Metadata) {
		if err := json.Unmarshal(w.Metadata, &out.Metadata); err != nil {
			out.Metadata = nil
			out.skip("metadata", err)
		}
	}
	*r = out
	return nil
}

// decodeSearchResults reads the aggregate search result, hit by hit when it does not
// decode as a whole.
func (r *RAGResponse) decodeSearchResults(raw json.RawMessage) SearchResult {
	var sr SearchResult
	if isNull(raw) || json.Unmarshal(raw, &sr) == nil {
		return sr
	}
	sr = SearchResult{}
	var parts struct {
		Chunks json.RawMessage `json:"chunk_search_results"`
		Graph  json.RawMessage `json:"graph_search_results"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		r.skip("search_results", err)
		return sr
	}
	if cs := decodeEach[ChunkSearchResult](r, "search_results.chunk_search_results", parts.Chunks); len(cs) > 0 {
		sr.ChunkSearchResults = cs
	}
	if items, ok := r.rawList("search_results.graph_search_results", parts.Graph); ok {
		sr.GraphSearchResults = items
	}
	return sr
}

// rawList splits a JSON array into its elements; null or absent gives (nil, false), and
// anything else that is not an array is noted as skipped.
func (r *RAGResponse) rawList(what string, raw json.RawMessage) ([]json.RawMessage, bool) {
	if isNull(raw) {
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		r.skip(what, err)
		return nil, false
	}
	return items, true
}

// decodeEach decodes a JSON array element by element, noting each element that does not
// decode as skipped; null, absent or not an array gives nil.
func decodeEach[T any](r *RAGResponse, what string, raw json.RawMessage) []T {
	items, ok := r.rawList(what, raw)
	if !ok {
		return nil
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		var v T
		if err := json.Unmarshal(it, &v); err != nil {
			r.skip(fmt.Sprintf("%s[%d]", what, i), err)
			continue
		}
		out = append(out, v)
	}
	return out
}

func (r *RAGResponse) skip(what string, err error) {
	if len(r.Skipped) < maxSkipped {
		r.Skipped = append(r.Skipped, what+": "+capText(err.Error(), 200))
	}
}

// UnmarshalJSON decodes a citation best-effort: only a citation that is not a JSON object
// fails. A numeric id is kept as its text, fields of an unexpected type stay zero, and the
// payload becomes Payload only when it is a chunk search result (RawPayload keeps it as sent).
func (c *Citation) UnmarshalJSON(b []byte) error {
	var w struct {
		ID         json.RawMessage `json:"id"`
		Object     json.RawMessage `json:"object"`
		IsNew      json.RawMessage `json:"is_new"`
		Span       json.RawMessage `json:"span"`
		SourceType json.RawMessage `json:"source_type"`
		Payload    json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := Citation{ID: scalarText(w.ID)}
	_ = json.Unmarshal(w.Object, &out.Object)
	_ = json.Unmarshal(w.IsNew, &out.IsNew)
	if !isNull(w.Span) && json.Unmarshal(w.Span, &out.Span) != nil {
		out.Span = nil
	}
	if !isNull(w.SourceType) && json.Unmarshal(w.SourceType, &out.SourceType) != nil {
		out.SourceType = nil
	}
	if !isNull(w.Payload) {
		out.RawPayload = w.Payload // json.RawMessage's UnmarshalJSON already copied it
		out.Payload = chunkPayload(w.Payload, out.SourceType)
	}
	*c = out
	return nil
}

// chunkPayload interprets a citation payload as a chunk search result: nil when the source
// type names something else, when it does not decode, or when it lacks a chunk's id and
// document id (graph and web results decode into a ChunkSearchResult without error).
func chunkPayload(raw json.RawMessage, sourceType *string) *ChunkSearchResult {
	if sourceType != nil && *sourceType != "" && !strings.EqualFold(*sourceType, "chunk") {
		return nil
	}
	var ch ChunkSearchResult
	if json.Unmarshal(raw, &ch) != nil || ch.ID == "" || ch.DocumentID == "" {
		return nil
	}
	return &ch
}

// scalarText returns a JSON string's value or a JSON number's text; "" for anything else.
func scalarText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return string(raw)
	}
	return ""
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
