package r2r

import (
	"encoding/json"
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

// User is R2R's user object (the fields r2r-mcp reads).
type User struct {
	ID            string         `json:"id"`
	Email         string         `json:"email"`
	Name          *string        `json:"name"`
	IsActive      bool           `json:"is_active"`
	IsSuperuser   bool           `json:"is_superuser"`
	IsVerified    bool           `json:"is_verified"`
	CollectionIDs []string       `json:"collection_ids"`
	Metadata      map[string]any `json:"metadata"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// CreatedAPIKey is returned once, when a key is created; the raw key is never shown again.
type CreatedAPIKey struct {
	APIKey    string `json:"api_key"`
	KeyID     string `json:"key_id"`
	PublicKey string `json:"public_key"`
	Name      string `json:"name"`
}

// APIKeyInfo is one entry of a user's key list (no secret).
type APIKeyInfo struct {
	PublicKey   string    `json:"public_key"`
	KeyID       string    `json:"key_id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Ingestion statuses of a document (r2r-api.md §2.2).
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

// Document is R2R's DocumentResponse.
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
	CreatedAt        time.Time      `json:"created_at"`
	UpdatedAt        time.Time      `json:"updated_at"`
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
	// RawText is sent as the form field `raw_text` instead of a file.
	RawText string
	// ID fixes the document id; empty lets R2R derive it (r2r-api.md §2.6).
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

// Collection is R2R's CollectionResponse.
type Collection struct {
	ID                 string    `json:"id"`
	OwnerID            *string   `json:"owner_id"`
	Name               string    `json:"name"`
	Description        *string   `json:"description"`
	GraphClusterStatus string    `json:"graph_cluster_status"`
	GraphSyncStatus    string    `json:"graph_sync_status"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
	UserCount          int       `json:"user_count"`
	DocumentCount      int       `json:"document_count"`
}

// Search modes (r2r-api.md §4.1).
const (
	SearchModeBasic    = "basic"
	SearchModeAdvanced = "advanced"
	SearchModeCustom   = "custom"
)

// SearchSettings holds R2R search settings. Every field is optional and only set fields are
// sent, because for basic/advanced modes R2R lets present fields override the mode's
// defaults (r2r-api.md §4.1).
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

// RAGResponse is R2R's non-streaming RAG result.
type RAGResponse struct {
	GeneratedAnswer string         `json:"generated_answer"`
	SearchResults   SearchResult   `json:"search_results"`
	Citations       []Citation     `json:"citations"`
	Metadata        map[string]any `json:"metadata"`
	Completion      string         `json:"completion"`
}

// Citation links a `[shortid]` marker in the answer to the chunk it cites.
type Citation struct {
	ID         string             `json:"id"`
	Object     string             `json:"object"`
	IsNew      bool               `json:"is_new"`
	Span       *Span              `json:"span"`
	SourceType *string            `json:"source_type"`
	Payload    *ChunkSearchResult `json:"payload"`
}

// Span is a character range in the generated answer.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}
