package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

const (
	routeLogin   = "POST /v3/users/login"
	routeRefresh = "POST /v3/users/refresh-token"
	routeMe      = "GET /v3/users/me"
	routeLogout  = "POST /v3/users/logout"
	routeNewKey  = "POST /v3/users/{id}/api-keys"
	routeDelKey  = "DELETE /v3/users/{id}/api-keys/{key_id}"
)

func newEmulator(t *testing.T) (*r2rtest.Server, *r2r.Client) {
	t.Helper()
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// memStore is a Store in memory that records every save.
type memStore struct {
	mu    sync.Mutex
	m     map[string]Secret
	saves int
}

func newMemStore() *memStore { return &memStore{m: map[string]Secret{}} }

func (s *memStore) Load(_ context.Context, url string) (Secret, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[url]
	if !ok {
		return Secret{}, ErrNoCredential
	}
	return v, nil
}

func (s *memStore) Save(_ context.Context, url string, sec Secret) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[url] = sec
	s.saves++
	return nil
}

func (s *memStore) Delete(_ context.Context, url string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, url)
	return nil
}

func (s *memStore) Source() Source { return "memory" }

func (s *memStore) get(url string) (Secret, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[url], s.saves
}

func TestPasswordSourceLogsInLazilyAndRenews(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "s3cret-pw", false)
	ts := NewPasswordSource(TokenSourceOptions{Client: c}, "dev@example.com", "s3cret-pw")
	if n := srv.Count(routeLogin); n != 0 {
		t.Fatalf("logged in before first use: %d", n)
	}
	if strings.Contains(ts.Identity(), "dev@example.com") || strings.Contains(fmt.Sprintf("%v %#v", ts, ts), "s3cret") {
		t.Errorf("identity or formatting leaks: %q %v", ts.Identity(), ts)
	}
	if ts.Identity() != NewPasswordSource(TokenSourceOptions{Client: c}, "DEV@example.com ", "other").Identity() {
		t.Error("identity depends on email case or the password")
	}

	authed := c.WithCredentials(ts)
	ctx := context.Background()
	me, err := authed.Me(ctx)
	if err != nil || me.Email != "dev@example.com" {
		t.Fatalf("Me = %v, %v", me, err)
	}
	if _, err := authed.Me(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count(routeLogin); n != 1 {
		t.Errorf("logins = %d, want 1 (token reused)", n)
	}

	// Expired access token: the client gets a 401, the source refreshes, the call succeeds.
	srv.ExpireTokens()
	if _, err := authed.Me(ctx); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if n := srv.Count(routeRefresh); n != 1 {
		t.Errorf("refreshes = %d, want 1", n)
	}

	// A failing refresh falls back to logging in again.
	srv.ExpireTokens()
	srv.ForceStatus(routeRefresh, http.StatusUnauthorized, 1)
	if _, err := authed.Me(ctx); err != nil {
		t.Fatalf("after failed refresh: %v", err)
	}
	if n := srv.Count(routeLogin); n != 2 {
		t.Errorf("logins = %d, want 2 (re-login after refresh failure)", n)
	}
}

func TestPasswordSourceWrongPassword(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "right", false)
	ts := NewPasswordSource(TokenSourceOptions{Client: c}, "dev@example.com", "wrong-pw")
	err := ts.Apply(context.Background(), http.Header{})
	if !errors.Is(err, r2r.ErrUnauthorized) || !strings.Contains(err.Error(), "R2R_EMAIL/R2R_PASSWORD") {
		t.Fatalf("Apply = %v", err)
	}
	if strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("password in error: %v", err)
	}
}

