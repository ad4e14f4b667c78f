package r2r

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// CreateDocument ingests a file or raw text (POST /v3/documents, multipart/form-data, HTTP
// 202). JSON-valued fields (metadata, collection_ids, ingestion_config) are sent as
// JSON-encoded strings, as R2R expects. A duplicate document id gives 409 (ErrConflict);
// for pre-made chunks R2R 3.6.6 wraps that 409 in a 500 ("… was already ingested and is not
// in a failed state."), which matches ErrConflict too (conformance test create_chunks).
// Not idempotent: it is never retried.
func (c *Client) CreateDocument(ctx context.Context, in DocumentCreate) (*IngestionResponse, error) {
	const op = "create document"
	body, ctype, err := encodeDocumentCreate(in)
	if err != nil {
		return nil, fmt.Errorf("r2r %s: %w: %v", op, ErrInvalidRequest, err)
	}
	res, err := result[IngestionResponse](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: "/v3/documents",
		Body: body, ContentType: ctype})
	var e *Error
	if len(in.Chunks) > 0 && errors.As(err, &e) && e.StatusCode == http.StatusInternalServerError &&
		strings.Contains(e.Message, "is not in a failed state") {
		return nil, fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return res, err
}

// encodeDocumentCreate builds the multipart body of POST /v3/documents (conformance tests
// documents/create_*).
func encodeDocumentCreate(in DocumentCreate) ([]byte, string, error) {
	isFile := in.File != nil || in.FileName != ""
	given := 0
	for _, set := range []bool{isFile, in.RawText != "", len(in.Chunks) > 0} {
		if set {
			given++
		}
	}
	switch {
	case given > 1:
		return nil, "", fmt.Errorf("set one of File, RawText or Chunks")
	case given == 0:
		return nil, "", fmt.Errorf("set File (with FileName), RawText or Chunks")
	case isFile && strings.TrimSpace(in.FileName) == "":
		return nil, "", fmt.Errorf("FileName is required with File")
	}
	var buf bytes.Buffer
	buf.Grow(len(in.File) + len(in.RawText) + 1024)
	w := multipart.NewWriter(&buf)
	metadata := in.Metadata
	switch {
	case isFile:
		if err := writeFile(w, in.FileName, in.File); err != nil {
			return nil, "", err
		}
	case len(in.RawText) > MaxFormField:
		// R2R refuses a form field over 1 MiB but not a file part: the text goes as the
		// .txt file R2R makes of raw text, named by the title R2R types it by.
		name, md := rawTextAsFile(in.Metadata)
		if err := writeFile(w, name, []byte(in.RawText)); err != nil {
			return nil, "", err
		}
		metadata = md
	case in.RawText != "":
		if err := w.WriteField("raw_text", in.RawText); err != nil {
			return nil, "", err
		}
	}
	fields := []struct {
		name string
		val  any
		set  bool
	}{
		{"chunks", in.Chunks, len(in.Chunks) > 0},
		{"id", in.ID, in.ID != ""},
		{"metadata", metadata, len(metadata) > 0},
		{"collection_ids", in.CollectionIDs, len(in.CollectionIDs) > 0},
		{"ingestion_mode", in.IngestionMode, in.IngestionMode != ""},
		{"ingestion_config", in.IngestionConfig, len(in.IngestionConfig) > 0},
	}
	for _, f := range fields {
		if !f.set {
			continue
		}
		var v string
		switch x := f.val.(type) {
		case string:
			v = x
		default:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, "", fmt.Errorf("%s: %v", f.name, err)
			}
			v = string(b)
		}
		if err := w.WriteField(f.name, v); err != nil {
			return nil, "", err
		}
	}
	if in.RunWithOrchestration != nil {
		if err := w.WriteField("run_with_orchestration", strconv.FormatBool(*in.RunWithOrchestration)); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// MaxFormField is the largest form field R2R reads (Starlette's part size limit, 1 MiB): a
// larger one is refused with 400 "Part exceeded maximum size of 1024KB." File parts have no
// such limit.
const MaxFormField = 1 << 20

// ChunksFit says whether chunks fit the one form field R2R reads them from (MaxFormField,
// as JSON).
func ChunksFit(chunks []string) bool {
	b, err := json.Marshal(chunks)
	return err == nil && len(b) <= MaxFormField
}

// writeFile writes the multipart file part `file`; CreateFormFile sets Content-Type:
// application/octet-stream, as R2R's SDK does.
func writeFile(w *multipart.Writer, name string, data []byte) error {
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		return err
	}
	_, err = part.Write(data)
	return err
}

