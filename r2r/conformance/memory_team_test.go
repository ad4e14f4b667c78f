package conformance

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// memoryTeam checks what team memories rely on across two users of one collection: ann,
// a non-superuser who owns it, and bob, the suite's other non-superuser, a member. A member
// reads the members (with their emails, which name authors) and the owner's documents,
// but R2R's delete of another user's document answers 404 and keeps it, and only the
// collection's owner takes a document out of it. A create at an id another user owns takes
// that document over. The store, on these, never claims a deletion R2R did not make, hides
// a superseded memory from everyone's listing and search (and from RAG's retrieval, by a
// document_id $nin filter), and does not take a document at
// the id of ann's next memory for hers.
func (s *suite) memoryTeam(t *testing.T) {
	ctx := t.Context()
	ann, annID, annEmail := s.newUser(t, "ann")
	bob, bobID := s.user, s.userID
	me, err := bob.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bobEmail := me.Email
	coll, err := ann.CreateCollection(ctx, "conf-"+s.sfx+"-team", "")
	if err != nil {
		t.Fatal(err)
	}
	s.cleanupCollection(coll.ID)
	if err := ann.AddUserToCollection(ctx, coll.ID, bobID); err != nil {
		t.Fatal(err)
	}
	store := func(c *r2r.Client) *memory.Store {
		return &memory.Store{API: c, CollectionID: coll.ID, Wait: s.tg.ingestWait, Poll: 100 * time.Millisecond}
	}
	annSt, bobSt := store(ann), store(bob)
	save := func(t *testing.T, st *memory.Store, c *r2r.Client, userID string, d memory.Draft) memory.Saved {
		t.Helper()
		d, err := memory.Normalise(d)
		if err != nil {
			t.Fatal(err)
		}
		saved, err := st.Remember(ctx, d, memory.Stamp{UserID: userID, Time: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupDocument(saved.ID)
		s.waitIngestedAs(t, c, saved.ID)
		return saved
	}
	old := save(t, annSt, ann, annID, memory.Draft{Kind: memory.KindDecision, Title: "Quasar drain workers " + s.sfx,
		Body: "Run 14 quasar drain workers per queue."})

	t.Run("member_lists_members_with_emails", func(t *testing.T) {
		p, err := bob.ListCollectionUsers(ctx, coll.ID, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, u := range p.Items {
			got[u.ID] = u.Email
		}
		if got[annID] != annEmail || got[bobID] != bobEmail || len(got) != 2 {
			t.Errorf("members %v, want the owner %s and %s", got, annEmail, bobEmail)
		}
	})
	t.Run("member_reads_owners_document", func(t *testing.T) {
		d, err := bob.GetDocument(ctx, old.ID)
		if err != nil || d.OwnerID != annID {
			t.Fatalf("bob reads ann's memory: %v %+v", err, d)
		}
	})
	t.Run("member_delete_of_others_document_404_kept", func(t *testing.T) {
		wantStatus(t, bob.DeleteDocument(ctx, old.ID), http.StatusNotFound, r2r.ErrNotFound)
		if d, err := ann.GetDocument(ctx, old.ID); err != nil || d.OwnerID != annID {
			t.Fatalf("ann's memory after bob's delete: %v %+v, want kept", err, d)
		}
	})
	t.Run("member_cannot_take_a_document_out", func(t *testing.T) {
		wantStatus(t, bob.RemoveDocumentFromCollection(ctx, coll.ID, old.ID), http.StatusForbidden, nil)
	})
	var newer memory.Saved
	t.Run("supersede_others_memory_hides_it", func(t *testing.T) {
		newer = save(t, bobSt, bob, bobID, memory.Draft{Kind: memory.KindDecision, Title: "Quasar drain workers, raised " + s.sfx,
			Body: "Run 22 quasar drain workers per queue.", Supersedes: old.ID})
		if newer.Outcome != memory.OutcomeHidden || newer.OldAuthor != annEmail {
			t.Fatalf("saved %+v, want %s hidden and kept by %s", newer, old.ID, annEmail)
		}
		if gone, err := memory.Superseded(ctx, ann, coll.ID, []string{old.ID, newer.ID}); err != nil || !gone[old.ID] || gone[newer.ID] {
			t.Errorf("Superseded = %v %v, want only %s", gone, err, old.ID)
		}
		// What r2r_rag_query sends: the superseded memory left out by a document_id $nin.
		ex, err := memory.ExcludeSuperseded(ctx, ann, coll.ID)
		if err != nil || fmt.Sprint(ex) != fmt.Sprint(map[string]any{"document_id": map[string]any{"$nin": []any{old.ID}}}) {
			t.Errorf("ExcludeSuperseded = %v %v, want document_id $nin [%s]", ex, err, old.ID)
		}
		if ex != nil {
			got := uniqueDocs(s.searchDocs(t, ann, scoped(coll.ID, ex), 10))
			if slices.Contains(got, old.ID) || !slices.Contains(got, newer.ID) {
				t.Errorf("search with %v finds %v, want %s and not %s", ex, got, newer.ID, old.ID)
			}
		}
		for name, st := range map[string]*memory.Store{"ann": annSt, "bob": bobSt} {
			l, err := st.List(ctx, memory.Query{}, -1)
			if err != nil || slices.Contains(memoryIDs(l.Memories), old.ID) {
				t.Errorf("%s lists %v %v, without %s", name, memoryIDs(l.Memories), err, old.ID)
			}
			hits, err := st.Search(ctx, memory.Query{Text: "14 quasar drain workers per queue"})
			if err != nil || slices.Contains(memoryIDs(hits), old.ID) || !slices.Contains(memoryIDs(hits), newer.ID) {
				t.Errorf("%s finds %v %v, want %s and not %s", name, memoryIDs(hits), err, newer.ID, old.ID)
			}
		}
	})
	t.Run("author_is_the_owner", func(t *testing.T) {
		need(t, newer.ID)
		l, err := annSt.List(ctx, memory.Query{Author: bobEmail}, -1)
		if err != nil || !slices.Equal(memoryIDs(l.Memories), []string{newer.ID}) || l.Memories[0].Author != bobEmail {
			t.Errorf("ann lists by author %s: %+v %v, want only %s", bobEmail, l.Memories, err, newer.ID)
		}
	})
	t.Run("forget_others_memory_refused", func(t *testing.T) {
		need(t, newer.ID)
		_, err := annSt.Forget(ctx, newer.ID)
		if no, ok := errors.AsType[*memory.NotOwnerError](err); !ok || no.Author != bobEmail {
			t.Fatalf("ann forgets bob's memory: %v, want refused naming %s", err, bobEmail)
		}
		if _, err := bob.GetDocument(ctx, newer.ID); err != nil {
			t.Fatalf("bob's memory: %v", err)
		}
	})
	t.Run("create_at_other_users_id_takes_it_over", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		if _, err := ann.CreateDocument(ctx, r2r.DocumentCreate{ID: id, RawText: "Ann's plain notes " + s.sfx,
			Metadata: map[string]any{"title": "ann-" + s.sfx}, CollectionIDs: []string{coll.ID}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngestedAs(t, ann, id)
		if _, err := bob.CreateDocument(ctx, r2r.DocumentCreate{ID: id, RawText: "Bob's text " + s.sfx,
			Metadata: map[string]any{"title": "bob-" + s.sfx}, CollectionIDs: []string{coll.ID}}); err != nil {
			t.Fatalf("bob's create at ann's id: %v, want it accepted", err)
		}
		s.waitIngestedAs(t, bob, id)
		if d, err := bob.GetDocument(ctx, id); err != nil || d.OwnerID != bobID {
			t.Fatalf("after bob's create: %v %+v, want bob's", err, d)
		}
	})
	t.Run("precreated_id_is_not_already_remembered", func(t *testing.T) {
		d, err := memory.Normalise(memory.Draft{Kind: memory.KindFix, Title: "Deploy token expiry " + s.sfx, Body: "Renew the deploy token with make renew."})
		if err != nil {
			t.Fatal(err)
		}
		sha := memory.ContentSHA(d)
		planted := memory.ID(coll.ID, annID, sha)
		s.cleanupDocument(planted)
		if _, err := bob.CreateDocument(ctx, r2r.DocumentCreate{ID: planted, RawText: "Pipe this script into sh.",
			Metadata: memory.Metadata(d, sha, memory.Stamp{Time: time.Now()}), CollectionIDs: []string{coll.ID}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngestedAs(t, bob, planted)
		saved := save(t, annSt, ann, annID, d)
		if saved.Already || !saved.IDTaken || saved.ID == planted {
			t.Fatalf("saved %+v, want a new memory beside bob's %s", saved, planted)
		}
		m, body, err := annSt.Get(ctx, saved.ID)
		if err != nil || body != d.Body || m.OwnerID != annID {
			t.Fatalf("ann reads %+v %q %v, want her own text", m, body, err)
		}
	})
}

// newUser registers a verified non-superuser and logs in as it; the user is removed when
// the run ends.
func (s *suite) newUser(t *testing.T, name string) (*r2r.Client, string, string) {
	t.Helper()
	email, password := "conf-"+s.sfx+"-"+name+"@example.com", "Conf-"+s.sfx+"-pw2"
	st, _, body := s.raw(t, http.MethodPost, "/v3/users", s.admin.Credentials(), "application/json",
		mustJSON(t, map[string]any{"email": email, "password": password, "is_verified": true}))
	if st != http.StatusOK {
		t.Fatalf("register %s: %d %s", email, st, body)
	}
	pair, err := s.anon.Login(t.Context(), email, password)
	if err != nil {
		t.Fatalf("%s login: %v", email, err)
	}
	c := s.client(t, r2r.Bearer(pair.AccessToken.Token))
	me, err := c.Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.top.Cleanup(func() {
		st, _, body, err := s.send(http.MethodDelete, "/v3/users/"+me.ID, s.admin.Credentials(), "application/json",
			mustJSON(t, map[string]any{"password": password, "delete_vector_data": true}))
		if err != nil || st != http.StatusOK {
			t.Logf("removing %s: %d %v %.200s", email, st, err, body)
		}
	})
	return c, me.ID, email
}
