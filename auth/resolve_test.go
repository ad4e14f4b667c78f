package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// failingKeyring fails every call like a machine without a Secret Service: an injected
// Keyring says "no keyring at all" with an error matching ErrNoKeyring.
type failingKeyring struct{}

var errNoSecretService = fmt.Errorf("%w: The name org.freedesktop.secrets was not provided by any .service files", ErrNoKeyring)

func (failingKeyring) Get(string, string) (string, error) { return "", errNoSecretService }
func (failingKeyring) Set(string, string, string) error   { return errNoSecretService }
func (failingKeyring) Delete(string, string) error        { return errNoSecretService }

// lockedKeyring is a keyring that exists but refuses, like a Secret Service whose unlock
// prompt was dismissed.
type lockedKeyring struct{}

var errLocked = errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'")

func (lockedKeyring) Get(string, string) (string, error) { return "", errLocked }
func (lockedKeyring) Set(string, string, string) error   { return errLocked }
func (lockedKeyring) Delete(string, string) error        { return errLocked }

func seedKeyring(t *testing.T, k Keyring, url string, s Secret) {
	t.Helper()
	if err := (&KeyringStore{Keyring: k}).Save(context.Background(), url, s); err != nil {
		t.Fatal(err)
	}
}

func seedFile(t *testing.T, dir, url string, s Secret) {
	t.Helper()
	if err := (&FileStore{Path: filepath.Join(dir, CredentialsFileName)}).Save(context.Background(), url, s); err != nil {
		t.Fatal(err)
	}
}

func applied(t *testing.T, c r2r.Credentials) http.Header {
	t.Helper()
	h := http.Header{}
	if err := c.Apply(context.Background(), h); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return h
}

