package conformance

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// team proves what r2r-mcp's team commands rely on: who may list, add and remove a
// collection's members, who may take a document out of it or delete it, and two things
// R2R 3.6.6 allows that a team must know (anyone who knows a collection's id can join it,
// and anyone who can write an existing document's id takes the document over).
func (s *suite) team(t *testing.T) {
	ctx := t.Context()
	owner, ownerID := s.user, s.userID
	member, memberID, _ := s.newUser(t, "member")
	outsider, outsiderID, _ := s.newUser(t, "outsider")
	col, err := owner.CreateCollection(ctx, "team-"+s.sfx, "")
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupCollection(col.ID)

	t.Run("owner_manages_members", func(t *testing.T) {
		if err := owner.AddUserToCollection(ctx, col.ID, memberID); err != nil {
			t.Fatal(err)
		}
		wantMessage(t, wantStatus(t, owner.AddUserToCollection(ctx, col.ID, memberID), http.StatusBadRequest, nil), "User already in collection")
		wantMessage(t, wantStatus(t, owner.AddUserToCollection(ctx, col.ID, uuid.NewString()), http.StatusNotFound, r2r.ErrNotFound), "User not found")
		wantMessage(t, wantStatus(t, member.AddUserToCollection(ctx, col.ID, outsiderID), http.StatusForbidden, r2r.ErrForbidden),
			"Insufficient permissions for this action.")
		_, err := outsider.ListCollectionUsers(ctx, col.ID, r2r.ListParams{})
		wantMessage(t, wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden), "You do not have access to this collection.")
		p, err := member.ListCollectionUsers(ctx, col.ID, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, u := range p.Items {
			ids = append(ids, u.ID)
		}
		if !slices.Contains(ids, ownerID) || !slices.Contains(ids, memberID) || len(ids) != 2 || p.Total != 2 {
			t.Errorf("members listed by a member: %v (total %d), want the owner and the member", ids, p.Total)
		}
		wantMessage(t, wantStatus(t, owner.RemoveUserFromCollection(ctx, col.ID, outsiderID), http.StatusBadRequest, nil),
			"User is not a member of the specified collection")
	})
	t.Run("only_a_superuser_lists_users", func(t *testing.T) {
		_, err := owner.ListUsers(ctx, r2r.ListParams{})
		wantMessage(t, wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden), "Only a superuser can call the `users_overview` endpoint.")
		p, err := s.admin.ListUsers(ctx, r2r.ListParams{IDs: []string{memberID}})
		if err != nil || len(p.Items) != 1 || p.Items[0].ID != memberID {
			t.Fatalf("superuser lists users: %+v %v", p, err)
		}
	})
	t.Run("documents_of_members", func(t *testing.T) {
		put := func(c *r2r.Client, text string) string {
			t.Helper()
			id := uuid.NewString()
			s.cleanupDocument(id)
			if _, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: text + " " + s.sfx, ID: id, CollectionIDs: []string{col.ID},
				IngestionMode: "fast"}); err != nil {
				t.Fatal(err)
			}
			s.waitIngestedAs(t, c, id)
			return id
		}
		ownerDoc := put(owner, "The owner's runbook says the drain workers are fourteen.")
		memberDoc := put(member, "The member's copy says the drain workers are twenty-two.")
		// Only a document's owner deletes it; R2R's 404 also means "not yours".
		wantMessage(t, wantStatus(t, member.DeleteDocument(ctx, ownerDoc), http.StatusNotFound, r2r.ErrNotFound),
			"Document not found or insufficient permissions")
		// The collection's owner takes any document out of the collection; the document stays.
		if err := owner.RemoveDocumentFromCollection(ctx, col.ID, memberDoc); err != nil {
			t.Fatalf("the owner takes a member's document out: %v", err)
		}
		d, err := member.GetDocument(ctx, memberDoc)
		if err != nil || slices.Contains(d.CollectionIDs, col.ID) {
			t.Fatalf("the member's document after being taken out: %+v %v", d, err)
		}
		// Anyone who writes an existing document's id takes the document over: its owner,
		// metadata and text become the writer's (what makes an id that others can compute
		// worthless as proof of who wrote a document).
		if _, err := member.CreateDocument(ctx, r2r.DocumentCreate{RawText: "Taken over " + s.sfx, ID: ownerDoc,
			Metadata: map[string]any{"by": "member"}, CollectionIDs: []string{col.ID}, IngestionMode: "fast"}); err != nil {
			t.Fatalf("a member writes the owner's document id: %v", err)
		}
		s.waitIngestedAs(t, member, ownerDoc)
		d, err = owner.GetDocument(ctx, ownerDoc)
		if err != nil || d.OwnerID != memberID || d.Metadata["by"] != "member" {
			t.Fatalf("after a member wrote the owner's document id: owner %s metadata %v (%v); want the member's", d.OwnerID, d.Metadata, err)
		}
	})
	t.Run("anyone_who_knows_the_id_joins", func(t *testing.T) {
		st, _, body := s.raw(t, http.MethodPost, "/v3/users/"+outsiderID+"/collections/"+col.ID, outsider.Credentials(), "", nil)
		if st != http.StatusOK {
			t.Fatalf("an outsider adds themselves: %d %s", st, body)
		}
		if _, err := outsider.GetCollection(ctx, col.ID); err != nil {
			t.Fatalf("the outsider after joining: %v", err)
		}
		st, _, _ = s.raw(t, http.MethodPost, "/v3/users/"+memberID+"/collections/"+col.ID, outsider.Credentials(), "", nil)
		if st != http.StatusForbidden {
			t.Errorf("adding someone else through the users route: %d, want 403", st)
		}
	})
}
