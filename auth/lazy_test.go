package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// gatedKeyring is an in-memory keyring whose Get waits until the gate opens (an unlock
// prompt being answered) and may fail a scripted number of times first. It counts Gets.
type gatedKeyring struct {
	*mapKeyring
	gate     chan struct{}
	openOnce sync.Once

	mu      sync.Mutex
	gets    int
	getting chan struct{} // closed by the first Get (when not nil)
	fail    []error       // returned, in order, by the first Gets (after the gate)
}

// newGatedKeyring returns a keyring whose gate is closed when closed is true. The gate
// opens when the test ends at the latest, so no goroutine outlives it.
func newGatedKeyring(t *testing.T, closed bool) *gatedKeyring {
	k := &gatedKeyring{mapKeyring: newMapKeyring(), gate: make(chan struct{}), getting: make(chan struct{})}
	if !closed {
		k.open()
	}
	t.Cleanup(k.open)
	return k
}

func (k *gatedKeyring) open() { k.openOnce.Do(func() { close(k.gate) }) }

func (k *gatedKeyring) Get(service, account string) (string, error) {
	k.mu.Lock()
	if k.gets++; k.gets == 1 && k.getting != nil {
		close(k.getting)
	}
	k.mu.Unlock()
	<-k.gate
	k.mu.Lock()
	if len(k.fail) > 0 {
		err := k.fail[0]
		k.fail = k.fail[1:]
		k.mu.Unlock()
		return "", err
	}
	k.mu.Unlock()
	return k.mapKeyring.Get(service, account)
}

func (k *gatedKeyring) getCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gets
}

func lazyOptions(t *testing.T, kr Keyring, env map[string]string) Options {
	return Options{URLFlag: testURL, Getenv: envFunc(env), Keyring: kr, KeyringTimeout: 20 * time.Millisecond, ConfigDir: t.TempDir()}
}

