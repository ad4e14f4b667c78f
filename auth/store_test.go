package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

const testURL = "http://r2r.test:7272"

func testSecret(kind, secret string) Secret {
	return Secret{Kind: kind, Secret: secret, UserID: "u-1", Email: "dev@example.com", KeyID: "k-1",
		CreatedAt: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)}
}

func TestSecretNeverPrinted(t *testing.T) {
	s := testSecret(KindAPIKey, "key_abcdef.TOPSECRET")
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "cred", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), logged.String()} {
		if strings.Contains(out, "TOPSECRET") {
			t.Errorf("secret leaked: %s", out)
		}
		if !strings.Contains(out, "dev@example.com") {
			t.Errorf("email missing from %s", out)
		}
	}
	if _, err := decodeSecret("TOPSECRET-not-json"); err == nil || strings.Contains(err.Error(), "TOPSECRET") {
		t.Errorf("decode error %v", err)
	}
}

func TestPublicKeyAndShortKey(t *testing.T) {
	tests := []struct{ key, pub, short string }{
		{"key_abcdef12.secretpart", "key_abcdef12", "key_ab…"},
		{"key_a.b", "key_a", "key_a…"},
		{"no-dot", "", ""},
		{"other_x.y", "", ""},
		{"key_.y", "", ""},
	}
	for _, tt := range tests {
		if got := PublicKeyOf(tt.key); got != tt.pub {
			t.Errorf("PublicKeyOf(%q) = %q, want %q", tt.key, got, tt.pub)
		}
		if got := ShortKey(tt.key); got != tt.short {
			t.Errorf("ShortKey(%q) = %q, want %q", tt.key, got, tt.short)
		}
	}
}

// hungKeyring blocks every call until release is closed, like a keyring waiting for an
// unlock prompt nobody answers.
type hungKeyring struct{ release chan struct{} }

func newHungKeyring(t *testing.T) *hungKeyring {
	k := &hungKeyring{release: make(chan struct{})}
	t.Cleanup(func() { close(k.release) })
	return k
}

func (k *hungKeyring) Get(string, string) (string, error) {
	<-k.release
	return "", keyring.ErrNotFound
}
func (k *hungKeyring) Set(string, string, string) error { <-k.release; return nil }
func (k *hungKeyring) Delete(string, string) error      { <-k.release; return nil }

// mapKeyring is an injected in-memory keyring (safe for concurrent use) for tests that must
// not share go-keyring's process-wide mock.
type mapKeyring struct {
	mu sync.Mutex
	m  map[string]string
}

func newMapKeyring() *mapKeyring { return &mapKeyring{m: map[string]string{}} }

func (k *mapKeyring) Get(service, account string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[service+"|"+account]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (k *mapKeyring) Set(service, account, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[service+"|"+account] = secret
	return nil
}

func (k *mapKeyring) Delete(service, account string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[service+"|"+account]; !ok {
		return keyring.ErrNotFound
	}
	delete(k.m, service+"|"+account)
	return nil
}

func TestKeyringStoreWithGoKeyringMock(t *testing.T) {
	MockKeyring()
	ctx := context.Background()
	s := &KeyringStore{}
	if _, err := s.Load(ctx, testURL); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("empty keyring: %v", err)
	}
	want := testSecret(KindAPIKey, "key_abc.def")
	if err := s.Save(ctx, testURL, want); err != nil {
		t.Fatal(err)
	}
	raw, err := keyring.Get(KeyringService, testURL)
	if err != nil || !strings.Contains(raw, `"kind":"api_key"`) || !strings.Contains(raw, `"key_id":"k-1"`) {
		t.Fatalf("raw keyring entry %q, %v", raw, err)
	}
	got, err := s.Load(ctx, testURL)
	if err != nil || got != want {
		t.Fatalf("Load = %v, %v; want %v", got, err, want)
	}
	if _, err := s.Load(ctx, "http://other:7272"); !errors.Is(err, ErrNoCredential) {
		t.Errorf("other URL: %v", err)
	}
	if err := s.Delete(ctx, testURL); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, testURL); !errors.Is(err, ErrNoCredential) {
		t.Errorf("second delete: %v", err)
	}
	if err := keyring.Set(KeyringService, testURL, "garbage"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, testURL); err == nil || errors.Is(err, ErrKeyringUnavailable) {
		t.Errorf("garbage entry: %v", err)
	}
}