func TestResolveCredentialOrder(t *testing.T) {
	const url = "http://r2r.test:7272"
	apiKey := testSecret(KindAPIKey, "key_stored.SECRET")
	refresh := testSecret(KindRefreshToken, "refresh.jwt.token")
	refresh.KeyID = ""
	type setup struct {
		env      map[string]string
		keyring  func(t *testing.T) Keyring
		file     *Secret
		insecure bool
	}
	mem := func(s *Secret) func(t *testing.T) Keyring {
		return func(t *testing.T) Keyring {
			k := newMapKeyring()
			if s != nil {
				seedKeyring(t, k, url, *s)
			}
			return k
		}
	}
	fileSecret := testSecret(KindAPIKey, "key_file.SECRET")
	tests := []struct {
		name      string
		setup     setup
		source    Source // "file" = the file store's source
		kind      string
		header    string // expected "X-API-Key" value, or "bearer" for a TokenSource
		warning   string // substring; "" = no warning
		tokenType bool
	}{
		{name: "R2R_API_KEY wins over everything",
			setup:  setup{env: map[string]string{"R2R_API_KEY": "key_env.SECRET", "R2R_EMAIL": "a@b", "R2R_PASSWORD": "pw"}, keyring: mem(&apiKey), file: &fileSecret},
			source: SourceEnvAPIKey, kind: KindAPIKey, header: "key_env.SECRET"},
		{name: "email and password beat the keyring",
			setup:  setup{env: map[string]string{"R2R_EMAIL": "a@b", "R2R_PASSWORD": "pw"}, keyring: mem(&apiKey)},
			source: SourceEnvPassword, kind: KindPassword, tokenType: true},
		{name: "email without password is ignored with a warning",
			setup:  setup{env: map[string]string{"R2R_EMAIL": "a@b"}, keyring: mem(&apiKey)},
			source: SourceKeyring, kind: KindAPIKey, header: "key_stored.SECRET", warning: "R2R_EMAIL is set without R2R_PASSWORD"},
		{name: "password without email is ignored with a warning",
			setup:  setup{env: map[string]string{"R2R_PASSWORD": "pw"}, keyring: mem(nil)},
			source: SourceNone, warning: "R2R_PASSWORD is set without R2R_EMAIL"},
		{name: "keyring API key",
			setup:  setup{keyring: mem(&apiKey), file: &fileSecret},
			source: SourceKeyring, kind: KindAPIKey, header: "key_stored.SECRET"},
		{name: "keyring refresh token",
			setup:  setup{keyring: mem(&refresh)},
			source: SourceKeyring, kind: KindRefreshToken, tokenType: true},
		{name: "file used when the keyring is empty, with a warning",
			setup:  setup{keyring: mem(nil), file: &fileSecret},
			source: "file", kind: KindAPIKey, header: "key_file.SECRET", warning: "plain-text file"},
		{name: "file used without a keyring, warning names the keyring failure",
			setup:  setup{keyring: func(*testing.T) Keyring { return failingKeyring{} }, file: &fileSecret},
			source: "file", kind: KindAPIKey, header: "key_file.SECRET", warning: "org.freedesktop.secrets"},
		{name: "no keyring and no file: none, with a warning",
			setup:  setup{keyring: func(*testing.T) Keyring { return failingKeyring{} }},
			source: SourceNone, warning: "system keyring read failed"},
		{name: "locked keyring: the file is still read",
			setup:  setup{keyring: func(*testing.T) Keyring { return lockedKeyring{} }, file: &fileSecret},
			source: "file", kind: KindAPIKey, header: "key_file.SECRET", warning: "failed to unlock"},
		{name: "hung keyring times out to the file",
			setup:  setup{keyring: func(t *testing.T) Keyring { return newHungKeyring(t) }, file: &fileSecret},
			source: "file", kind: KindAPIKey, header: "key_file.SECRET", warning: ErrKeyringTimeout.Error()},
		{name: "insecure storage reads only the file",
			setup:  setup{keyring: mem(&apiKey), file: &fileSecret, insecure: true},
			source: "file", kind: KindAPIKey, header: "key_file.SECRET", warning: "plain-text file"},
		{name: "nothing anywhere",
			setup:  setup{keyring: mem(nil)},
			source: SourceNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup.file != nil {
				seedFile(t, dir, url, *tt.setup.file)
			}
			res, err := Resolve(context.Background(), Options{
				URLFlag:         url + "/v3/",
				Getenv:          envFunc(tt.setup.env),
				Keyring:         tt.setup.keyring(t),
				KeyringTimeout:  20 * time.Millisecond,
				ConfigDir:       dir,
				InsecureStorage: tt.setup.insecure,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.URL != url || res.URLSource != URLSourceFlag {
				t.Errorf("URL %q from %q", res.URL, res.URLSource)
			}
			wantSource := tt.source
			if wantSource == "file" {
				wantSource = FileSource(filepath.Join(dir, CredentialsFileName))
			}
			if res.Origin().Source != wantSource || res.Kind != tt.kind {
				t.Errorf("source %q kind %q; want %q %q", res.Origin().Source, res.Kind, wantSource, tt.kind)
			}
			if tt.warning == "" && res.Origin().Warning() != "" {
				t.Errorf("unexpected warning %q", res.Origin().Warning())
			}
			if tt.warning != "" && !strings.Contains(res.Origin().Warning(), tt.warning) {
				t.Errorf("warning %q does not contain %q", res.Origin().Warning(), tt.warning)
			}
			if res.Credentials == nil {
				t.Fatal("nil credentials")
			}
			if strings.Contains(res.Credentials.Identity(), "SECRET") || strings.Contains(res.Origin().Warning(), "SECRET") {
				t.Errorf("secret leaked: identity %q warning %q", res.Credentials.Identity(), res.Origin().Warning())
			}
			switch {
			case tt.tokenType:
				if _, ok := res.Credentials.(*TokenSource); !ok {
					t.Errorf("credentials %T, want *TokenSource", res.Credentials)
				}
			case tt.header != "":
				if got := applied(t, res.Credentials).Get("X-API-Key"); got != tt.header {
					t.Errorf("X-API-Key %q, want %q", got, tt.header)
				}
			default:
				if h := applied(t, res.Credentials); len(h) != 0 {
					t.Errorf("anonymous credentials set %v", h)
				}
			}
		})
	}
}

func TestResolveUsesSystemKeyringMock(t *testing.T) {
	MockKeyring()
	dir := t.TempDir()
	if err := SaveURL(dir, "http://saved:7272"); err != nil {
		t.Fatal(err)
	}
	sec := testSecret(KindAPIKey, "key_mock.SECRET")
	raw, _ := encodeSecret(sec)
	if err := keyring.Set(KeyringService, "http://saved:7272", raw); err != nil {
		t.Fatal(err)
	}
	res, err := Resolve(context.Background(), Options{Getenv: envFunc(map[string]string{ConfigDirEnv: dir})})
	if err != nil {
		t.Fatal(err)
	}
	if res.URL != "http://saved:7272" || !strings.HasPrefix(res.URLSource, "config ") || res.Origin().Source != SourceKeyring {
		t.Fatalf("got %+v", res)
	}
	if res.Email != sec.Email || res.UserID != sec.UserID || res.KeyID != sec.KeyID {
		t.Errorf("metadata %q %q %q", res.Email, res.UserID, res.KeyID)
	}
}

func TestResolveNamesTheURLFlag(t *testing.T) {
	for _, tt := range []struct{ name, want string }{{"", "flag --url"}, {"--r2r-url", "flag --r2r-url"}} {
		res, err := Resolve(context.Background(), Options{URLFlag: "http://R2R.test:7272/v3", URLFlagName: tt.name,
			Getenv: envFunc(nil), ConfigDir: t.TempDir(), Keyring: newMapKeyring()})
		if err != nil || res.URLSource != tt.want || res.URL != "http://r2r.test:7272" {
			t.Errorf("URLFlagName %q: %q from %q, %v", tt.name, res.URL, res.URLSource, err)
		}
		_, err = Resolve(context.Background(), Options{URLFlag: "r2r.test", URLFlagName: tt.name,
			Getenv: envFunc(nil), ConfigDir: t.TempDir(), Keyring: newMapKeyring()})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want+": the R2R URL must start with http://") {
			t.Errorf("URLFlagName %q: error %v", tt.name, err)
		}
	}
	if URLFlagSource("") != URLSourceFlag {
		t.Errorf("URLFlagSource(\"\") = %q", URLFlagSource(""))
	}
}

