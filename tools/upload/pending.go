package upload

import (
	"context"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// Bounds of the pending table. An ingestion nobody follows stops keeping its collection
// out of the result cache after MaxIngestAge; a membership still unchecked after
// maxMembershipAge is dropped, and at most maxMemberships are kept.
const (
	MaxIngestAge     = 15 * time.Minute
	maxMembershipAge = 30 * time.Minute
	maxMemberships   = 1000
)

// Pending is the one table of the documents this process uploaded that R2R has not
// finished with: while R2R ingests one, its collection's cached results are bypassed
// (Busy); once R2R has ingested it, its membership in the collection it was uploaded to is
// checked (Membership, Settled). It is safe for concurrent use.
type Pending struct {
	mu   sync.Mutex
	docs map[string]pendingDoc // document id →
}

type pendingDoc struct {
	collection string
	ingesting  bool      // R2R is still processing it
	started    time.Time // when its upload started
	member     bool      // its membership is still to be checked
	expected   time.Time // when that was recorded
}

// NewPending returns an empty table.
func NewPending() *Pending { return &Pending{docs: map[string]pendingDoc{}} }

// Start records that docID is being ingested into collection.
func (t *Pending) Start(docID, collection string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.docs[docID]
	d.collection, d.ingesting, d.started = collection, true, now
	t.docs[docID] = d
}

// Finish records that R2R is done ingesting docID (or will not be) and returns its
// collection if its ingestion was being tracked.
func (t *Pending) Finish(docID string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.docs[docID]
	if !ok || !d.ingesting {
		return "", false
	}
	d.ingesting = false
	t.putLocked(docID, d)
	return d.collection, true
}

// Busy reports whether an ingestion into collection is in progress; ingestions older
// than MaxIngestAge no longer count.
func (t *Pending) Busy(collection string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	found := false
	for id, d := range t.docs {
		switch {
		case !d.ingesting:
		case now.Sub(d.started) > MaxIngestAge:
			d.ingesting = false
			t.putLocked(id, d)
		case d.collection == collection:
			found = true
		}
	}
	return found
}

// ExpectMembership records that docID belongs in collection once R2R has ingested it.
func (t *Pending) ExpectMembership(docID, collection string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for id, d := range t.docs {
		switch {
		case !d.member:
		case now.Sub(d.expected) > maxMembershipAge:
			d.member = false
			t.putLocked(id, d)
		default:
			n++
		}
	}
	if n >= maxMemberships {
		return
	}
	d := t.docs[docID]
	d.collection, d.member, d.expected = collection, true, now
	t.docs[docID] = d
}

// Membership returns the collection docID's membership is to be checked against, if any.
func (t *Pending) Membership(docID string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.docs[docID]
	return d.collection, ok && d.member
}

// Settled records that docID's membership needs no more checking.
func (t *Pending) Settled(docID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, ok := t.docs[docID]; ok {
		d.member = false
		t.putLocked(docID, d)
	}
}

// putLocked stores d, or forgets the document when nothing about it is pending any more.
func (t *Pending) putLocked(docID string, d pendingDoc) {
	if !d.ingesting && !d.member {
		delete(t.docs, docID)
		return
	}
	t.docs[docID] = d
}

// SettleMembership makes sure doc, when this process uploaded it, ends up in the collection
// it was uploaded to. R2R at HEAD ignores the form field collection_ids;
// metadata.collection_ids is sent as well, so this is the fallback. The check waits until
// R2R reports the ingestion successful: with background (hatchet) ingestion the document
// appears later, and adding it to a collection while R2R's own workflow still assigns it
// could fail that workflow. Documents this process did not upload are left alone. It
// returns the collection doc was added to ("" when nothing was written), or with an error
// the collection it could not be added to.
func (t *Pending) SettleMembership(ctx context.Context, api kbsync.API, doc *r2r.Document) (string, error) {
	collID, ok := t.Membership(doc.ID)
	if !ok {
		return "", nil
	}
	switch doc.IngestionStatus {
	case r2r.IngestionSuccess:
	case r2r.IngestionFailed:
		t.Settled(doc.ID)
		return "", nil
	default:
		return "", nil
	}
	added, err := kbsync.EnsureMember(ctx, api, collID, doc)
	if err != nil {
		return collID, err
	}
	t.Settled(doc.ID)
	if !added {
		return "", nil
	}
	return collID, nil
}
