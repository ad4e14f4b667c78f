package r2r

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Page is one page of a paginated R2R list: `{"results": [...], "total_entries": N}`.
type Page[T any] struct {
	Items []T `json:"results"`
	// Total is R2R's count before offset/limit were applied.
	Total int `json:"total_entries"`
}

// ListParams are the pagination parameters shared by list endpoints. Zero Limit means
// "let R2R choose" (R2R's default is 100; it accepts 1..1000).
type ListParams struct {
	IDs    []string
	Offset int
	Limit  int
}

// TokenPair is the result of login and refresh-token.
type TokenPair struct {
	AccessToken  Token `json:"access_token"`
	RefreshToken Token `json:"refresh_token"`
}

// Token is one JWT with its type ("access" or "refresh").
type Token struct {
	Token     string `json:"token"`
	TokenType string `json:"token_type"`
}

// User is R2R's user object (the fields r2r-mcp reads). Its timestamps are decoded
// leniently (see Time).
type User struct {
	ID            string         `json:"id"`
	Email         string         `json:"email"`
	Name          *string        `json:"name"`
	IsActive      bool           `json:"is_active"`
	IsSuperuser   bool           `json:"is_superuser"`
	IsVerified    bool           `json:"is_verified"`
	CollectionIDs []string       `json:"collection_ids"`
	Metadata      map[string]any `json:"metadata"`
	CreatedAt     Time           `json:"created_at"`
	UpdatedAt     Time           `json:"updated_at"`
}

// CreatedAPIKey is returned once, when a key is created; the raw key is never shown again.
type CreatedAPIKey struct {
	APIKey    string `json:"api_key"`
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	Name      string `json:"name"`
}