func loginPair(t *testing.T, c *r2r.Client, email, password string) *r2r.TokenPair {
	t.Helper()
	p, err := c.Login(context.Background(), email, password)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStoredSourceRotatesAndSaves(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	first := loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token
	store := newMemStore()
	sec := Secret{Kind: KindRefreshToken, Secret: first, Email: "dev@example.com", UserID: "u"}
	if err := store.Save(context.Background(), testURL, sec); err != nil {
		t.Fatal(err)
	}
	ts := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, store)
	authed := c.WithCredentials(ts)
	ctx := context.Background()

	if _, err := authed.Me(ctx); err != nil {
		t.Fatal(err)
	}
	saved, saves := store.get(testURL)
	if saves != 2 || saved.Secret == first || saved.Kind != KindRefreshToken || saved.Email != "dev@example.com" {
		t.Fatalf("after first use: saves=%d secret changed=%v %v", saves, saved.Secret != first, saved)
	}
	// The old token was rotated away on the server.
	if _, err := c.RefreshToken(ctx, first); !errors.Is(err, r2r.ErrUnauthorized) {
		t.Errorf("old refresh token still accepted: %v", err)
	}

	srv.ExpireTokens()
	if _, err := authed.Me(ctx); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	again, saves := store.get(testURL)
	if saves != 3 || again.Secret == saved.Secret {
		t.Errorf("second rotation not saved: saves=%d", saves)
	}
	// What is stored now is the live token: another process can start from it.
	if _, err := c.RefreshToken(ctx, again.Secret); err != nil {
		t.Errorf("stored token not usable: %v", err)
	}
}

func TestStoredSourceAdoptsTokenRotatedByAnotherProcess(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	tok := loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token
	store := newMemStore()
	sec := Secret{Kind: KindRefreshToken, Secret: tok, Email: "dev@example.com"}
	_ = store.Save(context.Background(), testURL, sec)
	// Two serve processes start from the same stored token.
	a := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, store)
	b := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, store)
	ctx := context.Background()
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	// b's token was invalidated by a's rotation; b re-reads the store and uses a's.
	if err := b.Refresh(ctx); err != nil {
		t.Fatalf("b: %v", err)
	}
	if _, err := c.WithCredentials(b).Me(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStoredSourceRevokedToken(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	tok := loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token
	if _, err := c.RefreshToken(context.Background(), tok); err != nil { // rotate it away
		t.Fatal(err)
	}
	store := newMemStore()
	sec := Secret{Kind: KindRefreshToken, Secret: tok, Email: "dev@example.com"}
	_ = store.Save(context.Background(), testURL, sec)
	ts := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, store)
	err := ts.Apply(context.Background(), http.Header{})
	if !errors.Is(err, r2r.ErrUnauthorized) || !strings.Contains(err.Error(), "r2r-mcp login") {
		t.Fatalf("Apply = %v", err)
	}
	if strings.Contains(err.Error(), tok) {
		t.Error("token in error")
	}
}

func TestConcurrentRefreshHappensOnce(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	tok := loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token
	store := newMemStore()
	sec := Secret{Kind: KindRefreshToken, Secret: tok, Email: "dev@example.com"}
	_ = store.Save(context.Background(), testURL, sec)
	ts := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, store)
	ctx := context.Background()
	if err := ts.Apply(ctx, http.Header{}); err != nil { // first token
		t.Fatal(err)
	}
	srv.ResetCounts()
	gen := ts.Generation()

	// Every caller was rejected with the token of generation gen. The first wave calls
	// concurrently and shares one flight; the second wave comes after that flight ended
	// and finds the generation moved on. Either way only one renewal happens: a rotating
	// refresh token renewed twice from the same generation would waste a rotation, and
	// renewed twice concurrently would fail.
	const callers = 8
	errs := make(chan error, 2*callers)
	wave := func() {
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				if err := ts.RefreshFrom(ctx, gen); err != nil {
					errs <- err
					return
				}
				h := http.Header{}
				if err := ts.Apply(ctx, h); err != nil {
					errs <- err
					return
				}
				if _, err := c.WithCredentials(bearerFrom(h)).Me(ctx); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
	}
	wave()
	wave()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := srv.Count(routeRefresh); n != 1 {
		t.Errorf("refresh-token calls = %d, want 1", n)
	}
	if _, saves := store.get(testURL); saves != 3 {
		t.Errorf("saves = %d, want 3 (seed, first token, one renewal)", saves)
	}
	if ts.Generation() != gen+1 {
		t.Errorf("generation %d, want %d", ts.Generation(), gen+1)
	}
}