func mustLazy(t *testing.T, opts Options) (*LazyCredentials, Resolved) {
	t.Helper()
	res, err := ResolveLazy(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := res.Credentials.(*LazyCredentials)
	if !ok {
		t.Fatalf("credentials %T, want *LazyCredentials", res.Credentials)
	}
	return l, res
}

func TestResolveLazyDoesNotTouchTheKeyring(t *testing.T) {
	kr := newGatedKeyring(t, true) // any read would block
	seedKeyring(t, kr.mapKeyring, testURL, testSecret(KindAPIKey, "key_stored.SECRET"))
	l, res := mustLazy(t, lazyOptions(t, kr, map[string]string{"R2R_PASSWORD": "pw"}))
	if kr.getCount() != 0 || l.Loaded() {
		t.Fatalf("keyring read %d times before first use", kr.getCount())
	}
	wantID := "keyring:" + r2r.Fingerprint(testURL)
	if res.URL != testURL || res.URLSource != URLSourceFlag || res.Origin().Source != SourceKeyringPending || res.Kind != "" ||
		l.Identity() != wantID || l.Origin().Source != SourceKeyringPending {
		t.Errorf("before use: %+v identity %q", res, l.Identity())
	}
	if !strings.Contains(res.Origin().Warning(), "R2R_PASSWORD is set without R2R_EMAIL") || l.Origin().Warning() != res.Origin().Warning() {
		t.Errorf("environment warning %q / %q", res.Origin().Warning(), l.Origin().Warning())
	}
	if got := StartOrigin(l); got.Warning() != res.Origin().Warning() || got.Source != SourceKeyringPending {
		t.Errorf("start-up origin %+v: the environment's warning, source pending", got)
	}
	for _, s := range []string{fmt.Sprint(l), fmt.Sprintf("%#v", l)} {
		if strings.Contains(s, "SECRET") || !strings.Contains(s, wantID) {
			t.Errorf("formatted as %q", s)
		}
	}

	t.Run("environment credentials stay eager", func(t *testing.T) {
		res, err := ResolveLazy(context.Background(), lazyOptions(t, kr, map[string]string{"R2R_API_KEY": "key_env.SECRET"}))
		if err != nil || res.Origin().Source != SourceEnvAPIKey || applied(t, res.Credentials).Get("X-API-Key") != "key_env.SECRET" {
			t.Fatalf("%+v %v", res, err)
		}
		res, err = ResolveLazy(context.Background(), lazyOptions(t, kr, map[string]string{"R2R_EMAIL": "a@b", "R2R_PASSWORD": "pw"}))
		if _, ok := res.Credentials.(*TokenSource); err != nil || !ok || res.Origin().Source != SourceEnvPassword {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("insecure storage reads only the file, at once", func(t *testing.T) {
		opts := lazyOptions(t, kr, nil)
		opts.InsecureStorage = true
		seedFile(t, opts.ConfigDir, testURL, testSecret(KindAPIKey, "key_file.SECRET"))
		res, err := ResolveLazy(context.Background(), opts)
		if err != nil || res.Origin().Source != FileSource(filepath.Join(opts.ConfigDir, CredentialsFileName)) {
			t.Fatalf("%+v %v", res, err)
		}
	})
	if kr.getCount() != 0 {
		t.Errorf("keyring read %d times", kr.getCount())
	}
}

func TestLazyCredentialsReadOnFirstUse(t *testing.T) {
	apiKey := testSecret(KindAPIKey, "key_stored.SECRET")
	fileKey := testSecret(KindAPIKey, "key_file.SECRET")
	tests := []struct {
		name    string
		keyring func(t *testing.T) Keyring
		file    *Secret
		source  Source // "file" = the file store's source
		header  string // X-API-Key sent; "" = nothing
		warning string // substring; "" = none
	}{
		{name: "keyring", keyring: func(t *testing.T) Keyring {
			k := newMapKeyring()
			seedKeyring(t, k, testURL, apiKey)
			return k
		}, file: &fileKey, source: SourceKeyring, header: "key_stored.SECRET"},
		{name: "empty keyring, file", keyring: func(*testing.T) Keyring { return newMapKeyring() }, file: &fileKey,
			source: "file", header: "key_file.SECRET", warning: "plain-text file"},
		{name: "no keyring at all, file", keyring: func(*testing.T) Keyring { return failingKeyring{} }, file: &fileKey,
			source: "file", header: "key_file.SECRET", warning: "org.freedesktop.secrets"},
		{name: "locked keyring, file", keyring: func(*testing.T) Keyring { return lockedKeyring{} }, file: &fileKey,
			source: "file", header: "key_file.SECRET", warning: "failed to unlock"},
		{name: "no keyring at all, no file", keyring: func(*testing.T) Keyring { return failingKeyring{} },
			source: SourceNone, warning: "org.freedesktop.secrets"},
		{name: "nothing stored", keyring: func(*testing.T) Keyring { return newMapKeyring() }, source: SourceNone},
		{name: "unusable keyring entry", keyring: func(*testing.T) Keyring {
			k := newMapKeyring()
			_ = k.Set(KeyringService, testURL, "not json SECRET")
			return k
		}, source: SourceNone, warning: "unusable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counted := &gatedKeyring{mapKeyring: newMapKeyring(), gate: make(chan struct{})}
			close(counted.gate)
			opts := lazyOptions(t, nil, nil)
			kr := tt.keyring(t)
			if mk, ok := kr.(*mapKeyring); ok {
				counted.mapKeyring = mk
				kr = counted
			}
			opts.Keyring = kr
			if tt.file != nil {
				seedFile(t, opts.ConfigDir, testURL, *tt.file)
			}
			l, _ := mustLazy(t, opts)
			for range 2 {
				if got := applied(t, l).Get("X-API-Key"); got != tt.header {
					t.Fatalf("X-API-Key %q, want %q", got, tt.header)
				}
			}
			if kr == counted && counted.getCount() != 1 {
				t.Errorf("keyring read %d times; a result is kept", counted.getCount())
			}
			want := tt.source
			if want == "file" {
				want = FileSource(filepath.Join(opts.ConfigDir, CredentialsFileName))
			}
			snap := l.Snapshot()
			if !l.Loaded() || l.Origin().Source != want || snap.Origin().Source != want || snap.URL != testURL || snap.Credentials != r2r.Credentials(l) {
				t.Errorf("source %q, snapshot %+v; want %q", l.Origin().Source, snap, want)
			}
			switch tt.header {
			case "":
				if l.Identity() != r2r.Anonymous().Identity() || snap.Kind != "" {
					t.Errorf("identity %q kind %q", l.Identity(), snap.Kind)
				}
			default:
				if l.Identity() != r2r.APIKey(tt.header).Identity() || snap.Kind != KindAPIKey || snap.Email != "dev@example.com" || snap.KeyID != "k-1" {
					t.Errorf("identity %q snapshot %+v", l.Identity(), snap)
				}
			}
			if (tt.warning == "") != (l.Origin().Warning() == "") || !strings.Contains(l.Origin().Warning(), tt.warning) || snap.Origin().Warning() != l.Origin().Warning() {
				t.Errorf("warning %q, want %q", l.Origin().Warning(), tt.warning)
			}
			if start := StartOrigin(l); start.Source != want || start.Warning() != "" {
				t.Errorf("start-up origin %+v: the source as read, and no warning of the read's (it logs its own)", start)
			}
			if strings.Contains(l.Origin().Warning()+l.Identity()+fmt.Sprint(l), "SECRET") {
				t.Errorf("secret leaked: %q %q", l.Origin().Warning(), l.Identity())
			}
		})
	}
}

func TestLazyCredentialsShareOneRead(t *testing.T) {
	kr := newGatedKeyring(t, true)
	seedKeyring(t, kr.mapKeyring, testURL, testSecret(KindAPIKey, "key_stored.SECRET"))
	opts := lazyOptions(t, kr, nil)
	opts.KeyringTimeout = time.Minute // callers wait for the prompt to be answered
	l, _ := mustLazy(t, opts)
	const callers = 8
	errs := make(chan error, callers)
	for range callers {
		go func() {
			h := http.Header{}
			err := l.Apply(context.Background(), h)
			if err == nil && h.Get("X-API-Key") != "key_stored.SECRET" {
				err = fmt.Errorf("header %v", h)
			}
			errs <- err
		}()
	}
	select {
	case <-kr.getting:
	case <-time.After(10 * time.Second):
		t.Fatal("no keyring read started")
	}
	kr.open()
	for range callers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := kr.getCount(); n != 1 {
		t.Errorf("%d keyring reads for %d concurrent first uses, want 1", n, callers)
	}
}

func TestLazyCredentialsRetryAfterTimeout(t *testing.T) {
	ctx := context.Background()
	t.Run("a read that outlives the caller's wait serves the next call", func(t *testing.T) {
		kr := newGatedKeyring(t, true)
		seedKeyring(t, kr.mapKeyring, testURL, testSecret(KindAPIKey, "key_stored.SECRET"))
		l, _ := mustLazy(t, lazyOptions(t, kr, nil))
		err := l.Apply(ctx, http.Header{})
		if !errors.Is(err, ErrKeyringTimeout) || !errors.Is(err, ErrKeyringUnavailable) || !strings.Contains(err.Error(), "unlock it") ||
			!strings.Contains(err.Error(), "waited 20ms") {
			t.Fatalf("first use with a silent keyring: %v", err)
		}
		if l.Loaded() || l.Identity() != "keyring:"+r2r.Fingerprint(testURL) || l.Origin().Source != SourceKeyringPending {
			t.Fatalf("a timeout was taken for an answer: %q %q", l.Identity(), l.Origin().Source)
		}
		kr.open() // the user unlocks the keyring
		l.wait = time.Minute
		if got := applied(t, l).Get("X-API-Key"); got != "key_stored.SECRET" {
			t.Fatalf("after unlocking: X-API-Key %q", got)
		}
		if n := kr.getCount(); n != 1 {
			t.Errorf("keyring read %d times; the second call should have joined the first read", n)
		}
	})
	t.Run("a read that failed is not remembered", func(t *testing.T) {
		kr := newGatedKeyring(t, false)
		kr.fail = []error{errLocked}
		seedKeyring(t, kr.mapKeyring, testURL, testSecret(KindAPIKey, "key_stored.SECRET"))
		l, _ := mustLazy(t, lazyOptions(t, kr, nil))
		if err := l.Load(ctx); !errors.Is(err, errLocked) || errors.Is(err, ErrNoKeyring) || l.Loaded() {
			t.Fatalf("first use with a locked keyring: %v (loaded %v)", err, l.Loaded())
		}
		if got := applied(t, l).Get("X-API-Key"); got != "key_stored.SECRET" || kr.getCount() != 2 {
			t.Fatalf("second use: X-API-Key %q after %d reads", got, kr.getCount())
		}
	})
	t.Run("a read that timed out itself is not remembered", func(t *testing.T) {
		kr := newGatedKeyring(t, true)
		seedKeyring(t, kr.mapKeyring, testURL, testSecret(KindAPIKey, "key_stored.SECRET"))
		l, _ := mustLazy(t, lazyOptions(t, kr, nil))
		l.read.Keyring.Timeout = 30 * time.Millisecond // instead of two minutes
		l.wait = time.Minute
		if err := l.Load(ctx); !errors.Is(err, ErrKeyringTimeout) || l.Loaded() {
			t.Fatalf("read against a silent keyring: %v", err)
		}
		kr.open()
		if err := l.Load(ctx); err != nil || l.Origin().Source != SourceKeyring || kr.getCount() != 2 {
			t.Fatalf("next read: %v, source %q, %d reads", err, l.Origin().Source, kr.getCount())
		}
	})
	t.Run("a caller whose context ends leaves at once", func(t *testing.T) {
		kr := newGatedKeyring(t, true)
		opts := lazyOptions(t, kr, nil)
		opts.KeyringTimeout = time.Hour
		l, _ := mustLazy(t, opts)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := l.Apply(cctx, http.Header{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}

// storedKeyWorld is an emulated R2R with a user whose API key, made by makeAPIKey under
// keyName, is in an in-memory keyring, and a client using the LazyCredentials that read it.
func storedKeyWorld(t *testing.T, keyName string) (srv *r2rtest.Server, c *r2r.Client, kr *mapKeyring, made LoginResult, l *LazyCredentials, client *r2r.Client) {
	t.Helper()
	srv, c = newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	made = makeAPIKey(t, c, "dev@example.com", "pw", keyName)
	kr = newMapKeyring()
	seedKeyring(t, kr, srv.URL, made.Secret)
	opts := lazyOptions(t, kr, nil)
	opts.URLFlag = srv.URL
	l, res := mustLazy(t, opts)
	client, err := r2r.New(r2r.Options{BaseURL: res.URL, Credentials: res.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, kr, made, l, client
}

func TestLazyCredentialsWithR2R(t *testing.T) {
	ctx := context.Background()
	t.Run("API key", func(t *testing.T) {
		_, _, _, made, l, client := storedKeyWorld(t, "n")
		if me, err := client.Me(ctx); err != nil || me.Email != "dev@example.com" {
			t.Fatalf("Me: %v %v", me, err)
		}
		if l.Origin().Source != SourceKeyring || l.Identity() != r2r.APIKey(made.Secret.Secret).Identity() {
			t.Errorf("source %q identity %q", l.Origin().Source, l.Identity())
		}
		// An API key cannot renew itself; the client gets R2R's 401, not a replay.
		if err := l.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "cannot be renewed") {
			t.Errorf("Refresh: %v", err)
		}
	})
	t.Run("refresh token renews and is written back", func(t *testing.T) {
		srv, c := newEmulator(t)
		srv.CreateUser("dev@example.com", "pw", false)
		sec := testSecret(KindRefreshToken, loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token)
		sec.KeyID = ""
		kr := newMapKeyring()
		seedKeyring(t, kr, srv.URL, sec)
		opts := lazyOptions(t, kr, nil)
		opts.URLFlag = srv.URL
		l, res := mustLazy(t, opts)
		client, err := r2r.New(r2r.Options{BaseURL: res.URL, Credentials: res.Credentials})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.Me(ctx); err != nil {
			t.Fatalf("Me: %v", err)
		}
		if g := l.Generation(); g != 2 || l.Snapshot().Kind != KindRefreshToken || !strings.HasPrefix(l.Identity(), "user:") {
			t.Errorf("generation %d snapshot %+v identity %q", g, l.Snapshot(), l.Identity())
		}
		srv.ExpireTokens()
		if _, err := client.Me(ctx); err != nil {
			t.Fatalf("Me after the access token expired: %v", err)
		}
		if n := srv.Count(routeRefresh); n != 2 {
			t.Errorf("refresh-token calls %d, want 2 (first use, then after expiry)", n)
		}
		stored, err := (&KeyringStore{Keyring: kr}).Load(ctx, srv.URL)
		if err != nil || stored.Secret == sec.Secret || stored.Kind != KindRefreshToken {
			t.Errorf("rotated token not written back to the keyring: %v %v", stored, err)
		}
	})
	t.Run("nothing stored", func(t *testing.T) {
		l, _ := mustLazy(t, lazyOptions(t, newMapKeyring(), nil))
		if err := l.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "r2r-mcp login") {
			t.Errorf("Refresh: %v", err)
		}
	})
}

// TestLazyCredentialsPickUpANewLogin: serve is running with a stored API key that gets
// revoked; the user runs `r2r-mcp login` in a terminal (a new key in the keyring). The next
// call, rejected with 401, re-reads the store once and succeeds, without a restart; many
// concurrent rejected calls share that one re-read.
func TestLazyCredentialsPickUpANewLogin(t *testing.T) {
	ctx := context.Background()
	srv, c, kr, first, l, client := storedKeyWorld(t, "first")
	if _, err := client.Me(ctx); err != nil {
		t.Fatalf("Me with the first key: %v", err)
	}

	// Revoked, and nothing new stored yet: the 401 stands, and the advice needs no restart.
	if _, err := Revoke(ctx, c, first.Secret); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Me(ctx); !errors.Is(err, r2r.ErrUnauthorized) {
		t.Fatalf("Me with a revoked key: %v, want 401", err)
	}
	if err := l.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "the next call uses the new key") ||
		strings.Contains(err.Error(), "restart") {
		t.Errorf("Refresh with nothing newer stored: %v", err)
	}

	second := makeAPIKey(t, c, "dev@example.com", "pw", "second")
	seedKeyring(t, kr, srv.URL, second.Secret)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := client.Me(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Me after a new login: %v", err)
	}
	if got, want := l.Identity(), r2r.APIKey(second.Secret.Secret).Identity(); got != want {
		t.Errorf("identity %q, want the new key's %q", got, want)
	}
	if l.Snapshot().KeyID != second.Secret.KeyID {
		t.Errorf("snapshot key id %q, want the new key's", l.Snapshot().KeyID)
	}
}

// TestLazyCredentialsWithSystemKeyringMock goes through SystemKeyring (go-keyring's mock),
// as serve does.
func TestLazyCredentialsWithSystemKeyringMock(t *testing.T) {
	MockKeyring()
	raw, _ := encodeSecret(testSecret(KindAPIKey, "key_mock.SECRET"))
	if err := keyring.Set(KeyringService, testURL, raw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = keyring.Delete(KeyringService, testURL) })
	l, _ := mustLazy(t, Options{URLFlag: testURL, Getenv: envFunc(nil), ConfigDir: t.TempDir()})
	if got := applied(t, l).Get("X-API-Key"); got != "key_mock.SECRET" || l.Origin().Source != SourceKeyring {
		t.Fatalf("X-API-Key %q source %q", got, l.Origin().Source)
	}
}
