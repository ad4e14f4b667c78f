package r2rtest

import (
	"net/http"
	"net/url"
	"testing"
)

func TestCollections(t *testing.T) {
	s := NewServer(t, Options{})
	alice, aliceID := userClient(t, s, "alice@example.com")
	bob, bobID := userClient(t, s, "bob@example.com")
	admin := newTC(t, s)

	r := alice.postJSON("/v3/collections", map[string]any{"name": "Research", "description": "papers"})
	wantStatus(t, r, 200)
	col := r.results()
	id := col["id"].(string)
	if col["owner_id"] != aliceID || col["user_count"] != float64(0) || col["document_count"] != float64(0) ||
		col["graph_sync_status"] != "pending" || col["graph_cluster_status"] != "pending" || col["description"] != "papers" {
		t.Fatalf("created %v", col)
	}

	t.Run("create errors", func(t *testing.T) {
		wantR2RError(t, alice.postJSON("/v3/collections", map[string]any{"name": "Research"}), 409,
			"Collection with this ID already exists")
		wantStatus(t, bob.postJSON("/v3/collections", map[string]any{"name": "Research"}), 200) // names are per owner
		wantValidation(t, alice.postJSON("/v3/collections", map[string]any{}), "body", "name")
		wantValidation(t, alice.postJSON("/v3/collections", map[string]any{"name": 5}), "body", "name")
	})
	t.Run("get, by name, list", func(t *testing.T) {
		got := alice.get("/v3/collections/" + id).results()
		if got["user_count"] != float64(1) {
			t.Fatalf("creator must be a member: %v", got)
		}
		byName := alice.get("/v3/collections/name/Research")
		wantStatus(t, byName, 200)
		if byName.results()["id"] != id {
			t.Fatalf("%s", byName.raw)
		}
		wantR2RError(t, alice.get("/v3/collections/name/Nope"), 404, "No collection found with the specified name")
		// Superusers look up their own names unless they pass owner_id.
		wantStatus(t, admin.get("/v3/collections/name/Research"), 404)
		wantStatus(t, admin.get("/v3/collections/name/Research?owner_id="+aliceID), 200)
		wantValidation(t, admin.get("/v3/collections/name/Research?owner_id=x"), "query", "owner_id")
		// Non-superusers always look up their own collections; owner_id is ignored.
		if got := alice.get("/v3/collections/name/Research?owner_id=" + bobID).results(); got["id"] != id {
			t.Fatalf("owner_id not ignored: %v", got)
		}

		l := alice.get("/v3/collections")
		if l.body["total_entries"] != float64(2) || l.list()[0].(map[string]any)["id"] != id {
			t.Fatalf("list %s", l.raw)
		}
		if n := alice.get("/v3/collections?ids=" + id).body["total_entries"]; n != float64(1) {
			t.Fatalf("ids filter %v", n)
		}
		if n := admin.get("/v3/collections").body["total_entries"]; n != float64(5) {
			t.Fatalf("superuser sees %v collections", n)
		}
		if n := admin.get("/v3/collections?owner_only=true").body["total_entries"]; n != float64(1) {
			t.Fatalf("owner_only %v", n)
		}
		wantInternal(t, alice.get("/v3/collections?ids=x"), "ValueError", "badly formed")
		wantValidation(t, alice.get("/v3/collections?limit=5000"), "query", "limit")
	})
	t.Run("permissions", func(t *testing.T) {
		wantR2RError(t, bob.get("/v3/collections/"+id), 403, "You do not have access to this collection.")
		wantR2RError(t, bob.get("/v3/collections/"+uuid5("none")), 404, "The specified collection does not exist.")
		wantR2RError(t, admin.get("/v3/collections/"+uuid5("none")), 404, "The specified collection does not exist.")
		wantR2RError(t, admin.del("/v3/collections/"+uuid5("none")), 404, "Collection not found")
		wantValidation(t, bob.get("/v3/collections/nope"), "path", "id")
		s.mu.Lock()
		s.st.users[bobID].collectionIDs = append(s.st.users[bobID].collectionIDs, id)
		s.mu.Unlock()
		wantStatus(t, bob.get("/v3/collections/"+id), 200)
		wantStatus(t, bob.get("/v3/collections/"+id+"/documents"), 200)
		wantR2RError(t, bob.postJSON("/v3/collections/"+id, map[string]any{"name": "x"}), 403, "Insufficient permissions for this action.")
		wantR2RError(t, bob.del("/v3/collections/"+id), 403, "Insufficient permissions for this action.")
	})
	t.Run("update", func(t *testing.T) {
		r := alice.postJSON("/v3/collections/"+id, map[string]any{"name": "Research 2"})
		wantStatus(t, r, 200)
		if r.results()["name"] != "Research 2" || r.results()["description"] != "papers" {
			t.Fatalf("%v", r.results())
		}
		wantR2RError(t, alice.postJSON("/v3/collections/"+id, map[string]any{"description": "d", "generate_description": true}), 400,
			"Cannot provide both a description and request to synthetically generate a new one.")
		wantR2RError(t, alice.postJSON("/v3/collections/"+id, map[string]any{}), 400, "No fields to update")
		g := alice.postJSON("/v3/collections/"+id, map[string]any{"generate_description": true})
		if g.results()["description"] != "A collection of 0 documents." {
			t.Fatalf("%v", g.results())
		}
		def := alice.get("/v3/users/me").results()["collection_ids"].([]any)[0].(string)
		wantInternal(t, alice.postJSON("/v3/collections/"+def, map[string]any{"name": "Research 2"}), "HTTPException", "duplicate key")
		wantStatus(t, admin.postJSON("/v3/collections/"+id, map[string]any{"description": "by admin"}), 200)
	})
	t.Run("documents", func(t *testing.T) {
		doc := alice.rawText("collection member text", nil)
		path := "/v3/collections/" + id + "/documents/" + doc
		r := alice.do("POST", path, "", nil)
		wantStatus(t, r, 200)
		if r.results()["message"] != "Document assigned to collection successfully" {
			t.Fatalf("%s", r.raw)
		}
		wantR2RError(t, alice.do("POST", path, "", nil), 409, "Document is already assigned to the collection")
		wantR2RError(t, alice.do("POST", "/v3/collections/"+id+"/documents/"+uuid5("none"), "", nil), 404, "Document not found")
		wantR2RError(t, bob.do("POST", path, "", nil), 403, "Insufficient permissions for this action.")

		l := bob.get("/v3/collections/" + id + "/documents")
		if l.body["total_entries"] != float64(1) || l.list()[0].(map[string]any)["id"] != doc {
			t.Fatalf("%s", l.raw)
		}
		got := alice.get("/v3/collections/" + id).results()
		if got["document_count"] != float64(1) || got["graph_sync_status"] != "outdated" {
			t.Fatalf("%v", got)
		}
		wantValidation(t, alice.get("/v3/collections/"+id+"/documents?offset=-2"), "query", "offset")
		wantValidation(t, alice.do("POST", "/v3/collections/"+id+"/documents/nope", "", nil), "path", "document_id")

		wantStatus(t, alice.del(path), 200)
		wantR2RError(t, alice.del(path), 404, "Document not found in the specified collection")
		if n := alice.get("/v3/collections/" + id + "/documents").body["total_entries"]; n != float64(0) {
			t.Fatalf("after removal %v", n)
		}
		// The document itself survives.
		wantStatus(t, alice.get("/v3/documents/"+doc), 200)
	})
	t.Run("delete", func(t *testing.T) {
		def := alice.get("/v3/users/me").results()["collection_ids"].([]any)[0].(string)
		wantR2RError(t, alice.del("/v3/collections/"+def), 400, "Cannot delete the default user collection.")
		doc := alice.rawText("kept after delete", nil, "collection_ids", `["`+id+`"]`)
		r := alice.del("/v3/collections/" + id)
		wantStatus(t, r, 200)
		if r.results()["success"] != true {
			t.Fatalf("%s", r.raw)
		}
		wantStatus(t, alice.get("/v3/collections/"+id), http.StatusNotFound)
		d := alice.get("/v3/documents/" + doc).results()
		if len(d["collection_ids"].([]any)) != 0 {
			t.Fatalf("links not removed: %v", d["collection_ids"])
		}
		for _, cid := range alice.get("/v3/users/me").results()["collection_ids"].([]any) {
			if cid == id {
				t.Fatal("membership not removed")
			}
		}
	})
	t.Run("ingesting into a collection the user is not in assigns none", func(t *testing.T) {
		bobCol := bob.postJSON("/v3/collections", map[string]any{"name": "private"}).results()["id"].(string)
		r := alice.form("/v3/documents", url.Values{"raw_text": {"sneaky"}, "collection_ids": {`["` + bobCol + `"]`}})
		wantStatus(t, r, http.StatusAccepted)
		d := alice.get("/v3/documents/" + r.results()["document_id"].(string)).results()
		if len(d["collection_ids"].([]any)) != 0 {
			t.Fatalf("%v", d["collection_ids"])
		}
	})
}
