package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// API is the part of R2R's API memories use; *r2r.Client implements it.
type API interface {
	kbsync.API
	DownloadDocument(ctx context.Context, id string) (*r2r.Download, error)
	Search(ctx context.Context, req r2r.SearchRequest) (*r2r.SearchResult, error)
}

var _ API = (*r2r.Client)(nil)

// Store reads and writes the memories of one collection.
type Store struct {
	API          API
	CollectionID string
	// Wait bounds the wait for a superseding memory's ingestion before the old one is
	// deleted (the context's deadline bounds it too); 0 = 40 s.
	Wait time.Duration
	// Poll is the first delay between status checks, doubling up to 2 s; 0 = 250 ms.
	Poll time.Duration
	// OnWrite, when set, is called after every change to the collection.
	OnWrite func()
}

// Scan bounds: a listing reads pages of R2R's largest size, up to maxScanDocs documents.
const (
	scanPage    = 1000
	maxScanDocs = 20000
)

// ErrNotMemory is wrapped by the errors of Forget and Get for a document that is not a
// memory of the store's collection.
var ErrNotMemory = errors.New("not a memory of this collection")

// Saved is what Remember did.
type Saved struct {
	ID     string
	Status string // R2R's ingestion status, when known
	// Already: a memory with the same content exists; nothing was sent.
	Already bool
	// Superseded is the id of the memory this one replaced (deleted); "" when none.
	Superseded string
	// OldKept: the memory to supersede was kept because the new one had not been ingested
	// within the wait (recall hides it once the new one is found).
	OldKept bool
}

// Check refuses a normalised draft whose text or metadata holds what looks like a secret,
// before anything is sent anywhere.
func Check(d Draft) error {
	if rule, found := Secret(d, Metadata(d, ContentSHA(d), Stamp{})); found {
		return &Error{Field: "body", Secret: true,
			Msg: fmt.Sprintf("holds what looks like a secret (%s); memories are shared with everyone who can read the collection, so nothing was saved. Describe the secret's role instead, without its value", rule)}
	}
	return nil
}

// Remember saves the normalised draft d (see Normalise) as written by st. The same content
// saved before is Already; a draft that supersedes another memory is ingested first and
// the other deleted only once the new one has succeeded.
func (s *Store) Remember(ctx context.Context, d Draft, st Stamp) (Saved, error) {
	if err := Check(d); err != nil {
		return Saved{}, err
	}
	sha := ContentSHA(d)
	out := Saved{ID: ID(s.CollectionID, sha)}
	txt, md := Text(d), Metadata(d, sha, st)
	if rule, found := Secret(d, md); found { // the stamp is checked too
		return Saved{}, &Error{Field: "body", Secret: true, Msg: fmt.Sprintf("holds what looks like a secret (%s); nothing was saved", rule)}
	}
	if d.Supersedes != "" && d.Supersedes != out.ID {
		if _, err := s.memory(ctx, d.Supersedes); err != nil {
			return Saved{}, fmt.Errorf("the memory to supersede: %w", err)
		}
	}
	doc, err := s.API.GetDocument(ctx, out.ID)
	switch {
	case err == nil && doc.IngestionStatus != r2r.IngestionFailed:
		out.Already, out.Status = true, doc.IngestionStatus
	case err == nil: // a failed earlier attempt: send it again
		if err := s.delete(ctx, out.ID); err != nil {
			return Saved{}, err
		}
		fallthrough
	case errors.Is(err, r2r.ErrNotFound):
		if err := s.create(ctx, &out, txt, md); err != nil {
			return Saved{}, err
		}
	default:
		return Saved{}, err
	}
	if d.Supersedes == "" || d.Supersedes == out.ID {
		return out, nil
	}
	return out, s.supersede(ctx, &out, d.Supersedes)
}

