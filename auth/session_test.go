package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// heldRefresh holds each successful refresh-token answer back, after R2R gave it, until
// another renewal of the session has reached R2R as well or is waiting for the session
// lock: the race two servers renewing at once run into, made sure of every time. Without
// the lock, both would trade the same refresh token.
type heldRefresh struct {
	next  http.RoundTripper
	procs [2]*TokenSource // set before the first renewal

	mu       sync.Mutex
	inflight int           // refresh-token requests sent and not yet answered
	started  chan struct{} // closed when the next refresh-token request is sent
	missed   atomic.Int32  // answers released with no other renewal in sight (after 10 s)
}

func newHeldRefresh() *heldRefresh {
	return &heldRefresh{next: http.DefaultTransport, started: make(chan struct{})}
}

func (h *heldRefresh) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Path != "/v3/users/refresh-token" {
		return h.next.RoundTrip(req)
	}
	h.mu.Lock()
	h.inflight++
	close(h.started)
	h.started = make(chan struct{})
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inflight--
		h.mu.Unlock()
	}()
	resp, err := h.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusOK {
		h.untilAnotherRenews()
	}
	return resp, err
}

// untilAnotherRenews returns once another refresh-token request is on its way or another
// TokenSource waits for the session lock.
func (h *heldRefresh) untilAnotherRenews() {
	h.mu.Lock()
	another, started := h.inflight > 1, h.started
	h.mu.Unlock()
	if another {
		return
	}
	held := func(ts *TokenSource) <-chan struct{} {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return ts.lockHeld // closed while ts waits for the lock
	}
	select {
	case <-started:
	case <-held(h.procs[0]):
	case <-held(h.procs[1]):
	case <-time.After(10 * time.Second):
		h.missed.Add(1)
	}
}

func TestStoredSessionStartsWithItsAccessToken(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	pair := loginPair(t, c, "dev@example.com", "pw")
	sec := Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, AccessToken: pair.AccessToken.Token, Email: "dev@example.com"}
	exp := tokenExpiry(pair.AccessToken.Token)
	if exp.IsZero() {
		t.Fatal("the emulator's access token has no exp")
	}
	tests := []struct {
		name     string
		now      time.Time
		refreshs int
	}{
		{"valid: no refresh at start", time.Now(), 0},
		{"due for renewal: renewed first", exp.Add(-time.Second), 1},
		{"expired: renewed first", exp.Add(time.Minute), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newMemStore()
			_ = store.Save(context.Background(), testURL, sec)
			srv.ResetCounts()
			ts := newStoredAt(c, sec, store, "", tt.now)
			h := http.Header{}
			if err := ts.Apply(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if n := srv.Count(routeRefresh); n != tt.refreshs {
				t.Errorf("refresh-token calls %d, want %d", n, tt.refreshs)
			}
			saved, _ := store.get(testURL)
			if tt.refreshs > 0 && (saved.AccessToken == sec.AccessToken || "Bearer "+saved.AccessToken != h.Get("Authorization")) {
				t.Error("the renewed access token was not saved with the refresh token")
			}
			// Renewal rotated the refresh token for good: start again from a fresh login.
			pair = loginPair(t, c, "dev@example.com", "pw")
			sec.Secret, sec.AccessToken = pair.RefreshToken.Token, pair.AccessToken.Token
		})
	}
}

// newStoredAt is NewStoredSource on a clock stopped at now.
func newStoredAt(c *r2r.Client, sec Secret, store Store, lock string, now time.Time) *TokenSource {
	return NewStoredSource(TokenSourceOptions{Client: c, LockPath: lock, Now: func() time.Time { return now }}, testURL, sec, store)
}

