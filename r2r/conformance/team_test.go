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
	t.Run("member_view", func(t *testing.T) { s.memberView(t, owner, member, outsider, col.ID) })
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

// memberView proves what a team project's tools rely on beyond sync: a non-member's read of
// the team collection is a 403 "You do not have access to this collection" (tool errors
// then add whom to ask); a member lists the team collection's documents, another member's
// with its metadata (r2r_get_document's path); and RAG's search settings filters restrict
// its sources as search's do, so a view that shadows a path with the member's own version
// never cites the team's version of it.
func (s *suite) memberView(t *testing.T, owner, member, outsider *r2r.Client, teamID string) {
	ctx := t.Context()
	_, err := outsider.GetCollection(ctx, teamID)
	wantMessage(t, wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden), "You do not have access to this collection.")

	path := "docs/runbooks/quasar-" + s.sfx + ".md"
	put := func(c *r2r.Client, col, layer, text string) string {
		t.Helper()
		id := uuid.NewString()
		s.cleanupDocument(id)
		if _, err := c.CreateDocument(ctx, r2r.DocumentCreate{RawText: text, ID: id, CollectionIDs: []string{col}, IngestionMode: "fast",
			Metadata: map[string]any{"title": path, "source_path": path, "layer": layer}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngestedAs(t, c, id)
		return id
	}
	private, err := member.CreateCollection(ctx, "private-"+teamID, "")
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupCollection(private.ID)
	teamDoc := put(owner, teamID, "team", "When the quasar backlog grows, raise the drain workers to fourteen.")
	ownDoc := put(member, private.ID, "private", "When the quasar backlog grows, raise the drain workers to twenty-two.")

	p, err := member.ListCollectionDocuments(ctx, teamID, r2r.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range p.Items {
		found = found || (d.ID == teamDoc && d.Metadata["source_path"] == path)
	}
	if !found {
		t.Errorf("a member's listing of the team collection lacks the owner's document %s with its source_path", teamDoc)
	}

	yes, limit, temp, maxTokens := true, 10, 0.1, 128
	res, err := member.RAG(ctx, r2r.RAGRequest{Query: "How many drain workers when the quasar backlog grows?", SearchMode: r2r.SearchModeCustom,
		SearchSettings: &r2r.SearchSettings{UseSemanticSearch: &yes, Limit: &limit,
			Filters: r2r.ViewFilters(r2r.View{Team: teamID, Private: private.ID, Shadow: []string{path}}, nil)},
		RAGGenerationConfig: &r2r.GenerationConfig{Model: s.tg.ragModel, Temperature: &temp, MaxTokensToSample: &maxTokens}})
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, h := range res.SearchResults.ChunkSearchResults {
		docs = append(docs, h.DocumentID)
	}
	if !slices.Contains(docs, ownDoc) || slices.Contains(docs, teamDoc) {
		t.Errorf("RAG in the member's view drew on %v; want their own version %s and not the team's %s", docs, ownDoc, teamDoc)
	}

	// A document of the team collection without a source path (a memory, say) stays in the
	// view: R2R reads the missing key as NULL, which $nin alone would not match.
	noteID := uuid.NewString()
	s.cleanupDocument(noteID)
	if _, err := owner.CreateDocument(ctx, r2r.DocumentCreate{RawText: "The quasar drain workers are tuned by the pulsar team.", ID: noteID,
		CollectionIDs: []string{teamID}, IngestionMode: "fast", Metadata: map[string]any{"title": "a note"}}); err != nil {
		t.Fatal(err)
	}
	s.waitIngestedAs(t, owner, noteID)
	hits := s.searchDocs(t, member, r2r.ViewFilters(r2r.View{Team: teamID, Private: private.ID, Shadow: []string{path}}, nil), 10)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.DocumentID)
	}
	if !slices.Contains(ids, noteID) || !slices.Contains(ids, ownDoc) || slices.Contains(ids, teamDoc) {
		t.Errorf("search in the member's view found %v; want the note %s and their own version %s, not the team's %s", ids, noteID, ownDoc, teamDoc)
	}
}
