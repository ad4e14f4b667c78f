package project

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// storedLogin is a credential read from the store on first use, as serve's is: until then
// its identity stands for "whoever is logged in here", the same for every login.
type storedLogin struct {
	token, email string
	mu           sync.Mutex
	loaded       bool
}

func (s *storedLogin) Load(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loaded = true
	return nil
}

func (s *storedLogin) Apply(ctx context.Context, h http.Header) error {
	_ = s.Load(ctx)
	h.Set("Authorization", "Bearer "+s.token)
	return nil
}

func (s *storedLogin) Identity() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		return "keyring:same-url"
	}
	return "user:" + s.email
}

// TestMappingFollowsTheAccount: after a login as someone else, a process that reads the
// stored credential on first use (serve) resolves the collection the new account's sync
// resolves, not the one cached for the previous account, even when the new account can
// see the old one's collection (an R2R superuser sees every collection).
func TestMappingFollowsTheAccount(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	srv.CreateUser("ann@example.com", "ann-password", false)
	proj := filepath.Join(t.TempDir(), "app")
	mustMkdir(t, filepath.Join(proj, ".git"))
	cache := filepath.Join(t.TempDir(), "projects.json")
	ctx := context.Background()
	login := func(email, password string) *r2r.Client {
		anon, err := r2r.New(r2r.Options{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		pair, err := anon.Login(ctx, email, password)
		if err != nil {
			t.Fatal(err)
		}
		c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Credentials: &storedLogin{token: pair.AccessToken.Token, email: email}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	resolve := func(c *r2r.Client, create bool) *Collection {
		t.Helper()
		pc, err := NewResolver(Options{WorkDir: proj, CacheFile: cache}).Collection(ctx, c, create)
		if err != nil {
			t.Fatal(err)
		}
		return pc
	}
	ann := resolve(login("ann@example.com", "ann-password"), true)
	admin := login(r2rtest.AdminEmail, r2rtest.AdminPassword)
	mine := resolve(admin, true) // what the admin's sync writes to
	if mine.ID == ann.ID {
		t.Fatalf("the admin's sync resolved ann's collection %s", ann.ID)
	}
	if got := resolve(login(r2rtest.AdminEmail, r2rtest.AdminPassword), false); got.ID != mine.ID {
		t.Errorf("after the login as the admin, serve resolves %s (ann's is %s), sync %s", got.ID, ann.ID, mine.ID)
	}
}
