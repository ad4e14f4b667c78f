package conformance

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestEmulatorNoAuth runs the checks of an R2R with authentication off against the emulator.
func TestEmulatorNoAuth(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	runNoAuth(t, &target{url: srv.URL, hc: srv.HTTPClient(), ingestWait: 10 * time.Second})
}

// TestLiveNoAuth runs them against the R2R at R2R_CONFORMANCE_NOAUTH_URL, which must have
// authentication off.
func TestLiveNoAuth(t *testing.T) {
	url := os.Getenv("R2R_CONFORMANCE_NOAUTH_URL")
	if url == "" {
		t.Skip("R2R_CONFORMANCE_NOAUTH_URL is not set; set it to an R2R with authentication off to run these checks against it")
	}
	runNoAuth(t, &target{url: url, ingestWait: 2 * time.Minute})
}

// runNoAuth checks what r2r-mcp relies on when R2R runs without authentication: requests
// without credentials act as the default superuser, and credentials that are sent must
// still be valid.
func runNoAuth(t *testing.T, tg *target) {
	s := &suite{tg: tg, sfx: randomSuffix(), top: t}
	s.anon = s.client(t, nil)
	s.admin = s.anon
	ctx := t.Context()
	t.Run("noauth", func(t *testing.T) {
		t.Run("health", func(t *testing.T) {
			if err := s.anon.Health(ctx); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("anonymous_is_default_superuser", func(t *testing.T) {
			me, err := s.anon.Me(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !me.IsSuperuser || me.Email == "" || !isUUID(me.ID) {
				t.Errorf("me = %+v, want the default superuser", me)
			}
			s.adminID = me.ID
		})
		t.Run("bad_bearer_401", func(t *testing.T) {
			_, err := s.client(t, r2r.Bearer("abc")).Me(ctx)
			e := wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
			wantMessage(t, e, "Invalid token or API key")
		})
		t.Run("bad_api_key_401", func(t *testing.T) {
			_, err := s.client(t, r2r.APIKey("key_abc.def")).Me(ctx)
			e := wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
			wantMessage(t, e, "Invalid token or API key")
		})
		need(t, s.adminID)
		t.Run("api_key_acts_as_superuser", func(t *testing.T) {
			k, err := s.anon.CreateAPIKey(ctx, s.adminID, "conf-"+s.sfx, "")
			if err != nil {
				t.Fatal(err)
			}
			s.top.Cleanup(func() {
				ctx, cancel := cleanupCtx()
				defer cancel()
				_ = s.anon.DeleteAPIKey(ctx, s.adminID, k.KeyID)
			})
			me, err := s.client(t, r2r.APIKey(k.APIKey)).Me(ctx)
			if err != nil || me.ID != s.adminID {
				t.Fatalf("me with the key: %v %v", me, err)
			}
		})
		var coll, doc string
		t.Run("collection", func(t *testing.T) {
			c, err := s.anon.CreateCollection(ctx, "conf-"+s.sfx, "")
			if err != nil {
				t.Fatal(err)
			}
			s.cleanupCollection(c.ID)
			if c.OwnerID == nil || *c.OwnerID != s.adminID {
				t.Errorf("owner %v, want the default superuser %s", c.OwnerID, s.adminID)
			}
			got, err := s.anon.GetCollectionByName(ctx, c.Name)
			if err != nil || got.ID != c.ID {
				t.Fatalf("by name: %v %v", got, err)
			}
			coll = c.ID
		})
		need(t, coll)
		t.Run("ingest_and_search", func(t *testing.T) {
			id := uuid.NewString()
			s.cleanupDocument(id)
			if _, err := s.anon.CreateDocument(ctx, r2r.DocumentCreate{RawText: "Pelican no-auth notes " + s.sfx + ".",
				ID: id, CollectionIDs: []string{coll}}); err != nil {
				t.Fatal(err)
			}
			s.waitIngested(t, id)
			hitsOnly(t, s.searchDocs(t, s.anon, scoped(coll, nil), 10), id)
			doc = id
		})
		t.Run("rag", func(t *testing.T) {
			need(t, doc)
			s.collA = coll
			res, err := s.anon.RAG(ctx, s.ragRequest("", 128))
			if err != nil {
				t.Fatal(err)
			}
			hitsOnly(t, res.SearchResults.ChunkSearchResults, doc)
		})
	})
}
