package upload

import (
	"fmt"
	"testing"
	"time"
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
