package httpserve_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// invokeIn calls tool through the gateway at url with key, sending collection (when not
// "") as the X-R2R-Collection header.
func invokeIn(t testing.TB, url, key, collection, tool string, args map[string]any) (int, gateway.InvokeResponse) {
	t.Helper()
	body, _ := json.Marshal(gateway.InvokeRequest{Tool: tool, Arguments: args})
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if collection != "" {
		req.Header.Set(httpserve.CollectionHeader, collection)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gateway.InvokeResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resp.StatusCode, out
}

// seedAliceDoc adds a document named name to alice's collection and returns its id.
func seedAliceDoc(t testing.TB, tm *team, url, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\nA note of alice.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tm.Emu.SeedInto(tm.Alice.Email, dir, "alice-notes"); err != nil {
		t.Fatal(err)
	}
	if id := documentIn(t, url, tm.Alice.Key, tm.Alice.Collection, name); id != "" {
		return id
	}
	t.Fatalf("no document %s in alice's collection", name)
	return ""
}

// documentIn is the id of the document titled title in collection, listed through url
// with key; "" when there is none.
func documentIn(t testing.TB, url, key, collection, title string) string {
	t.Helper()
	status, out := invokeIn(t, url, key, "", "r2r_list_documents", map[string]any{"collection_id": collection, "limit": 100})
	if status != http.StatusOK {
		t.Fatalf("list: %d %s", status, out.Text)
	}
	for _, d := range out.Structured.(map[string]any)["documents"].([]any) {
		if doc := d.(map[string]any); doc["title"] == title {
			return doc["document_id"].(string)
		}
	}
	return ""
}

// Over serve --http, r2r_delete_document deletes in the caller's collection: the one it
// names, the request's X-R2R-Collection header, or --collection. With none of them it and
// r2r_recall are refused as the caller's to fix (400) naming the next step, not a 500; a
// document outside the collection is refused and kept.
func TestDeleteAndRecallInTheCallersCollection(t *testing.T) {
	tm := newTeam(t)
	for _, tc := range []struct {
		name       string
		serverColl bool   // --collection is alice's collection
		header     bool   // the request sends X-R2R-Collection: alice's collection
		argColl    string // "alice", "bob" or "" (no collection_id)
		tool       string
		want       int
		wantText   string
		deleted    bool
	}{
		{"delete naming the collection", false, false, "alice", "r2r_delete_document", http.StatusOK, "Deleted document", true},
		{"delete in the request's collection", false, true, "", "r2r_delete_document", http.StatusOK, "Deleted document", true},
		{"delete in the server's collection", true, false, "", "r2r_delete_document", http.StatusOK, "Deleted document", true},
		{"delete with no collection", false, false, "", "r2r_delete_document", http.StatusBadRequest, "X-R2R-Collection", false},
		{"delete naming another collection", false, false, "bob", "r2r_delete_document", http.StatusBadRequest, "is not in", false},
		{"recall with no collection", false, false, "", "r2r_recall", http.StatusBadRequest, "X-R2R-Collection", false},
		{"recall in the request's collection", false, true, "", "r2r_recall", http.StatusOK, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) {
				if tc.serverColl {
					o.Collection = tm.Alice.Collection
				}
			})
			name := strings.ReplaceAll(tc.name, " ", "-") + ".md"
			doc := seedAliceDoc(t, tm, rep.URL, name)
			args := map[string]any{}
			if tc.tool == "r2r_delete_document" {
				args["document_id"] = doc
			}
			switch tc.argColl {
			case "alice":
				args["collection_id"] = tm.Alice.Collection
			case "bob":
				args["collection_id"] = tm.Bob.Collection
			}
			header := ""
			if tc.header {
				header = tm.Alice.Collection
			}
			status, out := invokeIn(t, rep.URL, tm.Alice.Key, header, tc.tool, args)
			if status != tc.want || !strings.Contains(out.Text, tc.wantText) {
				t.Errorf("%d %q, want %d containing %q", status, out.Text, tc.want, tc.wantText)
			}
			if tc.tool != "r2r_delete_document" {
				return
			}
			if gone := documentIn(t, rep.URL, tm.Alice.Key, tm.Alice.Collection, name) == ""; gone != tc.deleted {
				t.Errorf("document deleted: %v, want %v", gone, tc.deleted)
			}
		})
	}
}

// A delete through one replica is seen through another at once: the listing the other
// replica cached is dropped through the collection generation the replicas share in Redis.
func TestDeleteThroughOneReplicaSeenByAnother(t *testing.T) {
	rs := startRedis(t)
	tm := newTeam(t)
	repA, repB := newRedisReplica(t, tm, rs.URL, nil), newRedisReplica(t, tm, rs.URL, nil)
	doc := seedAliceDoc(t, tm, repB.URL, "shared-delete.md")
	if _, out := invokeIn(t, repB.URL, tm.Alice.Key, "", "r2r_list_documents", map[string]any{"collection_id": tm.Alice.Collection, "limit": 100}); !out.Structured.(map[string]any)["cached"].(bool) {
		t.Fatal("B did not cache the listing")
	}
	if status, out := invokeIn(t, repA.URL, tm.Alice.Key, tm.Alice.Collection, "r2r_delete_document", map[string]any{"document_id": doc}); status != http.StatusOK {
		t.Fatalf("delete through A: %d %s", status, out.Text)
	}
	if id := documentIn(t, repB.URL, tm.Alice.Key, tm.Alice.Collection, "shared-delete.md"); id != "" {
		t.Error("B still lists the document A deleted")
	}
}