// bearerFrom turns the header a TokenSource applied into fixed credentials.
func bearerFrom(h http.Header) r2r.Credentials {
	return r2r.Bearer(strings.TrimPrefix(h.Get("Authorization"), "Bearer "))
}

func TestConcurrentCallsThroughClientAfterExpiry(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	ts := NewPasswordSource(TokenSourceOptions{Client: c}, "dev@example.com", "pw")
	authed := c.WithCredentials(ts)
	ctx := context.Background()
	if _, err := authed.Me(ctx); err != nil {
		t.Fatal(err)
	}
	srv.ExpireTokens()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := authed.Me(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent call after expiry: %v", err)
	}
	if n := srv.Count(routeLogin); n != 1 {
		t.Errorf("logins = %d, want 1 (renewals use the refresh token)", n)
	}
}

func TestRefreshCallerCancellationDoesNotFailOthers(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	// Slow answers keep the first caller's flight open while the second one joins it.
	srv.Configure(func(o *r2rtest.Options) { o.Latency = 50 * time.Millisecond })
	ts := NewPasswordSource(TokenSourceOptions{Client: c}, "dev@example.com", "pw")
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.RefreshFrom(cctx, 0); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	// The renewal runs detached from the cancelled caller, so whoever shares it succeeds.
	if err := ts.RefreshFrom(context.Background(), 0); err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if n := srv.Count(routeLogin); n != 1 || ts.Generation() != 1 {
		t.Errorf("logins %d generation %d, want 1 and 1", n, ts.Generation())
	}
}

func TestApplyRenewsTokenAboutToExpire(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	ts := NewPasswordSource(TokenSourceOptions{Client: c}, "dev@example.com", "pw")
	ctx := context.Background()
	h := http.Header{}
	if err := ts.Apply(ctx, h); err != nil {
		t.Fatal(err)
	}
	first := h.Get("Authorization")
	if tokenExpiry(strings.TrimPrefix(first, "Bearer ")).IsZero() {
		t.Fatal("emulator access tokens carry no exp claim; R2R's do, and renewal ahead of expiry depends on it")
	}
	// Move the clock to just before the token's expiry.
	ts.now = func() time.Time { return ts.exp.Add(-time.Second) }
	h2 := http.Header{}
	if err := ts.Apply(ctx, h2); err != nil {
		t.Fatal(err)
	}
	if h2.Get("Authorization") == first || srv.Count(routeRefresh) != 1 {
		t.Errorf("token not renewed before expiry (refreshes %d)", srv.Count(routeRefresh))
	}
}

func TestTokenExpiry(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		tok  string
		want time.Time
	}{
		{"h." + enc(`{"exp":1800000000.5}`) + ".s", time.Unix(1800000000, 5e8)},
		{"h." + enc(`{"sub":"x"}`) + ".s", time.Time{}},
		{"not-a-jwt", time.Time{}},
		{"h.!!!.s", time.Time{}},
	}
	for _, tt := range tests {
		if got := tokenExpiry(tt.tok); !got.Equal(tt.want) {
			t.Errorf("tokenExpiry(%q) = %v, want %v", tt.tok, got, tt.want)
		}
	}
}

func TestRenewTime(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		lifetime time.Duration
		want     time.Duration // renewal time after now
	}{
		{"long-lived token renews 30 s early", time.Hour, time.Hour - expirySkew},
		{"2 s token renews at nine tenths of its life, not at once", 2 * time.Second, 1800 * time.Millisecond},
		{"token living exactly the skew", expirySkew, expirySkew * 9 / 10},
		{"already expired token renews at its expiry", -time.Second, -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renewTime(now, now.Add(tt.lifetime))
			if want := now.Add(tt.want); !got.Equal(want) {
				t.Errorf("renewTime = now%+v, want now%+v", got.Sub(now), tt.want)
			}
		})
	}
	if !renewTime(now, time.Time{}).IsZero() {
		t.Error("unknown expiry must mean no early renewal")
	}
}
