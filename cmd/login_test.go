package cmd

import (
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

func TestLoginRefusals(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		stdin string
		want  string
	}{
		{name: "R2R_API_KEY set", env: map[string]string{"R2R_API_KEY": "key_env.x"},
			args: []string{"--email", testEmail, "--password-stdin"}, stdin: testPassword, want: "R2R_API_KEY is set"},
		{name: "both stdin flags", args: []string{"--email", testEmail, "--password-stdin", "--api-key-stdin"},
			stdin: testPassword, want: "--password-stdin and --api-key-stdin cannot be used together"},
		{name: "password-stdin without email", args: []string{"--password-stdin"}, stdin: testPassword,
			want: "--password-stdin needs --email"},
		{name: "email with api-key-stdin", args: []string{"--email", testEmail, "--api-key-stdin"}, stdin: "key_a.b",
			want: "--email is not used with --api-key-stdin"},
		{name: "no terminal and nothing on stdin flags", args: []string{"--email", testEmail}, stdin: testPassword,
			want: "stdin is not a terminal"},
		{name: "empty password on stdin", args: []string{"--email", testEmail, "--password-stdin"}, stdin: "\n",
			want: "no password on stdin"},
		{name: "blank API key on stdin", args: []string{"--api-key-stdin"}, stdin: "  \n", want: "no API key on stdin"},
		{name: "bad URL", args: []string{"--url", "localhost:7272", "--email", testEmail, "--password-stdin"},
			stdin: testPassword, want: "--url: the R2R URL must start with http:// or https://"},
		{name: "URL with credentials", args: []string{"--url", "https://admin:" + urlSecret + "@r2r.example.com", "--email", testEmail, "--password-stdin"},
			stdin: testPassword, want: "--url: the R2R URL must not contain user info (credentials belong in r2r-mcp login or R2R_API_KEY)"},
		{name: "URL with a key in the query", args: []string{"--url", "https://r2r.example.com/v3?api_key=" + urlSecret, "--email", testEmail, "--password-stdin"},
			stdin: testPassword, want: "--url: the R2R URL must not contain a query string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t)
			for k, v := range tt.env {
				f.env[k] = v
			}
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--url") {
				args = append([]string{"--url", f.srv.URL}, args...)
			}
			r := f.login(strings.NewReader(tt.stdin), args...)
			if r.err == nil || !strings.Contains(r.err.Error(), tt.want) {
				t.Fatalf("err = %v; want it to contain %q", r.err, tt.want)
			}
			assertNoSecrets(t, r, urlSecret)
			f.assertNothingStored()
			if n := len(f.srv.Counts()); n != 0 {
				t.Errorf("requests sent to R2R: %v", f.srv.Counts())
			}
		})
	}
}

func TestLoginPasswordStoresOnlyASession(t *testing.T) {
	f := newAuthFixture(t)
	r := f.loginWithPassword()
	if r.err != nil {
		t.Fatalf("login: %v\n%s", r.err, r.stderr)
	}
	sec, raw, err := f.keyringSecret()
	if err != nil {
		t.Fatalf("nothing in the keyring: %v", err)
	}
	if sec.Kind != auth.KindRefreshToken || sec.Email != testEmail || sec.UserID != f.uid || sec.KeyID != "" || sec.CreatedAt.IsZero() ||
		sec.AccessToken == "" {
		t.Errorf("stored %v", sec)
	}
	if strings.Contains(raw, testPassword) {
		t.Fatalf("the keyring entry holds the password")
	}
	if !f.sessionWorks(sec) {
		t.Error("stored session does not work")
	}
	if n := f.srv.Count(routeNewKeyCmd); n != 0 {
		t.Errorf("API keys created: %d (R2R bcrypt-checks them on every request)", n)
	}
	want := "✓ Logged in to " + f.srv.URL + " as " + testEmail + "; R2R session stored in the system keyring\n"
	if !strings.HasSuffix(r.stderr, want) {
		t.Errorf("stderr %q does not end with %q", r.stderr, want)
	}
	assertNoSecrets(t, r, sec.Secret, sec.AccessToken)
	cfg, _, err := auth.LoadConfig(f.dir)
	if err != nil || cfg.URL != f.srv.URL {
		t.Errorf("saved URL %q, %v", cfg.URL, err)
	}
	if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
		t.Errorf("credentials file written although the keyring works")
	}
}

const routeNewKeyCmd = "POST /v3/users/{id}/api-keys"

// urlSecret rides in URLs given to login; no output may repeat it.
const urlSecret = "UrlSecret-9f8e7d"