// Two r2r-mcp processes share one stored session (two TokenSources, each with its own
// FileStore on the same file, and the session lock). When both renew at once, R2R rotates
// the refresh token under one of them; the other must not be logged out.
func TestTwoProcessesRenewingOneSessionBothKeepWorking(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	hold := newHeldRefresh()
	slow, err := r2r.New(r2r.Options{BaseURL: srv.URL, HTTPClient: &http.Client{Transport: hold}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pair := loginPair(t, c, "dev@example.com", "pw")
	sec := Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, AccessToken: pair.AccessToken.Token, Email: "dev@example.com"}
	file := func() *FileStore { return &FileStore{Path: filepath.Join(dir, CredentialsFileName)} }
	ctx := context.Background()
	if err := file().Save(ctx, srv.URL, sec); err != nil {
		t.Fatal(err)
	}
	opts := TokenSourceOptions{Client: slow, LockPath: SessionLockPath(dir)}
	procs := []*TokenSource{NewStoredSource(opts, srv.URL, sec, file()), NewStoredSource(opts, srv.URL, sec, file())}
	hold.procs = [2]*TokenSource(procs)
	renewBothAtOnce(t, c, procs, 4)
	if n := hold.missed.Load(); n > 0 {
		t.Errorf("%d renewals met no other renewal", n)
	}
	stored, err := file().Load(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RefreshToken(ctx, stored.Secret); err != nil {
		t.Errorf("the stored refresh token is not the live one: %v", err)
	}
}

// renewBothAtOnce makes every TokenSource renew at the same moment, rounds times, and
// checks each still authenticates afterwards.
func renewBothAtOnce(t *testing.T, c *r2r.Client, procs []*TokenSource, rounds int) {
	t.Helper()
	ctx := context.Background()
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, 2*len(procs))
		for i, ts := range procs {
			gen := ts.Generation()
			wg.Go(func() {
				if err := ts.RefreshFrom(ctx, gen); err != nil {
					errs <- errors.Join(errors.New("renew"), err)
					return
				}
				if _, err := c.WithCredentials(ts).Me(ctx); err != nil {
					errs <- errors.Join(errors.New("process "+string(rune('A'+i))), err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
	}
}

func TestSessionExpiredIsOneVerdict(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	pair := loginPair(t, c, "dev@example.com", "pw")
	if _, err := c.RefreshToken(context.Background(), pair.RefreshToken.Token); err != nil { // rotate it away
		t.Fatal(err)
	}
	sec := Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, Email: "dev@example.com"}
	tests := []struct {
		name  string
		store func() Store
	}{
		{"refresh token rejected", func() Store { s := newMemStore(); _ = s.Save(context.Background(), testURL, sec); return s }},
		{"logged out meanwhile", func() Store { return newMemStore() }},
		{"replaced by an API key", func() Store {
			s := newMemStore()
			_ = s.Save(context.Background(), testURL, testSecret(KindAPIKey, "key_x.y"))
			return s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := NewStoredSource(TokenSourceOptions{Client: c}, testURL, sec, tt.store())
			err := ts.Apply(context.Background(), http.Header{})
			if !errors.Is(err, ErrSessionExpired) || err.Error() != SessionExpiredText(testURL) {
				t.Fatalf("Apply = %v", err)
			}
			if strings.Count(err.Error(), "r2r-mcp login") != 1 {
				t.Errorf("the verdict should say to log in once: %q", err)
			}
		})
	}
}

func TestSessionRenewAt(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := func(iat, exp time.Time) string {
		return "h." + enc(fmt.Sprintf(`{"iat":%d,"exp":%d}`, iat.Unix(), exp.Unix())) + ".s"
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	tests := []struct {
		name            string
		access, refresh string
		want            time.Time
	}{
		{"R2R's defaults: the refresh token at half its 7 days, long before the access token",
			jwt(t0, t0.Add(60000*time.Minute)), jwt(t0, t0.Add(7*day)), t0.Add(84 * time.Hour)},
		{"short access token: renewed before it expires",
			jwt(t0, t0.Add(time.Hour)), jwt(t0, t0.Add(7*day)), t0.Add(time.Hour - expirySkew)},
		{"refresh token without claims: the access token decides",
			jwt(t0, t0.Add(time.Hour)), "opaque", t0.Add(time.Hour - expirySkew)},
		{"access token without exp: the refresh token decides",
			"opaque", jwt(t0, t0.Add(2*day)), t0.Add(day)},
		{"neither has claims: only after a 401", "opaque", "opaque", time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sessionRenewAt(tt.access, tt.refresh, time.Time{}); !got.Equal(tt.want) {
				t.Errorf("sessionRenewAt = %v, want %v", got, tt.want)
			}
		})
	}
}

// R2R_API_KEY that cannot be sent as a header does not stop Resolve (serve must start and
// answer): every use of the credential fails with the variable, what is wrong and never
// the value, and its source says what to do.
func TestUnsendableAPIKeyIsReportedOnUse(t *testing.T) {
	tests := []struct{ name, key, want string }{
		{"inner line break", "key_abc\ndef.ghi", "R2R_API_KEY contains a line break"},
		{"trailing second line", "key_abc.def\nkey_xyz.uvw", "R2R_API_KEY contains a line break"},
		{"60 KiB", "key_" + strings.Repeat("x", 60<<10), "R2R_API_KEY is 61444 bytes long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Resolve(context.Background(), Options{URLFlag: testURL, ConfigDir: t.TempDir(),
				Getenv: envFunc(map[string]string{"R2R_API_KEY": tt.key}), Keyring: newMapKeyring()})
			if err != nil {
				t.Fatalf("Resolve = %v", err)
			}
			if res.Origin().Source != SourceEnvAPIKey || res.Kind != KindAPIKey {
				t.Fatalf("source %q kind %q", res.Origin().Source, res.Kind)
			}
			err = res.Credentials.Apply(context.Background(), http.Header{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "def.ghi") ||
				strings.Contains(err.Error(), "xyz") || strings.Contains(err.Error(), "xxxx") {
				t.Fatalf("Apply = %v", err)
			}
		})
	}
}

// The credentials file's problems are named with their fix, never "no credential".
func TestCredentialsFileProblemsAreNamed(t *testing.T) {
	good := testSecret(KindAPIKey, "key_file.SECRET")
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		is    error
		want  string
	}{
		{"corrupt", func(t *testing.T, path string) {
			if err := WritePrivateFile(path, []byte("{oops")); err != nil {
				t.Fatal(err)
			}
		}, ErrCorruptFile, "run r2r-mcp login (it sets the file aside"},
		{"readable by others", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrInsecureFile, "run `chmod 600 "},
		{"30 MB", func(t *testing.T, path string) {
			if err := WritePrivateFile(path, append([]byte(`{"credentials": {}}`), make([]byte, 30<<20)...)); err != nil {
				t.Fatal(err)
			}
		}, ErrCorruptFile, "is 30 MiB, far larger than r2r-mcp writes"},
		{"owned by another user", func(t *testing.T, path string) {
			if runtime.GOOS == "windows" || os.Getuid() != 0 {
				t.Skip("needs root to give the file away")
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, ErrForeignFile, "owned by uid 65534, not by you (uid 0), so r2r-mcp will not use it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			store := &FileStore{Path: filepath.Join(dir, CredentialsFileName)}
			if err := store.Save(context.Background(), testURL, good); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, store.Path)
			_, err := store.Load(context.Background(), testURL)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "SECRET") ||
				!strings.Contains(err.Error(), store.Path) {
				t.Fatalf("Load = %v", err)
			}
			res, err := Resolve(context.Background(), Options{URLFlag: testURL, ConfigDir: dir, InsecureStorage: true, Getenv: envFunc(nil)})
			if err != nil || res.Origin().Source != SourceNone || !strings.Contains(res.Origin().Warning(), tt.want) {
				t.Errorf("Resolve: source %q warning %q (%v)", res.Origin().Source, res.Origin().Warning(), err)
			}
			// serve on a machine without a keyring: the file's problem (with its fix) comes
			// first, the keyring's absence after it.
			lazy, err := ResolveLazy(context.Background(), Options{URLFlag: testURL, ConfigDir: dir, Getenv: envFunc(nil), Keyring: failingKeyring{}})
			if err != nil {
				t.Fatal(err)
			}
			_ = lazy.Credentials.(*LazyCredentials).Load(context.Background())
			ws := lazy.Credentials.(*LazyCredentials).Origin().Warnings
			if len(ws) != 2 || !strings.Contains(ws[0].Text, tt.want) || ws[1].Kind != WarnKeyringUnavailable {
				t.Errorf("serve's warnings: %+v", ws)
			}
		})
	}
}