// APIKeyInfo is one entry of a user's key list (no secret). UpdatedAt is decoded leniently
// (see Time).
type APIKeyInfo struct {
	PublicKey   string `json:"public_key"`
	KeyID       string `json:"key_id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	UpdatedAt   Time   `json:"updated_at"`
}

// Ingestion statuses of a document (conformance test documents/ingestion_reaches_success
// accepts only these).
const (
	IngestionPending   = "pending"
	IngestionParsing   = "parsing"
	IngestionExtract   = "extracting"
	IngestionChunking  = "chunking"
	IngestionEmbedding = "embedding"
	IngestionAugment   = "augmenting"
	IngestionStoring   = "storing"
	IngestionEnriching = "enriching"
	IngestionFailed    = "failed"
	IngestionSuccess   = "success"
)

// Document is R2R's DocumentResponse. Its timestamps are decoded leniently (see Time).
type Document struct {
	ID               string         `json:"id"`
	OwnerID          string         `json:"owner_id"`
	CollectionIDs    []string       `json:"collection_ids"`
	DocumentType     string         `json:"document_type"`
	Metadata         map[string]any `json:"metadata"`
	Title            *string        `json:"title"`
	Version          string         `json:"version"`
	SizeInBytes      *int64         `json:"size_in_bytes"`
	IngestionStatus  string         `json:"ingestion_status"`
	ExtractionStatus string         `json:"extraction_status"`
	CreatedAt        Time           `json:"created_at"`
	UpdatedAt        Time           `json:"updated_at"`
	Summary          *string        `json:"summary"`
	TotalTokens      *int           `json:"total_tokens"`
}

// DocumentCreate is the input of POST /v3/documents. Exactly one of File (with FileName)
// and RawText must be set. Zero-valued optional fields are not sent.
type DocumentCreate struct {
	// FileName is the name of the uploaded part; R2R derives the document type from its
	// extension and, without ID, the document id from it.
	FileName string
	// File is the file's content; sent as the multipart part `file`.
	File []byte
	// RawText is sent as the form field `raw_text` instead of a file; over MaxFormField,
	// which R2R refuses as a form field, as the text file R2R would make of it: a .txt file
	// part titled "<title>.txt" (the document's title then ends in .txt).
	RawText string
	// Chunks are sent as the form field `chunks` (a JSON list) instead of a file or raw
	// text: R2R embeds them as they are, without parsing or chunking (conformance test
	// documents/create_chunks).
	Chunks []string
	// ID fixes the document id; empty lets R2R derive it from the file name (or the raw
	// text) and the owner (conformance test documents/create_file_derived_id).
	ID string
	// Metadata is sent as a JSON-encoded string field.
	Metadata map[string]any
	// CollectionIDs is sent as a JSON-encoded string field.
	CollectionIDs []string
	// IngestionMode is one of hi-res, ocr, fast, custom; empty leaves R2R's default.
	IngestionMode string
	// IngestionConfig is sent as a JSON-encoded string field.
	IngestionConfig map[string]any
	// RunWithOrchestration is sent as "true"/"false" when non-nil.
	RunWithOrchestration *bool
}

// IngestionResponse is the result of POST /v3/documents (HTTP 202).
type IngestionResponse struct {
	Message    string  `json:"message"`
	TaskID     *string `json:"task_id"`
	DocumentID string  `json:"document_id"`
}

// IngestedMessage is R2R's answer to a document create that ingested the document within
// the request (no orchestrator): it has succeeded by then.
const IngestedMessage = "Document created and ingested successfully."

// Ingested reports whether R2R finished ingesting the document before answering (conformance
// test documents/create_answer_means_ingested); a queued ingestion has a task id instead.
func (r *IngestionResponse) Ingested() bool {
	return r != nil && r.TaskID == nil && r.Message == IngestedMessage
}

// Chunk is one entry of GET /v3/documents/{id}/chunks.
type Chunk struct {
	ID            string         `json:"id"`
	DocumentID    string         `json:"document_id"`
	OwnerID       string         `json:"owner_id"`
	CollectionIDs []string       `json:"collection_ids"`
	Text          string         `json:"text"`
	Metadata      map[string]any `json:"metadata"`
}

// Download is a document's original bytes.
type Download struct {
	ContentType string
	FileName    string
	Body        []byte
}

// Collection is R2R's CollectionResponse. Its timestamps are decoded leniently (see Time).
type Collection struct {
	ID                 string  `json:"id"`
	OwnerID            *string `json:"owner_id"`
	Name               string  `json:"name"`
	Description        *string `json:"description"`
	GraphClusterStatus string  `json:"graph_cluster_status"`
	GraphSyncStatus    string  `json:"graph_sync_status"`
	CreatedAt          Time    `json:"created_at"`
	UpdatedAt          Time    `json:"updated_at"`
	UserCount          int     `json:"user_count"`
	DocumentCount      int     `json:"document_count"`
}

// Search modes. r2r-mcp sends every search as SearchModeCustom with explicit settings
// (conformance tests search/mode_*).
const (
	SearchModeBasic    = "basic"
	SearchModeAdvanced = "advanced"
	SearchModeCustom   = "custom"
)

// SearchSettings holds R2R search settings. Every field is optional and only set fields are
// sent, because for basic/advanced modes R2R lets present fields override the mode's
// defaults.
type SearchSettings struct {
	UseSemanticSearch *bool           `json:"use_semantic_search,omitempty"`
	UseFulltextSearch *bool           `json:"use_fulltext_search,omitempty"`
	UseHybridSearch   *bool           `json:"use_hybrid_search,omitempty"`
	Filters           map[string]any  `json:"filters,omitempty"`
	Limit             *int            `json:"limit,omitempty"`
	Offset            *int            `json:"offset,omitempty"`
	IncludeMetadatas  *bool           `json:"include_metadatas,omitempty"`
	IncludeScores     *bool           `json:"include_scores,omitempty"`
	SearchStrategy    string          `json:"search_strategy,omitempty"`
	HybridSettings    *HybridSettings `json:"hybrid_settings,omitempty"`
	GraphSettings     *GraphSettings  `json:"graph_settings,omitempty"`
}

// GraphSettings switches R2R's knowledge-graph search, which runs beside the chunk search.
type GraphSettings struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// HybridSettings tunes hybrid (semantic + full-text) search.
type HybridSettings struct {
	FullTextWeight *float64 `json:"full_text_weight,omitempty"`
	SemanticWeight *float64 `json:"semantic_weight,omitempty"`
	FullTextLimit  *int     `json:"full_text_limit,omitempty"`
	RRFK           *int     `json:"rrf_k,omitempty"`
}

// SearchRequest is the body of POST /v3/retrieval/search.
type SearchRequest struct {
	Query          string          `json:"query"`
	SearchMode     string          `json:"search_mode,omitempty"`
	SearchSettings *SearchSettings `json:"search_settings,omitempty"`
}

// SearchResult is R2R's AggregateSearchResult; r2r-mcp reads chunk results only and keeps
// the graph results raw.
type SearchResult struct {
	ChunkSearchResults []ChunkSearchResult `json:"chunk_search_results"`
	GraphSearchResults []json.RawMessage   `json:"graph_search_results"`
}

// ChunkSearchResult is one chunk hit.
type ChunkSearchResult struct {
	ID            string         `json:"id"`
	DocumentID    string         `json:"document_id"`
	OwnerID       string         `json:"owner_id"`
	CollectionIDs []string       `json:"collection_ids"`
	Score         float64        `json:"score"`
	Text          string         `json:"text"`
	Metadata      map[string]any `json:"metadata"`
}

// GenerationConfig is R2R's rag_generation_config. Only set fields are sent; an empty
// Model lets R2R use its configured model.
type GenerationConfig struct {
	Model             string   `json:"model,omitempty"`
	Temperature       *float64 `json:"temperature,omitempty"`
	TopP              *float64 `json:"top_p,omitempty"`
	MaxTokensToSample *int     `json:"max_tokens_to_sample,omitempty"`
	Stream            *bool    `json:"stream,omitempty"`
}

// RAGRequest is the body of POST /v3/retrieval/rag (non-streaming).
type RAGRequest struct {
	Query                   string            `json:"query"`
	SearchMode              string            `json:"search_mode,omitempty"`
	SearchSettings          *SearchSettings   `json:"search_settings,omitempty"`
	RAGGenerationConfig     *GenerationConfig `json:"rag_generation_config,omitempty"`
	TaskPrompt              string            `json:"task_prompt,omitempty"`
	IncludeTitleIfAvailable *bool             `json:"include_title_if_available,omitempty"`
}

// RAGResponse is R2R's non-streaming RAG result. It is decoded best-effort (see
// UnmarshalJSON in retrieval.go): the answer has already been paid for, so a citation,
// search hit or metadata value this client cannot read is left out and described in
// Skipped instead of failing the whole response.
type RAGResponse struct {
	GeneratedAnswer string         `json:"generated_answer"`
	SearchResults   SearchResult   `json:"search_results"`
	Citations       []Citation     `json:"citations"`
	Metadata        map[string]any `json:"metadata"`
	Completion      string         `json:"completion"`
	// Skipped names the parts of R2R's answer that could not be read and were left out,
	// e.g. "citations[2]: not an object"; empty normally. Never sent or encoded.
	Skipped []string `json:"-"`
}

// Citation links a `[shortid]` marker in the answer to what it cites.
type Citation struct {
	// ID is the short id used in the answer; a numeric id is kept as its decimal text.
	ID         string  `json:"id"`
	Object     string  `json:"object"`
	IsNew      bool    `json:"is_new"`
	Span       *Span   `json:"span"`
	SourceType *string `json:"source_type"`
	// Payload is the cited chunk, or nil when the payload is absent or is not a chunk
	// search result (a graph or web result, or a chunk this client cannot read).
	Payload *ChunkSearchResult `json:"payload"`
	// RawPayload is the payload exactly as R2R sent it (nil when absent or null), for
	// citations whose Payload is nil. Not encoded.
	RawPayload json.RawMessage `json:"-"`
}

// Span is a character range in the generated answer.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Time is a timestamp as R2R sends it. R2R 3.6.6 sends RFC 3339 in UTC with microseconds
// and "Z" (conformance test documents/timestamps); proxies and other versions may differ, so
// decoding is lenient: RFC 3339 with "Z" or a numeric offset (+00:00, +0000 or +00), or ISO
// 8601 without an offset, which is taken as UTC; fractional seconds are optional and a
// space may stand for the "T". JSON null and "" decode to the zero Time.
// It encodes as RFC 3339 with nanoseconds, or null when zero.
//
// Every timestamp field of the wire types is a Time; it embeds time.Time, so its methods
// (IsZero, Before, Format, …) are at hand and .Time is the plain value.
type Time struct{ time.Time }

// timeLayouts are tried in order; the last one has no offset and is parsed as UTC.
var timeLayouts = []string{
	time.RFC3339Nano, // 2025-11-06T12:34:56.123456Z, …+00:00
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07", // Postgres' own text form: +00
	"2006-01-02T15:04:05.999999999",
}

// ParseTime parses s in any of the forms Time accepts; "" gives the zero time.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("r2r: unrecognised timestamp %q", capText(s, 64))
}

// UnmarshalJSON accepts a JSON string in one of the forms described on Time, or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		s = string(b[1 : n-1]) // the usual case; json.Unmarshal costs more than the parse
	} else if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("r2r: timestamp is not a string: %s", capText(string(b), 64))
	}
	v, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// MarshalJSON encodes RFC 3339 with nanoseconds, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return t.Time.MarshalJSON()
}

// UnmarshalText is as lenient as UnmarshalJSON (it replaces time.Time's strict one).
func (t *Time) UnmarshalText(b []byte) error {
	v, err := ParseTime(string(b))
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}