// create sends one memory document; a conflict means it is there already.
func (s *Store) create(ctx context.Context, out *Saved, txt string, md map[string]any) error {
	res, err := s.API.CreateDocument(ctx, r2r.DocumentCreate{ID: out.ID, RawText: txt, Metadata: md,
		CollectionIDs: []string{s.CollectionID}, IngestionMode: "fast"})
	switch {
	case errors.Is(err, r2r.ErrConflict):
		out.Already = true
		return nil
	case err != nil:
		// R2R may have stored it even so (a proxy failing after R2R took it).
		if doc, gerr := s.API.GetDocument(ctx, out.ID); gerr == nil && doc.IngestionStatus != r2r.IngestionFailed {
			out.Status = doc.IngestionStatus
			s.wrote()
			return nil
		}
		return err
	}
	s.wrote()
	out.Status = r2r.IngestionPending
	if res.Ingested() {
		out.Status = r2r.IngestionSuccess
	}
	return nil
}

// supersede deletes the memory old once out's document has been ingested.
func (s *Store) supersede(ctx context.Context, out *Saved, old string) error {
	doc, err := s.wait(ctx, out.ID)
	if err != nil && ctx.Err() != nil {
		out.OldKept = true
		return nil
	}
	if doc == nil || doc.IngestionStatus != r2r.IngestionSuccess {
		if doc != nil {
			out.Status = doc.IngestionStatus
		}
		out.OldKept = true
		return nil
	}
	out.Status = doc.IngestionStatus
	added, err := kbsync.EnsureMember(ctx, s.API, s.CollectionID, doc)
	if err != nil {
		out.OldKept = true
		return fmt.Errorf("the new memory %s is ingested but could not be added to the collection, so %s was kept: %w", out.ID, old, err)
	}
	if added {
		s.wrote()
	}
	if err := s.delete(ctx, old); err != nil {
		out.OldKept = true
		return fmt.Errorf("the new memory %s is saved, but deleting the one it supersedes (%s) failed: %w", out.ID, old, err)
	}
	out.Superseded = old
	return nil
}

// wait polls document id until R2R has finished with it, Wait passes or ctx ends.
func (s *Store) wait(ctx context.Context, id string) (*r2r.Document, error) {
	limit := s.Wait
	if limit <= 0 {
		limit = 40 * time.Second
	}
	return kbsync.WaitIngested(ctx, s.API, id, limit, s.Poll, nil)
}

