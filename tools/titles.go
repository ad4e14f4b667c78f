package tools

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// untitled is shown for a document whose title neither its chunks nor R2R know.
const untitled = "(untitled)"

// maxRememberedTitles bounds the title memory; when full it starts over.
const maxRememberedTitles = 4096

// titleMemory remembers document titles by id, so a search whose hits carry no title
// needs no second R2R request for documents seen before. Writes through r2r-mcp drop it.
type titleMemory struct {
	mu sync.RWMutex
	m  map[string]string // document id → title; untitled when R2R knows none
}

func (t *titleMemory) get(id string) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	title, ok := t.m[id]
	return title, ok
}

func (t *titleMemory) put(titles map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil || len(t.m)+len(titles) > maxRememberedTitles {
		t.m = make(map[string]string, len(titles))
	}
	for id, title := range titles {
		t.m[id] = title
	}
}

// forget drops every remembered title (a document may have been replaced or renamed).
func (t *titleMemory) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m = nil
}

// fillTitles replaces untitled entries with the documents' own titles: from the title
// memory, else looked up in one request. R2R copies a document's metadata into its chunks,
// so a hit carries a title only when the uploader set metadata.title (r2r-mcp's ingest
// does); documents ingested by other means have their title on the document only. docID
// and title address the i-th entry. A failed lookup leaves the entries untitled and returns
// the error: the result is still worth showing, but it is incomplete and must not be cached.
func (d *Deps) fillTitles(ctx context.Context, n int, docID func(i int) string, title func(i int) *string) error {
	mem := d.titleMemory()
	var ids []string
	for i := range n {
		id := docID(i)
		if *title(i) != untitled {
			continue
		}
		if t, ok := mem.get(id); ok {
			*title(i) = t
			continue
		}
		// Only real ids: R2R answers 500 to a malformed id in ids, and a non-chunk citation
		// may carry none.
		if uuid.Validate(id) == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	page, err := d.Client.ListDocuments(ctx, r2r.ListParams{IDs: ids, Limit: len(ids)})
	if err != nil {
		d.logger().LogAttrs(ctx, slog.LevelDebug, "document titles not available", slog.String("error", err.Error()))
		return err
	}
	titles := make(map[string]string, len(ids))
	for _, id := range ids {
		titles[id] = untitled
	}
	for _, doc := range page.Items {
		if doc.Title != nil && strings.TrimSpace(*doc.Title) != "" && *doc.Title != "N/A" {
			titles[doc.ID] = Sanitize(*doc.Title)
		}
	}
	mem.put(titles)
	for i := range n {
		if t, ok := titles[docID(i)]; ok && *title(i) == untitled {
			*title(i) = t
		}
	}
	return nil
}