func TestLoginNormalisesURL(t *testing.T) {
	f := newAuthFixture(t)
	r := f.login(strings.NewReader(testPassword), "--url", f.srv.URL+"/v3/", "--email", testEmail, "--password-stdin")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, _, err := f.keyringSecret(); err != nil {
		t.Errorf("entry not stored under the normalised URL: %v", err)
	}
}

func TestLoginURLFromEnvironment(t *testing.T) {
	f := newAuthFixture(t)
	f.env["R2R_API_BASE"] = f.srv.URL + "/v3"
	r := f.login(strings.NewReader(testPassword), "--email", testEmail, "--password-stdin")
	if r.err != nil || !strings.Contains(r.stderr, "Logged in to "+f.srv.URL+" ") {
		t.Fatalf("login: %v %q", r.err, r.stderr)
	}
}

func TestLoginErrorsStoreNothing(t *testing.T) {
	closed := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}()
	tests := []struct {
		name     string
		url      string // "" = the emulator
		email    string
		password string
		setup    func(f *authFixture)
		want     []string
	}{
		{name: "wrong password", email: testEmail, password: "nope-wrong",
			want: []string{"wrong password for " + testEmail, "Incorrect email or password", "Nothing was stored"}},
		{name: "unknown email", email: "ghost@example.com", password: testPassword,
			want: []string{"no R2R account ghost@example.com", "User not found", "Nothing was stored"}},
		{name: "unreachable server", url: closed, email: testEmail, password: testPassword,
			want: []string{"cannot reach R2R at " + closed, "Start R2R, or point r2r-mcp at it", "Nothing was stored"}},
		{name: "https to a plain-HTTP R2R", url: "https://", email: testEmail, password: testPassword,
			want: []string{"answers plain HTTP, not HTTPS", "Use http://", "Nothing was stored"}},
		{name: "server down", email: testEmail, password: testPassword,
			setup: func(f *authFixture) { f.srv.Down(true) },
			want:  []string{"cannot reach R2R", "Nothing was stored"}},
		{name: "server unavailable", email: testEmail, password: testPassword,
			setup: func(f *authFixture) { f.srv.ForceStatus("POST /v3/users/login", http.StatusServiceUnavailable, 1) },
			want:  []string{"unavailable right now (503", "Nothing was stored"}},
		{name: "not an R2R server", email: testEmail, password: testPassword,
			setup: func(f *authFixture) { f.srv.ForceStatus("POST /v3/users/login", http.StatusMethodNotAllowed, 1) },
			want:  []string{"does not look like an R2R v3 server", "Nothing was stored"}},
		{name: "account check fails with a 500", email: testEmail, password: testPassword,
			setup: func(f *authFixture) { f.srv.ForceStatus("GET /v3/users/me", http.StatusInternalServerError, 1) },
			want:  []string{"failed while trying to check account (500", "Try again in a moment", "Nothing was stored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			url := tt.url
			switch url {
			case "":
				url = f.srv.URL
			case "https://":
				url = "https://" + strings.TrimPrefix(f.srv.URL, "http://")
			}
			r := f.login(strings.NewReader(tt.password), "--url", url, "--email", tt.email, "--password-stdin")
			if r.err == nil {
				t.Fatal("login succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q does not contain %q", r.err, w)
				}
			}
			assertNoSecrets(t, r, tt.password)
			f.assertNothingStored()
		})
	}
}

func TestLoginWithAPIKeyStdin(t *testing.T) {
	f := newAuthFixture(t)
	// A key the user made elsewhere.
	made := f.seedAPIKey()
	if err := keyring.Delete(auth.KeyringService, f.srv.URL); err != nil {
		t.Fatal(err)
	}
	r := f.login(strings.NewReader("  "+made.Secret+"\n"), "--url", f.srv.URL, "--api-key-stdin")
	if r.err != nil {
		t.Fatal(r.err)
	}
	sec, _, err := f.keyringSecret()
	if err != nil || sec.Secret != made.Secret || sec.KeyID != "" || sec.Email != testEmail {
		t.Fatalf("stored %v, %v", sec, err)
	}
	if !strings.Contains(r.stderr, "✓ Logged in to "+f.srv.URL+" as "+testEmail+"; API key ") {
		t.Errorf("stderr %q", r.stderr)
	}
	assertNoSecrets(t, r, made.Secret)

	bad := f.login(strings.NewReader("key_wrong.secret-part"), "--url", f.srv.URL, "--api-key-stdin")
	if bad.err == nil || !strings.Contains(bad.err.Error(), "rejected the API key") {
		t.Fatalf("bad key: %v", bad.err)
	}
	assertNoSecrets(t, bad, "secret-part")
}

