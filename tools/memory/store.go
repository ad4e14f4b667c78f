package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// API is the part of R2R's API memories use; *r2r.Client implements it.
type API interface {
	kbsync.API
	DownloadDocument(ctx context.Context, id string) (*r2r.Download, error)
	Search(ctx context.Context, req r2r.SearchRequest) (*r2r.SearchResult, error)
	ListCollectionUsers(ctx context.Context, collectionID string, p r2r.ListParams) (*r2r.Page[r2r.User], error)
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

	mu       sync.Mutex
	users    map[string]r2r.User // the collection's members, once read
	usersErr error               // why they could not be
}

// Scan bounds: a listing reads pages of R2R's largest size, up to maxScanDocs documents.
const (
	scanPage    = 1000
	maxScanDocs = 20000
)

// ErrNotMemory is wrapped by the errors of Forget and Get for a document that is not a
// memory of the store's collection.
var ErrNotMemory = errors.New("not a memory of this collection")

// NotOwnerError is Forget's refusal of a memory R2R would not delete for the caller: it
// is Author's (R2R's 404 on a delete also means "not yours"), and R2R kept it.
type NotOwnerError struct {
	ID     string
	Author string
}

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("memory %s was saved by %s, and R2R lets only its owner (or an admin) delete it; nothing was deleted", e.ID, e.Author)
}

// What became of the memory a new one supersedes (Saved.Outcome).
const (
	// OutcomeDeleted: R2R deleted it.
	OutcomeDeleted = "deleted"
	// OutcomeHidden: R2R kept it (it is another user's, whom only they or an admin can
	// delete it for); the new memory names it, so recall and search hide it for everyone.
	OutcomeHidden = "hidden"
	// OutcomeGone: it was no longer in the collection when it was to be deleted.
	OutcomeGone = "gone"
	// OutcomePending: kept for now, as the new memory was not searchable within the wait;
	// recall and search hide it once the new one is.
	OutcomePending = "pending"
	// OutcomeShown: R2R kept it, and the same memory existed already without naming it,
	// so it is still found.
	OutcomeShown = "still_shown"
)

// Saved is what Remember did.
type Saved struct {
	ID     string
	Status string // R2R's ingestion status, when known
	// Already: the caller's memory with the same content exists; nothing was sent.
	Already bool
	// IDTaken: the memory's own id held a document that is not the caller's memory of this
	// content (anyone can compute the id), so it was saved under a new random id.
	IDTaken bool
	// Supersedes is the id of the memory this one supersedes; Outcome says what became of
	// it and OldAuthor whose it is when R2R kept it.
	Supersedes string
	Outcome    string
	OldAuthor  string

	names bool // the saved document names Supersedes in its metadata
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

// Remember saves the normalised draft d (see Normalise) as written by st.UserID. The same
// content the same user saved before is Already; a draft that supersedes another memory is
// ingested first, and the other then deleted when R2R lets the caller (see Outcome).
func (s *Store) Remember(ctx context.Context, d Draft, st Stamp) (Saved, error) {
	if err := Check(d); err != nil {
		return Saved{}, err
	}
	sha := ContentSHA(d)
	out := Saved{ID: ID(s.CollectionID, st.UserID, sha)}
	txt, md := Text(d), Metadata(d, sha, st)
	if rule, found := Secret(d, md); found { // the stamp is checked too
		return Saved{}, &Error{Field: "body", Secret: true, Msg: fmt.Sprintf("holds what looks like a secret (%s); nothing was saved", rule)}
	}
	var old Memory
	if d.Supersedes != "" {
		var err error
		if old, err = s.memory(ctx, d.Supersedes); err != nil {
			return Saved{}, fmt.Errorf("the memory to supersede: %w", err)
		}
	}
	if err := s.save(ctx, &out, st.UserID, sha, d.Supersedes, txt, md); err != nil {
		return Saved{}, err
	}
	if d.Supersedes == "" || d.Supersedes == out.ID {
		return out, nil
	}
	out.Supersedes = d.Supersedes
	return out, s.supersede(ctx, &out, old)
}

// save stores the memory at out.ID, unless the caller's memory of content sha is there
// already. A document there that is not (someone else's, made at the id anyone can
// compute) is left alone and the memory saved under a new random id.
func (s *Store) save(ctx context.Context, out *Saved, userID, sha, supersedes, txt string, md map[string]any) error {
	doc, err := s.API.GetDocument(ctx, out.ID)
	switch {
	case errors.Is(err, r2r.ErrNotFound), err == nil && !ownMemory(doc, userID, sha):
		// The caller's earlier save of it under another id (a new one, below, or the id
		// r2r-mcp derived before the owner was part of it) is found by its content.
		own, ferr := s.findOwn(ctx, userID, sha)
		if ferr != nil {
			return ferr
		}
		if own != "" {
			out.ID, out.Already, out.IDTaken = own, true, err == nil && own != out.ID
			return nil
		}
		if err == nil {
			out.ID, out.IDTaken = uuid.NewString(), true
		}
	case err != nil:
		return err
	case doc.IngestionStatus != r2r.IngestionFailed:
		out.Already, out.Status = true, doc.IngestionStatus
		out.names = supersedes != "" && doc.Metadata[MetaSupersedes] == supersedes
		return nil
	default: // a failed earlier attempt: send it again
		if err := s.delete(ctx, out.ID); err != nil {
			return err
		}
	}
	out.names = supersedes != ""
	return s.create(ctx, out, userID, sha, txt, md)
}

// ownMemory reports whether doc is user's memory of content sha.
func ownMemory(doc *r2r.Document, userID, sha string) bool {
	_, isMemory := FromDocument(*doc)
	return isMemory && doc.OwnerID == userID && doc.Metadata[MetaSHA] == sha
}

// create sends one memory document; a conflict is the caller's own document of that id
// (R2R's duplicate check sees no other), the same memory when it holds the same content.
func (s *Store) create(ctx context.Context, out *Saved, userID, sha, txt string, md map[string]any) error {
	res, err := s.API.CreateDocument(ctx, r2r.DocumentCreate{ID: out.ID, RawText: txt, Metadata: md,
		CollectionIDs: []string{s.CollectionID}, IngestionMode: "fast"})
	if err != nil {
		// R2R may have stored it even so (a proxy failing after R2R took it), or a
		// concurrent save of the same memory did.
		if doc, gerr := s.API.GetDocument(ctx, out.ID); gerr == nil && ownMemory(doc, userID, sha) && doc.IngestionStatus != r2r.IngestionFailed {
			out.Status = doc.IngestionStatus
			out.Already = errors.Is(err, r2r.ErrConflict)
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
	m.Author = s.author(ctx, m.OwnerID)
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

// Forget deletes memory id; any other document is refused with ErrNotMemory, and a
// memory R2R keeps because it is someone else's with a *NotOwnerError.
func (s *Store) Forget(ctx context.Context, id string) (Memory, error) {
	m, err := s.memory(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	switch kept, err := s.deleteOwn(ctx, id); {
	case err != nil:
		return m, err
	case kept:
		return m, &NotOwnerError{ID: id, Author: m.Author}
	}
	return m, nil
}

// delete deletes the caller's own document id (a failed attempt at saving a memory).
func (s *Store) delete(ctx context.Context, id string) error {
	if _, err := s.deleteOwn(ctx, id); err != nil && !errors.Is(err, r2r.ErrNotFound) {
		return err
	}
	return nil
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