func TestResolveBadURLIsAnError(t *testing.T) {
	_, err := Resolve(context.Background(), Options{Getenv: envFunc(map[string]string{"R2R_API_BASE": "nope"}), ConfigDir: t.TempDir(), Keyring: newMapKeyring()})
	if err == nil || !strings.Contains(err.Error(), URLSourceEnvBase) {
		t.Fatalf("got %v", err)
	}
}

func TestVaultSaveAndDelete(t *testing.T) {
	ctx := context.Background()
	sec := testSecret(KindAPIKey, "key_v.SECRET")
	t.Run("keyring works: keyring only, stale file copy removed", func(t *testing.T) {
		dir := t.TempDir()
		seedFile(t, dir, testURL, testSecret(KindAPIKey, "key_old.OLD"))
		k := newMapKeyring()
		v := NewVault(dir, k, 0, false)
		store, warning, err := v.Save(ctx, testURL, sec)
		if err != nil || store.Source() != SourceKeyring || warning != "" {
			t.Fatalf("Save: %v %q %v", store, warning, err)
		}
		if _, err := v.File.Load(ctx, testURL); !errors.Is(err, ErrNoCredential) {
			t.Errorf("file copy still there: %v", err)
		}
		removed, warning, err := v.Delete(ctx, testURL)
		if err != nil || warning != "" || len(removed) != 1 || removed[0] != SourceKeyring {
			t.Fatalf("Delete: %v %q %v", removed, warning, err)
		}
		removed, _, err = v.Delete(ctx, testURL)
		if err != nil || len(removed) != 0 {
			t.Errorf("second Delete: %v %v", removed, err)
		}
	})
	t.Run("no keyring: file with a warning", func(t *testing.T) {
		dir := t.TempDir()
		v := NewVault(dir, failingKeyring{}, 0, false)
		store, warning, err := v.Save(ctx, testURL, sec)
		if err != nil || store != Store(v.File) || !strings.Contains(warning, "no usable system keyring") {
			t.Fatalf("Save: %v %q %v", store, warning, err)
		}
		got, from, _, err := v.Load(ctx, testURL)
		if err != nil || got != sec || from != Store(v.File) {
			t.Fatalf("Load: %v %v %v", got, from, err)
		}
		removed, warning, err := v.Delete(ctx, testURL)
		if err != nil || len(removed) != 1 || !strings.HasPrefix(string(removed[0]), "file ") || warning == "" {
			t.Fatalf("Delete: %v %q %v", removed, warning, err)
		}
	})
	// Only a machine without any keyring falls back to the file; a keyring that is slow (a
	// prompt being answered) or refuses is an error, and nothing is written anywhere.
	refusing := []struct {
		name string
		kr   func(t *testing.T) Keyring
		is   error
	}{
		{"slow keyring", func(t *testing.T) Keyring { return newHungKeyring(t) }, ErrKeyringTimeout},
		{"locked keyring", func(*testing.T) Keyring { return lockedKeyring{} }, ErrKeyringUnavailable},
	}
	for _, tt := range refusing {
		t.Run(tt.name+": an error, not the file", func(t *testing.T) {
			dir := t.TempDir()
			v := NewVault(dir, tt.kr(t), 20*time.Millisecond, false)
			store, warning, err := v.Save(ctx, testURL, sec)
			if !errors.Is(err, tt.is) || errors.Is(err, ErrNoKeyring) || store != nil || warning != "" {
				t.Fatalf("Save: %v %q %v", store, warning, err)
			}
			if _, err := os.Stat(v.File.Path); !os.IsNotExist(err) {
				t.Errorf("credentials file written: %v", err)
			}
		})
	}
	t.Run("Load tells a silent keyring from an empty one", func(t *testing.T) {
		v := NewVault(t.TempDir(), newHungKeyring(t), 20*time.Millisecond, false)
		_, _, warning, err := v.Load(ctx, testURL)
		if !errors.Is(err, ErrNoCredential) || !errors.Is(err, ErrKeyringTimeout) || warning == "" {
			t.Fatalf("hung: %q %v", warning, err)
		}
		v = NewVault(t.TempDir(), newMapKeyring(), 0, false)
		if _, _, _, err := v.Load(ctx, testURL); !errors.Is(err, ErrNoCredential) || errors.Is(err, ErrKeyringUnavailable) {
			t.Fatalf("empty: %v", err)
		}
	})
	t.Run("insecure: file, keyring copy removed", func(t *testing.T) {
		dir := t.TempDir()
		k := newMapKeyring()
		seedKeyring(t, k, testURL, testSecret(KindAPIKey, "key_old.OLD"))
		v := NewVault(dir, k, 0, true)
		store, warning, err := v.Save(ctx, testURL, sec)
		if err != nil || store != Store(v.File) || !strings.Contains(warning, "plain-text file") {
			t.Fatalf("Save: %v %q %v", store, warning, err)
		}
		if _, err := k.Get(KeyringService, testURL); !errors.Is(err, keyring.ErrNotFound) {
			t.Errorf("keyring copy still there: %v", err)
		}
	})
}

