package upload

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

func TestPendingIngestionExpires(t *testing.T) {
	tr := NewPending()
	t0 := time.Now()
	tr.Start("d1", "c1", t0)
	if !tr.Busy("c1", t0.Add(time.Minute)) || tr.Busy("c2", t0) {
		t.Fatal("busy wrong")
	}
	if tr.Busy("c1", t0.Add(MaxIngestAge+time.Second)) {
		t.Fatal("an unobserved ingestion keeps its collection out of the cache forever")
	}
	if _, ok := tr.Finish("d1"); ok {
		t.Fatal("expired entry still tracked")
	}
}

// TestPendingOneEntryPerUpload: an upload's ingestion and its membership check are one
// entry, forgotten once both are done, in either order.
func TestPendingOneEntryPerUpload(t *testing.T) {
	t0 := time.Now()
	tests := []struct {
		name          string
		finishFirst   bool
		wantBusyMid   bool
		wantMemberMid bool
	}{
		{"ingestion ends first", true, false, true},
		{"membership settles first", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewPending()
			tr.Start("d1", "c1", t0)
			tr.ExpectMembership("d1", "c1", t0)
			if tt.finishFirst {
				if c, ok := tr.Finish("d1"); !ok || c != "c1" {
					t.Fatalf("Finish = %q, %v", c, ok)
				}
			} else {
				tr.Settled("d1")
			}
			_, member := tr.Membership("d1")
			if busy := tr.Busy("c1", t0); busy != tt.wantBusyMid || member != tt.wantMemberMid {
				t.Fatalf("busy=%v member=%v, want %v %v", busy, member, tt.wantBusyMid, tt.wantMemberMid)
			}
			tr.Finish("d1")
			tr.Settled("d1")
			if len(tr.docs) != 0 {
				t.Fatalf("entries left: %v", tr.docs)
			}
		})
	}
}

func TestPendingMembershipsBounded(t *testing.T) {
	tr := NewPending()
	t0 := time.Now()
	for i := range maxMemberships + 10 {
		tr.ExpectMembership(fmt.Sprint(i), "c", t0)
	}
	if len(tr.docs) != maxMemberships {
		t.Fatalf("%d memberships kept, want %d", len(tr.docs), maxMemberships)
	}
	tr.ExpectMembership("late", "c", t0.Add(maxMembershipAge+time.Second))
	if _, ok := tr.Membership("late"); !ok || len(tr.docs) != 1 {
		t.Fatalf("old memberships not dropped: %d kept", len(tr.docs))
	}
}

// memberAPI records AddDocumentToCollection; SettleMembership calls nothing else.
type memberAPI struct {
	kbsync.API
	added []string
	err   error
}

func (m *memberAPI) AddDocumentToCollection(_ context.Context, collectionID, documentID string) error {
	m.added = append(m.added, collectionID+"/"+documentID)
	return m.err
}

func TestSettleMembership(t *testing.T) {
	tests := []struct {
		name        string
		tracked     bool
		status      string
		in          []string // the document's collections
		apiErr      error
		wantColl    string
		wantAdded   int
		wantErr     bool
		wantPending bool
	}{
		{name: "not uploaded here", status: r2r.IngestionSuccess},
		{name: "still ingesting", tracked: true, status: r2r.IngestionEmbedding, wantPending: true},
		{name: "failed", tracked: true, status: r2r.IngestionFailed},
		{name: "already in the collection", tracked: true, status: r2r.IngestionSuccess, in: []string{"c1"}},
		{name: "added", tracked: true, status: r2r.IngestionSuccess, wantColl: "c1", wantAdded: 1},
		{name: "added concurrently", tracked: true, status: r2r.IngestionSuccess, apiErr: r2r.ErrConflict, wantColl: "c1", wantAdded: 1},
		{name: "add fails", tracked: true, status: r2r.IngestionSuccess, apiErr: errors.New("boom"), wantColl: "c1", wantAdded: 1, wantErr: true, wantPending: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPending()
			if tt.tracked {
				p.ExpectMembership("d1", "c1", time.Now())
			}
			api := &memberAPI{err: tt.apiErr}
			coll, err := p.SettleMembership(context.Background(), api, &r2r.Document{ID: "d1", IngestionStatus: tt.status, CollectionIDs: tt.in})
			_, pending := p.Membership("d1")
			if coll != tt.wantColl || len(api.added) != tt.wantAdded || (err != nil) != tt.wantErr || pending != tt.wantPending {
				t.Fatalf("coll %q, added %v, err %v, pending %v", coll, api.added, err, pending)
			}
		})
	}
}