func TestKeyringStoreUnavailable(t *testing.T) {
	MockKeyringWithError(errors.New("org.freedesktop.secrets was not provided by any .service files"))
	t.Cleanup(MockKeyring)
	ctx := context.Background()
	s := &KeyringStore{}
	_, err := s.Load(ctx, testURL)
	var ke *KeyringError
	if !errors.Is(err, ErrKeyringUnavailable) || !errors.As(err, &ke) || ke.Op != "read" {
		t.Fatalf("Load: %v", err)
	}
	if err := s.Save(ctx, testURL, testSecret(KindAPIKey, "key_a.b")); !errors.Is(err, ErrKeyringUnavailable) {
		t.Errorf("Save: %v", err)
	}
	if err := s.Delete(ctx, testURL); !errors.Is(err, ErrKeyringUnavailable) {
		t.Errorf("Delete: %v", err)
	}
}

func TestKeyringStoreHungKeyringTimesOut(t *testing.T) {
	s := &KeyringStore{Keyring: newHungKeyring(t), Timeout: 20 * time.Millisecond}
	ctx := context.Background()
	ops := map[string]func() error{
		"load":   func() error { _, err := s.Load(ctx, testURL); return err },
		"save":   func() error { return s.Save(ctx, testURL, testSecret(KindAPIKey, "key_a.b")) },
		"delete": func() error { return s.Delete(ctx, testURL) },
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			err := op()
			if !errors.Is(err, ErrKeyringTimeout) || !errors.Is(err, ErrKeyringUnavailable) {
				t.Fatalf("got %v, want a keyring timeout", err)
			}
		})
	}
	t.Run("context cancelled", func(t *testing.T) {
		s := &KeyringStore{Keyring: newHungKeyring(t), Timeout: time.Hour}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.Load(cctx, testURL); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "cfg", "r2r-mcp")
	s := &FileStore{Path: filepath.Join(dir, CredentialsFileName)}
	if _, err := s.Load(ctx, testURL); !errors.Is(err, ErrNoCredential) {
		t.Fatalf("missing file: %v", err)
	}
	a := testSecret(KindAPIKey, "key_a.secret")
	b := testSecret(KindRefreshToken, "refresh-jwt")
	if err := s.Save(ctx, testURL, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, "http://other:1", b); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(s.Path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v (%v), want 0600", fi.Mode().Perm(), err)
		}
		di, err := os.Stat(dir)
		if err != nil || di.Mode().Perm() != 0o700 {
			t.Errorf("dir mode %v (%v), want 0700", di.Mode().Perm(), err)
		}
	}
	if got, err := s.Load(ctx, testURL); err != nil || got != a {
		t.Errorf("Load a = %v, %v", got, err)
	}
	if got, err := s.Load(ctx, "http://other:1"); err != nil || got != b {
		t.Errorf("Load b = %v, %v", got, err)
	}
	if string(s.Source()) != "file "+s.Path {
		t.Errorf("Source = %q", s.Source())
	}
	if err := s.Delete(ctx, testURL); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, "http://other:1"); err != nil {
		t.Errorf("other entry lost: %v", err)
	}
	if err := s.Delete(ctx, "http://other:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Errorf("empty credentials file left behind: %v", err)
	}
	if err := s.Delete(ctx, testURL); !errors.Is(err, ErrNoCredential) {
		t.Errorf("delete when empty: %v", err)
	}
}

func TestFileStoreRefusesWorldReadableFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	ctx := context.Background()
	s := &FileStore{Path: filepath.Join(t.TempDir(), CredentialsFileName)}
	if err := s.Save(ctx, testURL, testSecret(KindAPIKey, "key_a.b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(ctx, testURL)
	if !errors.Is(err, ErrInsecureFile) || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Load of a 0644 file: %v", err)
	}
	// Saving again rewrites it with 0600.
	if err := s.Save(ctx, testURL, testSecret(KindAPIKey, "key_c.d")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(ctx, testURL); err != nil || got.Secret != "key_c.d" {
		t.Fatalf("after rewrite: %v, %v", got, err)
	}
}