// R2R's clock 2 h behind this machine's (or ahead of it): a token's life counts from when
// it was received, so ten calls make no refresh at all, and a session stored before the
// receipt time was kept makes one, after which it has one.
func TestClockSkewDoesNotRenewEveryCall(t *testing.T) {
	tests := []struct {
		name      string
		skew      time.Duration // this machine's clock minus R2R's
		received  bool
		refreshes int
	}{
		{"R2R 2 h behind", 2 * time.Hour, true, 0},
		{"R2R 2 h behind, stored without receipt time", 2 * time.Hour, false, 1},
		{"R2R 2 h ahead", -2 * time.Hour, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, c := newEmulator(t)
			srv.CreateUser("dev@example.com", "pw", false)
			clock := &testClock{}
			clock.set(time.Now().Add(tt.skew))
			pair := loginPair(t, c, "dev@example.com", "pw")
			sec := Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, AccessToken: pair.AccessToken.Token, Email: "dev@example.com"}
			if tt.received {
				sec.ReceivedAt = clock.now()
			}
			store := newMemStore()
			_ = store.Save(context.Background(), testURL, sec)
			srv.ResetCounts()
			ts := NewStoredSource(TokenSourceOptions{Client: c, Now: clock.now}, testURL, sec, store)
			client := c.WithCredentials(ts)
			for i := range 10 {
				if _, err := client.Me(context.Background()); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				clock.set(clock.now().Add(time.Minute))
			}
			if n := srv.Count(routeRefresh); n != tt.refreshes {
				t.Errorf("%d refresh-token calls for 10 calls, want %d", n, tt.refreshes)
			}
			// The token expires an hour after it was received, whatever its exp claim says.
			clock.set(clock.now().Add(time.Hour))
			if err := ts.Apply(context.Background(), http.Header{}); err != nil || srv.Count(routeRefresh) != tt.refreshes+1 {
				t.Errorf("an hour on: %v, %d refreshes", err, srv.Count(routeRefresh))
			}
		})
	}
}

// testClock is a clock tests move while renewals may read it.
type testClock struct{ t atomic.Int64 }

func (c *testClock) set(t time.Time) { c.t.Store(t.UnixNano()) }
func (c *testClock) now() time.Time  { return time.Unix(0, c.t.Load()) }