// TestResolveStructuredWarnings: each warning comes with its kind, the keyring's failure is
// reported as an error, and Warning is the warnings' texts joined with "; ".
func TestResolveStructuredWarnings(t *testing.T) {
	const url = "http://r2r.test:7272"
	fileSecret := testSecret(KindAPIKey, "key_file.SECRET")
	tests := []struct {
		name        string
		env         map[string]string
		keyring     Keyring
		file        bool
		insecure    bool
		kinds       []WarningKind
		keyringRead bool
		keyringErr  error // nil = KeyringErr must be nil
	}{
		{"env wins: keyring not read", map[string]string{"R2R_API_KEY": "key_env.SECRET"}, failingKeyring{}, false, false, nil, false, nil},
		{"incomplete env pair, empty keyring", map[string]string{"R2R_EMAIL": "a@b"}, newMapKeyring(), false, false,
			[]WarningKind{WarnEnvIncomplete}, true, nil},
		{"no keyring, file: one plain-text warning", nil, failingKeyring{}, true, false,
			[]WarningKind{WarnPlainTextFile}, true, ErrNoKeyring},
		{"locked keyring, nothing stored", map[string]string{"R2R_PASSWORD": "pw"}, lockedKeyring{}, false, false,
			[]WarningKind{WarnEnvIncomplete, WarnKeyringUnavailable}, true, ErrKeyringUnavailable},
		{"insecure storage: keyring not read", nil, failingKeyring{}, true, true,
			[]WarningKind{WarnPlainTextFile}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file {
				seedFile(t, dir, url, fileSecret)
			}
			env := map[string]string{"R2R_API_URL": url}
			for k, v := range tt.env {
				env[k] = v
			}
			res, err := Resolve(context.Background(), Options{Getenv: func(k string) string { return env[k] },
				Keyring: tt.keyring, ConfigDir: dir, InsecureStorage: tt.insecure})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []WarningKind
			var texts []string
			for _, w := range res.Origin().Warnings {
				kinds, texts = append(kinds, w.Kind), append(texts, w.Text)
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.kinds) {
				t.Errorf("kinds %v, want %v (%q)", kinds, tt.kinds, res.Origin().Warning())
			}
			if res.Origin().Warning() != strings.Join(texts, "; ") {
				t.Errorf("Warning %q is not the joined Warnings %q", res.Origin().Warning(), texts)
			}
			if res.KeyringRead != tt.keyringRead {
				t.Errorf("KeyringRead %v, want %v", res.KeyringRead, tt.keyringRead)
			}
			if (tt.keyringErr == nil) != (res.KeyringErr == nil) || (tt.keyringErr != nil && !errors.Is(res.KeyringErr, tt.keyringErr)) {
				t.Errorf("KeyringErr %v, want %v", res.KeyringErr, tt.keyringErr)
			}
		})
	}
}
