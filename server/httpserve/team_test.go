package httpserve_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
)

// member is one R2R user of a team test: an API key and a collection holding a document
// only that user can read, whose text contains Secret.
type member struct {
	Email, Key, KeyID, UserID, Collection, Secret string
}

// team is an emulated R2R with two users, alice and bob, each with a private collection.
type team struct {
	Emu        *r2rtest.Server
	Alice, Bob member
}

func newTeam(t testing.TB) *team {
	t.Helper()
	emu := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	tm := &team{Emu: emu}
	tm.Alice = addMember(t, emu, "alice@example.com", "alice-notes", "The payout queue of alice is drained by the marigold worker.")
	tm.Bob = addMember(t, emu, "bob@example.com", "bob-notes", "The payout queue of bob is drained by the tamarind worker.")
	return tm
}

func addMember(t testing.TB, emu *r2rtest.Server, email, collection, text string) member {
	t.Helper()
	ctx := context.Background()
	id := emu.CreateUser(email, "pw-"+email, false)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "payout.md"), []byte("# Payout queue\n\n"+text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := emu.SeedInto(email, dir, collection); err != nil {
		t.Fatal(err)
	}
	c, err := r2r.New(r2r.Options{BaseURL: emu.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(ctx, email, "pw-"+email)
	if err != nil {
		t.Fatal(err)
	}
	key, err := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token)).CreateAPIKey(ctx, id, "team", "")
	if err != nil {
		t.Fatal(err)
	}
	uc := c.WithCredentials(r2r.APIKey(key.APIKey))
	page, err := uc.ListCollections(ctx, r2r.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := member{Email: email, Key: key.APIKey, KeyID: key.KeyID, UserID: id, Secret: map[bool]string{true: "marigold", false: "tamarind"}[email == "alice@example.com"]}
	for _, col := range page.Items {
		if col.Name == collection {
			m.Collection = col.ID
		}
	}
	if m.Collection == "" {
		t.Fatalf("no collection %s for %s", collection, email)
	}
	return m
}

// replica is one serve --http in-process.
type replica struct {
	URL     string
	Handler *httpserve.Handler
	Metrics *metrics.Metrics
	Base    *server.Server
}

// newReplica builds a replica against tm's R2R; adjust tweaks the configuration.
func newReplica(t testing.TB, tm *team, adjust func(*server.Config, *httpserve.Options)) *replica {
	t.Helper()
	return newRedisReplica(t, tm, "", adjust)
}

// newRedisReplica is newReplica sharing state through the Redis at redisURL ("" = none),
// wired as serve --http --redis-url does.
func newRedisReplica(t testing.TB, tm *team, redisURL string, adjust func(*server.Config, *httpserve.Options)) *replica {
	t.Helper()
	m := metrics.New()
	opts0 := server.DefaultOptions()
	opts0.Tools.RateLimit, opts0.Tools.RAGRateLimit = 0, 0 // off: the tests make many calls at once
	cfg := server.Config{R2RURL: tm.Emu.URL, Remote: true, ConfigDir: t.TempDir(), WorkDir: t.TempDir(),
		Metrics: m, Options: opts0}
	opts := httpserve.Options{HTTPOptions: opts0.HTTP, Metrics: m}
	if adjust != nil {
		adjust(&cfg, &opts)
	}
	base, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(base.Close)
	m.WatchBreaker(base.Breaker.State)
	opts.Cache = m.Cache(base.Cache)
	if redisURL != "" {
		store, err := redisl2.Open(redisURL, redisl2.Options{Observer: m, Timeout: testRedisTimeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		opts.Cache, opts.SharedLimits, opts.History, opts.SyncJobs = store.Cache(base.Cache), store, store, store
		opts.Ready = map[string]func(context.Context) error{"redis": store.Ping}
	}
	h, err := httpserve.New(base, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &replica{URL: srv.URL, Handler: h, Metrics: m, Base: base}
}
