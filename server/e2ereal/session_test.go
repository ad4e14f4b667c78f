package e2ereal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestRealTwoProcessesRenewOneSession: two r2r-mcp processes (two TokenSources, each with
// its own FileStore on one credentials file, and the shared session lock) renew the same
// stored session at the same moment, several times, against the real R2R, which rotates
// refresh tokens. Neither may log the other out.
func TestRealTwoProcessesRenewOneSession(t *testing.T) {
	r := liveR2R(t)
	ctx := context.Background()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := auth.PasswordLogin(ctx, c, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := func() *auth.FileStore { return &auth.FileStore{Path: filepath.Join(dir, auth.CredentialsFileName)} }
	if err := file().Save(ctx, r.URL, res.Secret); err != nil {
		t.Fatal(err)
	}
	opts := auth.TokenSourceOptions{Client: c, LockPath: auth.SessionLockPath(dir)}
	procs := []*auth.TokenSource{auth.NewStoredSource(opts, r.URL, res.Secret, file()), auth.NewStoredSource(opts, r.URL, res.Secret, file())}
	for round := range 4 {
		var wg sync.WaitGroup
		errs := make(chan error, 2*len(procs))
		for i, ts := range procs {
			gen := ts.Generation()
			wg.Go(func() {
				if err := ts.RefreshFrom(ctx, gen); err != nil {
					errs <- fmt.Errorf("process %d renew: %w", i, err)
					return
				}
				if _, err := c.WithCredentials(ts).Me(ctx); err != nil {
					errs <- fmt.Errorf("process %d after renewal: %w", i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
	stored, err := file().Load(ctx, r.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RefreshToken(ctx, stored.Secret); err != nil {
		t.Errorf("the stored refresh token is not the live one: %v", err)
	}
}

// BenchmarkRealSearchAfterLogin is the acceptance figure of sessions: an uncached r2r_search
// through r2r-mcp after a plain `r2r-mcp login` (the stored session, a JWT per request),
// beside the same through r2r-mcp with an R2R API key (bcrypt on every request in R2R
// 3.6.6) and the same search sent straight to R2R with a JWT. Run it with -count to
// interleave the three on the same machine:
//
//	go test -run '^$' -bench RealSearchAfterLogin -benchtime 20x -count 3 ./server/e2ereal/
func BenchmarkRealSearchAfterLogin(b *testing.B) {
	r := realR2RFromEnv(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	proj := servertest.GitProject(b, "bench-"+fmt.Sprint(time.Now().UnixNano()), map[string]string{mdPath: mdText})
	rec := newRecorder(b, r.URL)
	env := servertest.Env(b, rec.URL, "NO_PROXY=127.0.0.1,localhost")
	if res := servertest.Run(b, proj, env, r.Password+"\n", "login", "--url", rec.URL, "--email", r.Email, "--password-stdin"); res.Code != 0 {
		b.Fatalf("login exited %d: %s", res.Code, res.Stderr)
	}
	session := servertest.Serve(ctx, b, proj, env, "--rate-limit", "0")
	defer session.Close()
	ing, err := session.Call(ctx, "r2r_ingest_document", map[string]any{"file_path": mdPath, "run_async": false})
	if err != nil || ing.IsError {
		b.Fatalf("ingest: %v %s", err, ing.Text)
	}
	key := adminAPIKey(b, r)
	withKey := servertest.Serve(ctx, b, proj, servertest.Env(b, rec.URL, "NO_PROXY=127.0.0.1,localhost", "R2R_API_KEY="+key), "--rate-limit", "0")
	defer withKey.Close()

	n := 0 // no query repeats, so the cache never answers
	search := func(b *testing.B, s *servertest.Session, label string) {
		for b.Loop() {
			n++
			res, err := s.Call(ctx, "r2r_search", map[string]any{"query": fmt.Sprintf("payout queue backlog %d %s", n, label)})
			if err != nil || res.IsError {
				b.Fatalf("r2r_search: %v %s", err, res.Text)
			}
		}
	}
	b.Run("via r2r-mcp after login", func(b *testing.B) { search(b, session, "session") })
	b.Run("via r2r-mcp with an API key", func(b *testing.B) { search(b, withKey, "key") })
	b.Run("straight to R2R with a JWT", func(b *testing.B) {
		token := login(b, r)
		body := map[string]any{}
		if err := json.Unmarshal(rec.lastSearch(), &body); err != nil {
			b.Fatalf("r2r-mcp's search body: %v", err)
		}
		for b.Loop() {
			n++
			body["query"] = fmt.Sprintf("payout queue backlog %d direct", n)
			post(b, r.URL+"/v3/retrieval/search", token, body)
		}
	})
}

// adminAPIKey creates an API key for the admin (deleted when the benchmark ends).
func adminAPIKey(b *testing.B, r realR2R) string {
	b.Helper()
	ctx := context.Background()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL, Credentials: r2r.Bearer(login(b, r))})
	if err != nil {
		b.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil {
		b.Fatal(err)
	}
	key, err := c.CreateAPIKey(ctx, me.ID, "bench-"+fmt.Sprint(time.Now().UnixNano()), "BenchmarkRealSearchAfterLogin")
	if err != nil {
		var e *r2r.Error
		if errors.As(err, &e) && e.StatusCode == http.StatusForbidden {
			b.Skip("this R2R cannot create API keys")
		}
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.DeleteAPIKey(context.Background(), me.ID, key.KeyID) })
	return key.APIKey
}