func TestLoginWithoutKeyringUsesFileWithWarning(t *testing.T) {
	f := newAuthFixture(t)
	// go-keyring's answer where it has no backend; auth's tests cover D-Bus's equivalents.
	auth.MockKeyringWithError(keyring.ErrUnsupportedPlatform)
	t.Cleanup(auth.MockKeyring)
	r := f.loginWithPassword()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.stderr, "! no usable system keyring (system keyring write failed: unsupported platform") || !strings.Contains(r.stderr, "stored in "+f.credentialsFile()+" (plain-text file)") {
		t.Errorf("stderr %q", r.stderr)
	}
	fi, err := os.Stat(f.credentialsFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(f.credentialsFile())
	if strings.Contains(string(b), testPassword) || !strings.Contains(string(b), `"kind": "refresh_token"`) {
		t.Errorf("file content is not just a session entry")
	}
}

func TestLoginInsecureStorage(t *testing.T) {
	f := newAuthFixture(t)
	r := f.loginWithPassword("--insecure-storage")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if _, _, err := f.keyringSecret(); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring used despite --insecure-storage: %v", err)
	}
	if !strings.Contains(r.stderr, "plain-text file") {
		t.Errorf("no warning: %q", r.stderr)
	}
	res, err := auth.Resolve(t.Context(), auth.Options{Getenv: func(string) string { return "" }, ConfigDir: f.dir})
	if err != nil || string(res.Origin().Source) != "file "+f.credentialsFile() || res.Origin().Warning() == "" {
		t.Errorf("Resolve after insecure login: %+v %v", res, err)
	}
}

func TestLoginAgainRevokesPreviousKey(t *testing.T) {
	f := newAuthFixture(t)
	first := f.seedAPIKey() // what an earlier login stored
	r := f.loginWithPassword()
	if r.err != nil {
		t.Fatal(r.err)
	}
	second, _, _ := f.keyringSecret()
	if second.Kind != auth.KindRefreshToken {
		t.Fatalf("stored %v", second)
	}
	if f.keyWorks(first.Secret) || !f.sessionWorks(second) {
		t.Error("previous key not revoked, or new session broken")
	}
	if !strings.Contains(r.stderr, "Revoked this machine's previous API key "+auth.ShortKey(first.Secret)) {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestLoginRegistered(t *testing.T) {
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}}, Getenv: func(string) string { return "" }})
	for _, name := range []string{"login", "logout"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("%s not registered: %v", name, err)
		}
	}
}

// hungKeyring blocks until the test ends, like a keyring waiting on an unlock prompt
// nobody answers: every call, or with writesOnly only Set (reads answer at once, empty).
type hungKeyring struct {
	release    chan struct{}
	writesOnly bool
}

func newHungKeyring(t *testing.T, writesOnly bool) hungKeyring {
	k := hungKeyring{release: make(chan struct{}), writesOnly: writesOnly}
	t.Cleanup(func() { close(k.release) })
	return k
}

func (k hungKeyring) Get(string, string) (string, error) {
	if !k.writesOnly {
		<-k.release
	}
	return "", keyring.ErrNotFound
}
func (k hungKeyring) Set(string, string, string) error { <-k.release; return nil }
func (k hungKeyring) Delete(string, string) error {
	if !k.writesOnly {
		<-k.release
	}
	return keyring.ErrNotFound
}

