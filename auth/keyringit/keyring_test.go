package keyringit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/cmd"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// Gate is the environment variable that enables this test.
const Gate = "R2R_MCP_KEYRING_IT"

const (
	email    = "keyring-it@example.com"
	password = "it-password-never-stored"
)

func run(t *testing.T, env map[string]string, stdin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cmd.NewRootCmd(cmd.Deps{
		IO:     cmd.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Build:  cmd.BuildInfo{Version: "it"},
		Getenv: func(k string) string { return env[k] },
	})
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("r2r-mcp %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("r2r-mcp %s wrote to stdout: %q", args[0], out.String())
	}
	return errOut.String()
}

// storedSession reads the keyring entry for url back through go-keyring itself, not
// through r2r-mcp, and fails the test unless it is an R2R session (refresh and access
// token; never the password), which is what login keeps.
func storedSession(t *testing.T, url string) auth.Secret {
	t.Helper()
	raw, err := keyring.Get(auth.KeyringService, url)
	if err != nil {
		t.Fatalf("no keyring entry for %s: %v", url, err)
	}
	if strings.Contains(raw, password) {
		t.Fatal("the password is in the keyring")
	}
	var sec auth.Secret
	if err := json.Unmarshal([]byte(raw), &sec); err != nil {
		t.Fatalf("keyring entry is not JSON: %v", err)
	}
	if sec.Kind != auth.KindRefreshToken || sec.Secret == "" || sec.AccessToken == "" {
		t.Fatalf("keyring entry is not an R2R session: kind %q, refresh token set %v, access token set %v",
			sec.Kind, sec.Secret != "", sec.AccessToken != "")
	}
	return sec
}

func TestLoginLogoutWithRealKeyring(t *testing.T) {
	if os.Getenv(Gate) != "1" {
		t.Skipf("set %s=1 to run against the real OS keyring (on Linux: under auth/testdata/with-secret-service.sh)", Gate)
	}
	// From here on nothing skips: with the gate set (as in CI) a missing keyring fails.
	// The probe goes through r2r-mcp's wrapper, which fails fast without a D-Bus session
	// instead of letting godbus spawn one with dbus-launch.
	const probe = "r2r-mcp-keyring-it-probe"
	kr := auth.SystemKeyring()
	if err := kr.Set(probe, "probe", "x"); err != nil {
		t.Fatalf("the OS keyring is not usable (%v); on Linux run under auth/testdata/with-secret-service.sh", err)
	}
	if err := kr.Delete(probe, "probe"); err != nil {
		t.Fatalf("delete probe entry: %v", err)
	}

	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	srv.CreateUser(email, password, false)
	dir := t.TempDir()
	env := map[string]string{auth.ConfigDirEnv: dir}
	t.Cleanup(func() { _ = keyring.Delete(auth.KeyringService, srv.URL) })

	stderr := run(t, env, password+"\n", "login", "--url", srv.URL, "--email", email, "--password-stdin")
	if !strings.Contains(stderr, "stored in the system keyring") || strings.Contains(stderr, password) {
		t.Fatalf("login said %q", stderr)
	}

	sec := storedSession(t, srv.URL)
	if sec.Email != email {
		t.Fatalf("keyring entry is for %q, want %q", sec.Email, email)
	}
	if _, err := os.Stat(filepath.Join(dir, auth.CredentialsFileName)); !os.IsNotExist(err) {
		t.Errorf("plain-text file written although the keyring works (%v)", err)
	}

	// What serve does with no credential in the environment: resolve from the keyring.
	res, err := auth.Resolve(context.Background(), auth.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if res.URL != srv.URL || res.Origin().Source != auth.SourceKeyring || res.Origin().Warning() != "" {
		t.Fatalf("Resolve = %+v", res)
	}
	client, err := r2r.New(r2r.Options{BaseURL: res.URL, Credentials: res.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	if me, err := client.Me(context.Background()); err != nil || me.Email != email {
		t.Fatalf("resolved credential does not work: %v %v", me, err)
	}

	// What serve does: resolve without touching the keyring, read it on the first request.
	lazy, err := auth.ResolveLazy(context.Background(), auth.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	lc, ok := lazy.Credentials.(*auth.LazyCredentials)
	if !ok || lazy.Origin().Source != auth.SourceKeyringPending || lc.Loaded() {
		t.Fatalf("ResolveLazy = %+v", lazy)
	}
	lazyClient, err := r2r.New(r2r.Options{BaseURL: lazy.URL, Credentials: lazy.Credentials})
	if err != nil {
		t.Fatal(err)
	}
	if me, err := lazyClient.Me(context.Background()); err != nil || me.Email != email {
		t.Fatalf("lazily read credential does not work: %v %v", me, err)
	}
	if snap := lc.Snapshot(); snap.Origin().Source != auth.SourceKeyring || snap.KeyID != sec.KeyID || snap.Origin().Warning() != "" {
		t.Fatalf("after the first request: %+v", snap)
	}

	stderr = run(t, env, "", "logout")
	if !strings.Contains(stderr, "R2R session ended on the server") || !strings.Contains(stderr, "removed from the system keyring") {
		t.Errorf("logout said %q", stderr)
	}
	if _, err := keyring.Get(auth.KeyringService, srv.URL); !errors.Is(err, keyring.ErrNotFound) {
		t.Errorf("keyring entry still there after logout: %v", err)
	}
	if _, err := client.Me(context.Background()); !errors.Is(err, r2r.ErrUnauthorized) {
		t.Errorf("session still valid after logout: %v", err)
	}
}