// rawTextAsFile is the file name and metadata of raw text sent as a file: R2R names raw
// text "<title>.txt" and types an uploaded file by its metadata title, so the title gains
// ".txt" (conformance test documents/raw_text_over_the_form_field_cap).
func rawTextAsFile(md map[string]any) (string, map[string]any) {
	title, _ := md["title"].(string)
	if title == "" {
		title = "text"
	}
	if !strings.EqualFold(path.Ext(title), ".txt") {
		title += ".txt"
	}
	out := make(map[string]any, len(md)+1)
	for k, v := range md {
		out[k] = v
	}
	out["title"] = title
	return path.Base(title), out
}

// ListDocuments lists the documents the caller can see, newest first (GET /v3/documents).
func (c *Client) ListDocuments(ctx context.Context, p ListParams) (*Page[Document], error) {
	return page[Document](ctx, c, &Call{Op: "list documents", Method: http.MethodGet, Path: "/v3/documents",
		Query: listQuery(p, true), Idempotent: true})
}

// GetDocument returns one document; 404 (ErrNotFound) when it does not exist or is not
// visible to the caller.
func (c *Client) GetDocument(ctx context.Context, id string) (*Document, error) {
	const op = "get document"
	if err := requireID(op, "document id", id); err != nil {
		return nil, err
	}
	return result[Document](ctx, c, &Call{Op: op, Method: http.MethodGet, Path: pathf("/documents/%s", id),
		Idempotent: true})
}

// ListDocumentChunks lists a document's chunks in chunk order. p.IDs is ignored (R2R has
// no such filter here).
func (c *Client) ListDocumentChunks(ctx context.Context, id string, p ListParams) (*Page[Chunk], error) {
	const op = "list document chunks"
	if err := requireID(op, "document id", id); err != nil {
		return nil, err
	}
	return page[Chunk](ctx, c, &Call{Op: op, Method: http.MethodGet, Path: pathf("/documents/%s/chunks", id),
		Query: listQuery(p, false), Idempotent: true})
}

// DownloadDocument returns a document's original bytes. The body read is capped by
// Options.MaxResponseBytes (64 MiB by default); a larger document fails with an *Error
// wrapping ErrResponseTooLarge.
func (c *Client) DownloadDocument(ctx context.Context, id string) (*Download, error) {
	const op = "download document"
	if err := requireID(op, "document id", id); err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, &Call{Op: op, Method: http.MethodGet, Path: pathf("/documents/%s/download", id),
		Idempotent: true})
	if err != nil {
		return nil, err
	}
	return &Download{
		ContentType: resp.Header.Get("Content-Type"),
		FileName:    dispositionFileName(resp.Header.Get("Content-Disposition")),
		Body:        resp.Body,
	}, nil
}

// dispositionFileName reads the file name from a Content-Disposition header, preferring
// the RFC 5987 form R2R sends (filename* in UTF-8, percent-encoded).
func dispositionFileName(h string) string {
	if h == "" {
		return ""
	}
	if _, params, err := mime.ParseMediaType(h); err == nil && params["filename"] != "" {
		return params["filename"]
	}
	// Lenient fallback for headers mime rejects (e.g. unquoted spaces).
	for part := range strings.SplitSeq(h, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "filename*":
			if _, enc, ok := strings.Cut(v, "''"); ok {
				if s, err := url.PathUnescape(enc); err == nil {
					return s
				}
			}
		case "filename":
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// DeleteDocument deletes a document and its chunks; 404 when it does not exist or belongs
// to someone else.
func (c *Client) DeleteDocument(ctx context.Context, id string) error {
	const op = "delete document"
	if err := requireID(op, "document id", id); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodDelete, Path: pathf("/documents/%s", id)}, nil)
}

// PatchDocumentMetadata shallow-merges each object of patches, in order, into the
// document's metadata (PATCH /v3/documents/{id}/metadata; the body is the JSON array) and
// returns the updated document.
func (c *Client) PatchDocumentMetadata(ctx context.Context, id string, patches []map[string]any) (*Document, error) {
	const op = "patch document metadata"
	if err := requireID(op, "document id", id); err != nil {
		return nil, err
	}
	if patches == nil {
		patches = []map[string]any{}
	}
	body, err := jsonBody(op, patches)
	if err != nil {
		return nil, err
	}
	return result[Document](ctx, c, &Call{Op: op, Method: http.MethodPatch, Path: pathf("/documents/%s/metadata", id),
		Body: body, ContentType: "application/json"})
}
