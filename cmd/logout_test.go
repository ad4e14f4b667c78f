package cmd

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

const routeDelKeyCmd = "DELETE /v3/users/{id}/api-keys/{key_id}"

func TestLogoutNotLoggedIn(t *testing.T) {
	f := newAuthFixture(t)
	r := f.logout("--url", f.srv.URL)
	if r.err != nil || r.stderr != "Not logged in to "+f.srv.URL+".\n" || r.stdout != "" {
		t.Fatalf("logout: %v %q %q", r.err, r.stdout, r.stderr)
	}
	if len(f.srv.Counts()) != 0 {
		t.Errorf("requests sent: %v", f.srv.Counts())
	}
	f.env["R2R_API_KEY"] = "key_env.x"
	r = f.logout("--url", f.srv.URL)
	if r.err != nil || !strings.Contains(r.stderr, "R2R_API_KEY is still set") {
		t.Errorf("with R2R_API_KEY: %v %q", r.err, r.stderr)
	}
}

func TestLogoutRevokesKeyAndIsIdempotent(t *testing.T) {
	f := newAuthFixture(t)
	sec := f.seedAPIKey()
	// No --url: logout uses the URL login saved.
	r := f.logout()
	if r.err != nil {
		t.Fatalf("logout: %v %q", r.err, r.stderr)
	}
	want := "✓ Logged out of " + f.srv.URL + " (" + testEmail + "): API key " + auth.ShortKey(sec.Secret) +
		" revoked on the server; removed from the system keyring\n" +
		"Forgot " + f.srv.URL + " as the default R2R URL (saved by login).\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	assertNoSecrets(t, r, sec.Secret)
	if f.srv.Count(routeDelKeyCmd) != 1 || f.keyWorks(sec.Secret) {
		t.Error("key not revoked on the server")
	}
	if _, _, err := f.keyringSecret(); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring entry left: %v", err)
	}
	// The URL login saved went with the login: doctor no longer tries that R2R.
	if cfg, _, err := auth.LoadConfig(f.dir); err != nil || cfg.URL != "" {
		t.Errorf("saved URL %q left after logout (%v)", cfg.URL, err)
	}
	r = f.logout("--url", f.srv.URL)
	if r.err != nil || r.stderr != "Not logged in to "+f.srv.URL+".\n" {
		t.Errorf("second logout: %v %q", r.err, r.stderr)
	}
}

func TestLogoutServerUnreachableStillDeletesLocally(t *testing.T) {
	f := newAuthFixture(t)
	sec := f.seedAPIKey()
	f.srv.Down(true)
	r := f.logout("--url", f.srv.URL)
	if r.err != nil {
		t.Fatalf("logout: %v", r.err)
	}
	for _, w := range []string{"! Could not revoke API key " + auth.ShortKey(sec.Secret), "key id " + sec.KeyID, "removed from the system keyring"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr %q does not contain %q", r.stderr, w)
		}
	}
	if _, _, err := f.keyringSecret(); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring entry left: %v", err)
	}
	assertNoSecrets(t, r, sec.Secret)
}

func TestLogoutKeepsUserSuppliedKey(t *testing.T) {
	f := newAuthFixture(t)
	made := f.seedAPIKey()
	if r := f.login(strings.NewReader(made.Secret), "--url", f.srv.URL, "--api-key-stdin"); r.err != nil {
		t.Fatal(r.err)
	}
	f.srv.ResetCounts()
	r := f.logout("--url", f.srv.URL)
	if r.err != nil || !strings.Contains(r.stderr, "was supplied by you and stays valid on the server") {
		t.Fatalf("logout: %v %q", r.err, r.stderr)
	}
	if f.srv.Count(routeDelKeyCmd) != 0 || !f.keyWorks(made.Secret) {
		t.Error("user-supplied key revoked")
	}
}

func TestLogoutSession(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.loginWithPassword(); r.err != nil {
		t.Fatal(r.err)
	}
	sec, _, _ := f.keyringSecret()
	if sec.Kind != auth.KindRefreshToken {
		t.Fatalf("stored %v", sec)
	}
	r := f.logout("--url", f.srv.URL)
	if r.err != nil || !strings.Contains(r.stderr, "R2R session ended on the server") {
		t.Fatalf("logout: %v %q", r.err, r.stderr)
	}
	if f.srv.Count("POST /v3/users/refresh-token") != 1 {
		t.Errorf("refresh-token calls %d", f.srv.Count("POST /v3/users/refresh-token"))
	}
	if _, _, err := f.keyringSecret(); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring entry left: %v", err)
	}
	assertNoSecrets(t, r, sec.Secret)
}

func TestLogoutRemovesFileCredential(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.loginWithPassword("--insecure-storage"); r.err != nil {
		t.Fatal(r.err)
	}
	r := f.logout("--url", f.srv.URL)
	if r.err != nil || !strings.Contains(r.stderr, "removed from "+f.credentialsFile()) || !strings.Contains(r.stderr, "plain-text file") {
		t.Fatalf("logout: %v %q", r.err, r.stderr)
	}
	if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
		t.Errorf("credentials file left: %v", err)
	}
}

func TestLogoutWithoutKeyring(t *testing.T) {
	f := newAuthFixture(t)
	auth.MockKeyringWithError(keyring.ErrUnsupportedPlatform)
	t.Cleanup(auth.MockKeyring)
	if r := f.loginWithPassword(); r.err != nil {
		t.Fatal(r.err)
	}
	r := f.logout("--url", f.srv.URL)
	if r.err != nil || !strings.Contains(r.stderr, "R2R session ended on the server") || !strings.Contains(r.stderr, "unsupported platform") {
		t.Fatalf("logout: %v %q", r.err, r.stderr)
	}
	if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
		t.Errorf("credentials file left: %v", err)
	}
}

// logout's help describes what it does now: it ends a session; API keys are the exception.
func TestLogoutHelpSpeaksOfTheSession(t *testing.T) {
	c := newLogoutCmd(Deps{}, nil)
	if !strings.HasPrefix(c.Short, "End this machine's R2R session") || !strings.HasPrefix(c.Long, "End the R2R session") ||
		strings.Contains(c.Short, "API key") {
		t.Errorf("Short %q\nLong %q", c.Short, c.Long)
	}
}
