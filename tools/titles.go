package tools

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// untitled is shown for a document whose title neither its chunks nor R2R know.
const untitled = "(untitled)"

// maxRememberedTitles bounds the title memory; when full it starts over.
const maxRememberedTitles = 4096

// titleMemory remembers document titles by id, so a search whose hits carry no title
// needs no second R2R request for documents seen before. Writes through r2r-mcp drop it.
type titleMemory struct {
	mu      sync.RWMutex
	m       map[string]string // document id → title; untitled when R2R knows none
	listed  map[string]bool   // collections whose first page of titles was fetched
	flights singleflight.Group
}

// maxListedTitles is how many documents of a collection one listing remembers at once.
const maxListedTitles = 100

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
		t.listed = nil
	}
	for id, title := range titles {
		t.m[id] = title
	}
}

// forget drops every remembered title (a document may have been replaced or renamed).
func (t *titleMemory) forget() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m, t.listed = nil, nil
}

func (t *titleMemory) wasListed(collection string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.listed[collection]
}

func (t *titleMemory) markListed(collection string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.listed == nil {
		t.listed = map[string]bool{}
	}
	t.listed[collection] = true
}

// docTitle is the title R2R shows for a document; untitled when it has none.
func docTitle(doc r2r.Document) string {
	if doc.Title != nil && strings.TrimSpace(*doc.Title) != "" && *doc.Title != "N/A" {
		return Sanitize(*doc.Title)
	}
	return untitled
}

// listTitles remembers the titles of the first documents of collection, once per
// collection (concurrent callers share the request): one request names every document of a
// small collection, so later misses need none.
func (d *Deps) listTitles(ctx context.Context, collection string) error {
	mem := d.titleMemory()
	if collection == "" || mem.wasListed(collection) {
		return nil
	}
	_, _, err := cache.Flight(ctx, &mem.flights, collection, func(ctx context.Context) (struct{}, error) {
		page, err := d.Client.ListCollectionDocuments(ctx, collection, r2r.ListParams{Limit: maxListedTitles})
		if err != nil {
			return struct{}{}, err
		}
		titles := make(map[string]string, len(page.Items))
		for _, doc := range page.Items {
			titles[doc.ID] = docTitle(doc)
		}
		mem.put(titles)
		mem.markListed(collection)
		return struct{}{}, nil
	})
	return err
}

// fillTitles replaces untitled entries with the documents' own titles: from the title
// memory, else from a listing of collection's documents, else looked up by id in one
// request. R2R copies a document's metadata into its chunks, so a hit carries a title only
// when the uploader set metadata.title (r2r-mcp's ingest does); documents ingested by other
// means have their title on the document only. docID and title address the i-th entry. A
// failed request leaves the entries untitled and returns the error: the result is still
// worth showing, but it is incomplete and must not be cached.
func (d *Deps) fillTitles(ctx context.Context, collection string, n int, docID func(i int) string, title func(i int) *string) error {
	mem := d.titleMemory()
	missing := func() []string {
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
			// Only real ids: R2R answers 500 to a malformed id in ids, and a non-chunk
			// citation may carry none.
			if uuid.Validate(id) == nil && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	ids := missing()
	if len(ids) == 0 {
		return nil
	}
	if !mem.wasListed(collection) {
		if err := d.listTitles(ctx, collection); err != nil {
			d.logger().LogAttrs(ctx, slog.LevelDebug, "document titles not available", slog.String("error", err.Error()))
			return err
		}
		if ids = missing(); len(ids) == 0 {
			return nil
		}
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
		titles[doc.ID] = docTitle(doc)
	}
	mem.put(titles)
	missing()
	return nil
}