// TestLoginWithSlowKeyring: a keyring that does not answer (a prompt nobody answers yet) is
// an error naming the next step, never a silent move to the plain-text file.
func TestLoginWithSlowKeyring(t *testing.T) {
	t.Run("reads hang: stop before anything is created", func(t *testing.T) {
		f := newAuthFixture(t)
		hung := newHungKeyring(t, false)
		f.tweak = func(e *authEnv) { e.Keyring, e.KeyringTimeout = hung, 20*time.Millisecond }
		r := f.loginWithPassword()
		if r.err == nil {
			t.Fatalf("login succeeded: %q", r.stderr)
		}
		for _, w := range []string{"the system keyring did not answer within 20ms", "Unlock it and retry", "--insecure-storage", "Nothing was stored."} {
			if !strings.Contains(r.err.Error(), w) {
				t.Errorf("error %q lacks %q", r.err, w)
			}
		}
		if n := len(f.srv.Counts()); n != 0 {
			t.Errorf("requests sent to R2R: %v", f.srv.Counts())
		}
		f.assertNothingStored()
	})
	t.Run("writes hang: the new session is revoked", func(t *testing.T) {
		f := newAuthFixture(t)
		hung := newHungKeyring(t, true)
		f.tweak = func(e *authEnv) { e.Keyring, e.KeyringTimeout = hung, 20*time.Millisecond }
		r := f.loginWithPassword()
		if r.err == nil || !strings.Contains(r.err.Error(), "did not answer within 20ms") ||
			!strings.Contains(r.err.Error(), "Nothing was stored; the new R2R session was revoked") {
			t.Fatalf("login: %v", r.err)
		}
		if f.srv.Count("POST /v3/users/refresh-token") != 1 || f.srv.Count("POST /v3/users/logout") == 0 {
			t.Errorf("session not revoked: refreshes %d, logouts %d", f.srv.Count("POST /v3/users/refresh-token"), f.srv.Count("POST /v3/users/logout"))
		}
		if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
			t.Errorf("credentials file written: %v", err)
		}
		assertNoSecrets(t, r)
	})
	t.Run("--insecure-storage does not wait for the keyring", func(t *testing.T) {
		f := newAuthFixture(t)
		hung := newHungKeyring(t, false)
		f.tweak = func(e *authEnv) { e.Keyring, e.KeyringTimeout = hung, 20*time.Millisecond }
		r := f.loginWithPassword("--insecure-storage")
		if r.err != nil || !strings.Contains(r.stderr, "(plain-text file)") {
			t.Fatalf("login: %v %q", r.err, r.stderr)
		}
		// logout cannot ask the keyring, but the file copy is found, revoked and removed.
		r = f.logout("--url", f.srv.URL)
		if r.err != nil || !strings.Contains(r.stderr, "session ended on the server") || !strings.Contains(r.stderr, auth.ErrKeyringTimeout.Error()) {
			t.Errorf("logout: %v %q", r.err, r.stderr)
		}
		if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
			t.Errorf("credentials file left: %v", err)
		}
	})
	t.Run("logout does not guess 'not logged in'", func(t *testing.T) {
		f := newAuthFixture(t)
		hung := newHungKeyring(t, false)
		f.tweak = func(e *authEnv) { e.Keyring, e.KeyringTimeout = hung, 20*time.Millisecond }
		r := f.logout("--url", f.srv.URL)
		if r.err == nil || !strings.Contains(r.err.Error(), "did not answer within 20ms") ||
			!strings.Contains(r.err.Error(), "run r2r-mcp logout again") || strings.Contains(r.stderr, "Not logged in") {
			t.Fatalf("logout: %v %q", r.err, r.stderr)
		}
	})
	t.Run("login and logout give a prompt two minutes", func(t *testing.T) {
		if got := (authEnv{}).interactiveKeyringTimeout(); got != 2*time.Minute {
			t.Errorf("default %v", got)
		}
		if got := (authEnv{KeyringTimeout: time.Second}).interactiveKeyringTimeout(); got != time.Second {
			t.Errorf("explicit %v", got)
		}
	})
}

func TestLoginNotesOverridingEnvironment(t *testing.T) {
	f := newAuthFixture(t)
	f.env["R2R_EMAIL"], f.env["R2R_PASSWORD"] = "other@example.com", "x"
	f.env["R2R_API_URL"] = "http://elsewhere:7272"
	r := f.loginWithPassword()
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, w := range []string{"R2R_EMAIL and R2R_PASSWORD are set", "R2R_API_URL is set to http://elsewhere:7272", "serve will use that URL, not " + f.srv.URL} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not contain %q", r.stderr, w)
		}
	}
	// A URL that does not normalise is named by its problem, never echoed: it may carry a
	// secret.
	f3 := newAuthFixture(t)
	f3.env["R2R_API_BASE"] = "https://admin:" + urlSecret + "@r2r.example.com"
	r = f3.loginWithPassword()
	if r.err != nil || !strings.Contains(r.stderr, "Note: R2R_API_BASE is set in this environment, but the R2R URL must not contain user info") {
		t.Errorf("login: %v %q", r.err, r.stderr)
	}
	assertNoSecrets(t, r, urlSecret)
	// The same URL given both ways is no reason for a note.
	f2 := newAuthFixture(t)
	f2.env["R2R_API_URL"] = f2.srv.URL + "/v3"
	if r := f2.loginWithPassword(); r.err != nil || strings.Contains(r.stderr, "Note:") {
		t.Errorf("login: %v %q", r.err, r.stderr)
	}
}

// A corrupt credentials file is set aside by login, which then succeeds.
func TestLoginReplacesACorruptCredentialsFile(t *testing.T) {
	f := newAuthFixture(t)
	if err := auth.WritePrivateFile(f.credentialsFile(), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	r := f.loginWithPassword("--insecure-storage")
	if r.err != nil {
		t.Fatalf("login: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, "was not valid JSON; moved it to "+f.credentialsFile()+".corrupt") {
		t.Errorf("stderr %q", r.stderr)
	}
	res, err := auth.Resolve(t.Context(), auth.Options{Getenv: func(string) string { return "" }, ConfigDir: f.dir, InsecureStorage: true})
	if err != nil || res.Kind != auth.KindRefreshToken {
		t.Errorf("after login: %+v %v", res, err)
	}
}
