package r2r

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Search runs POST /v3/retrieval/search. Only the settings fields that are set are sent,
// so for basic/advanced modes R2R's mode defaults stay in force for the rest.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	const op = "search"
	if strings.TrimSpace(req.Query) == "" {
		return nil, fmt.Errorf("r2r %s: %w: empty query", op, ErrInvalidRequest)
	}
	body, err := jsonBody(op, req)
	if err != nil {
		return nil, err
	}
	var out SearchResult
	if err := c.results(ctx, &Call{Op: op, Method: http.MethodPost, Path: "/v3/retrieval/search",
		Body: body, ContentType: "application/json", Idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RAG runs POST /v3/retrieval/rag without streaming; a request asking for a stream is
// rejected.
func (c *Client) RAG(ctx context.Context, req RAGRequest) (*RAGResponse, error) {
	const op = "rag"
	if strings.TrimSpace(req.Query) == "" {
		return nil, fmt.Errorf("r2r %s: %w: empty query", op, ErrInvalidRequest)
	}
	if g := req.RAGGenerationConfig; g != nil && g.Stream != nil && *g.Stream {
		return nil, fmt.Errorf("r2r %s: %w: streaming is not supported", op, ErrInvalidRequest)
	}
	body, err := jsonBody(op, req)
	if err != nil {
		return nil, err
	}
	var out RAGResponse
	if err := c.results(ctx, &Call{Op: op, Method: http.MethodPost, Path: "/v3/retrieval/rag",
		Body: body, ContentType: "application/json", Idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