// memory reads document id and checks that it is a memory of the collection.
func (s *Store) memory(ctx context.Context, id string) (Memory, error) {
	doc, err := s.API.GetDocument(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	m, ok := FromDocument(*doc)
	if !ok || !slices.Contains(doc.CollectionIDs, s.CollectionID) {
		return Memory{}, fmt.Errorf("document %s: %w", id, ErrNotMemory)
	}
	return m, nil
}

// Get returns memory id and its body.
func (s *Store) Get(ctx context.Context, id string) (Memory, string, error) {
	m, err := s.memory(ctx, id)
	if err != nil {
		return Memory{}, "", err
	}
	body, err := s.Body(ctx, m)
	return m, body, err
}

// Body downloads m's text and returns its body: for a memory a listing already returned
// (Get looks it up first).
func (s *Store) Body(ctx context.Context, m Memory) (string, error) {
	dl, err := s.API.DownloadDocument(ctx, m.ID)
	if err != nil {
		return "", err
	}
	return Body(m, string(dl.Body)), nil
}

// Forget deletes memory id; any other document is refused with ErrNotMemory.
func (s *Store) Forget(ctx context.Context, id string) (Memory, error) {
	m, err := s.memory(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	if err := s.API.DeleteDocument(ctx, id); err != nil {
		if errors.Is(err, r2r.ErrNotFound) {
			s.wrote()
		}
		return m, err
	}
	s.wrote()
	return m, nil
}

func (s *Store) delete(ctx context.Context, id string) error {
	return kbsync.DeleteDocument(ctx, s.API, id, s.OnWrite)
}

func (s *Store) wrote() {
	if s.OnWrite != nil {
		s.OnWrite()
	}
}

// Listing is the result of List.
type Listing struct {
	Memories []Memory // newest first, at most the query's limit
	// More: further (older) memories match.
	More bool
	// Truncated: the collection holds more documents than a listing reads (maxScanDocs);
	// the newest were read.
	Truncated bool
}

// listPage is the page size of a listing that stops early: R2R lists a collection's
// documents newest first (conformance test memories/collection_lists_newest_first), so the
// newest memories are on its first pages.
const listPage = 100

// List returns q's memories newest first, reading the collection's documents (q.Text is
// ignored) until limit of them (and one more, for More) are found. limit < 0 returns all.
func (s *Store) List(ctx context.Context, q Query, limit int) (Listing, error) {
	var out Listing
	var all []Memory
	page := scanPage
	if limit >= 0 {
		page = listPage
	}
	err := s.scanPages(ctx, page, func(doc r2r.Document) bool {
		if m, ok := FromDocument(doc); ok && q.Match(m) {
			all = append(all, m)
		}
		return limit < 0 || len(dropSuperseded(slices.Clone(all))) <= limit
	}, &out.Truncated)
	if err != nil {
		return Listing{}, err
	}
	all = dropSuperseded(all)
	newestFirst(all)
	if limit >= 0 && len(all) > limit {
		all, out.More = all[:limit], true
	}
	out.Memories = all
	return out, nil
}

// Counts returns how many memories of each kind the collection holds.
func (s *Store) Counts(ctx context.Context) (counts map[string]int, truncated bool, err error) {
	counts = map[string]int{}
	err = s.scan(ctx, func(doc r2r.Document) {
		if m, ok := FromDocument(doc); ok {
			counts[m.Kind]++
		}
	}, &truncated)
	return counts, truncated, err
}

// CountDocuments counts the memories by kind among docs.
func CountDocuments(docs []r2r.Document) map[string]int {
	counts := map[string]int{}
	for _, doc := range docs {
		if m, ok := FromDocument(doc); ok {
			counts[m.Kind]++
		}
	}
	return counts
}

// scan calls fn for each document of the collection, newest first, up to maxScanDocs.
func (s *Store) scan(ctx context.Context, fn func(r2r.Document), truncated *bool) error {
	return s.scanPages(ctx, scanPage, func(d r2r.Document) bool { fn(d); return true }, truncated)
}

// scanPages reads the collection's documents in pages of size, newest first, calling fn
// for each until it returns false or maxScanDocs were read.
func (s *Store) scanPages(ctx context.Context, size int, fn func(r2r.Document) bool, truncated *bool) error {
	seen := map[string]bool{}
	for off := 0; off < maxScanDocs; off += size {
		page, err := s.API.ListCollectionDocuments(ctx, s.CollectionID, r2r.ListParams{Offset: off, Limit: size})
		if err != nil {
			return err
		}
		for _, doc := range page.Items {
			if seen[doc.ID] { // a page boundary shifted by a concurrent write
				continue
			}
			seen[doc.ID] = true
			if !fn(doc) {
				return nil
			}
		}
		if len(page.Items) < size || off+len(page.Items) >= page.Total {
			return nil
		}
	}
	*truncated = true
	return nil
}

// Search finds q's memories by q.Text: a hybrid search restricted to the collection and
// to memories, best first, one entry per memory.
func (s *Store) Search(ctx context.Context, q Query) ([]Memory, error) {
	limit := q.limit()
	res, err := s.API.Search(ctx, r2r.SearchRequest{Query: q.Text, SearchMode: r2r.SearchModeCustom,
		SearchSettings: r2r.ModeSettings(r2r.SearchModeAdvanced, r2r.ScopedFilters(s.CollectionID, q.Filter()), min(3*limit, 100))})
	if err != nil {
		return nil, err
	}
	var ms []Memory
	seen := map[string]bool{}
	for _, c := range res.ChunkSearchResults {
		if seen[c.DocumentID] {
			continue
		}
		seen[c.DocumentID] = true
		if m, ok := FromMetadata(c.DocumentID, c.Metadata); ok && q.Match(m) {
			ms = append(ms, m)
		}
	}
	ms = dropSuperseded(ms)
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms, nil
}
