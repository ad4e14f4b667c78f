package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

const (
	testEmail    = "dev@example.com"
	testPassword = "correct-horse-battery"
)

// authFixture is one emulated R2R with a user, a private config dir and go-keyring's mock.
type authFixture struct {
	t   *testing.T
	srv *r2rtest.Server
	uid string
	dir string
	env map[string]string
	// tweak adjusts the authEnv before a command runs (injected keyrings, timeouts).
	tweak func(*authEnv)
}

func newAuthFixture(t *testing.T) *authFixture {
	t.Helper()
	auth.MockKeyring()
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	f := &authFixture{t: t, srv: srv, dir: t.TempDir(), env: map[string]string{}}
	f.uid = srv.CreateUser(testEmail, testPassword, false)
	return f
}

func (f *authFixture) deps(stdin io.Reader, stdout, stderr io.Writer) Deps {
	return Deps{
		IO:     IOStreams{In: stdin, Out: stdout, ErrOut: stderr},
		Build:  BuildInfo{Version: "test"},
		Getenv: func(k string) string { return f.env[k] },
	}
}

func (f *authFixture) authEnv() authEnv {
	e := authEnv{ConfigDir: f.dir, NoticeDir: filepath.Join(f.dir, "notices")}
	if f.tweak != nil {
		f.tweak(&e)
	}
	return e
}

// result of one command run.
type cmdResult struct {
	stdout, stderr string
	err            error
}

func (f *authFixture) run(build func(Deps) *cobra.Command, stdin io.Reader, args ...string) cmdResult {
	f.t.Helper()
	var out, errOut bytes.Buffer
	c := build(f.deps(stdin, &out, &errOut))
	c.SilenceUsage, c.SilenceErrors = true, true // as under the root command
	c.SetArgs(args)
	c.SetIn(stdin)
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return cmdResult{out.String(), errOut.String(), err}
}

func (f *authFixture) login(stdin io.Reader, args ...string) cmdResult {
	return f.run(func(d Deps) *cobra.Command {
		return newLoginCmd(d, func(o *loginOptions) error { o.Env = f.authEnv(); return runLogin(o) })
	}, stdin, args...)
}

func (f *authFixture) logout(args ...string) cmdResult {
	return f.run(func(d Deps) *cobra.Command {
		return newLogoutCmd(d, func(o *logoutOptions) error { o.Env = f.authEnv(); return runLogout(o) })
	}, strings.NewReader(""), args...)
}

// loginWithPassword runs a scripted password login against the emulator.
func (f *authFixture) loginWithPassword(extra ...string) cmdResult {
	args := append([]string{"--url", f.srv.URL, "--email", testEmail, "--password-stdin"}, extra...)
	return f.login(strings.NewReader(testPassword+"\n"), args...)
}

// keyringSecret reads the entry for the emulator straight from go-keyring.
func (f *authFixture) keyringSecret() (auth.Secret, string, error) {
	raw, err := keyring.Get(auth.KeyringService, f.srv.URL)
	if err != nil {
		return auth.Secret{}, "", err
	}
	var s auth.Secret
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		f.t.Fatalf("keyring entry is not JSON: %v", err)
	}
	return s, raw, nil
}

func (f *authFixture) credentialsFile() string { return filepath.Join(f.dir, auth.CredentialsFileName) }

// assertNothingStored checks that neither the keyring nor the file holds anything and no
// URL was saved.
func (f *authFixture) assertNothingStored() {
	f.t.Helper()
	if _, _, err := f.keyringSecret(); !errors.Is(err, keyring.ErrNotFound) {
		f.t.Errorf("keyring entry exists (%v)", err)
	}
	if _, err := os.Stat(f.credentialsFile()); !os.IsNotExist(err) {
		f.t.Errorf("credentials file exists (%v)", err)
	}
	if _, err := os.Stat(auth.ConfigPath(f.dir)); !os.IsNotExist(err) {
		f.t.Errorf("config saved (%v)", err)
	}
}

// assertNoSecrets checks that no output contains the password or a raw key.
func assertNoSecrets(t *testing.T, r cmdResult, secrets ...string) {
	t.Helper()
	all := r.stdout + r.stderr
	if r.err != nil {
		all += r.err.Error()
	}
	for _, s := range append(secrets, testPassword) {
		if s != "" && strings.Contains(all, s) {
			t.Errorf("output contains a secret: %q", all)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout is not empty: %q", r.stdout)
	}
}

// seedAPIKey creates an API key on the emulator and stores it in the keyring the way
// `r2r-mcp login` did before sessions (with its key id, so logout revokes it): stored API
// keys keep working.
func (f *authFixture) seedAPIKey() auth.Secret {
	f.t.Helper()
	ctx := context.Background()
	anon, err := r2r.New(r2r.Options{BaseURL: f.srv.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	pair, err := anon.Login(ctx, testEmail, testPassword)
	if err != nil {
		f.t.Fatal(err)
	}
	key, err := anon.WithCredentials(r2r.Bearer(pair.AccessToken.Token)).CreateAPIKey(ctx, f.uid, "r2r-mcp@devbox", "test")
	if err != nil {
		f.t.Fatal(err)
	}
	sec := auth.Secret{Kind: auth.KindAPIKey, Secret: key.APIKey, UserID: f.uid, Email: testEmail, KeyID: key.KeyID}
	if err := (&auth.KeyringStore{}).Save(ctx, f.srv.URL, sec); err != nil {
		f.t.Fatal(err)
	}
	if err := auth.SaveURL(f.dir, f.srv.URL); err != nil {
		f.t.Fatal(err)
	}
	return sec
}

// sessionWorks reports whether the stored session's access token is accepted.
func (f *authFixture) sessionWorks(sec auth.Secret) bool {
	f.t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.Bearer(sec.AccessToken)})
	if err != nil {
		f.t.Fatal(err)
	}
	_, err = c.Me(context.Background())
	return err == nil
}

func (f *authFixture) keyWorks(key string) bool {
	f.t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.APIKey(key)})
	if err != nil {
		f.t.Fatal(err)
	}
	_, err = c.Me(context.Background())
	return err == nil
}

func TestReadLine(t *testing.T) {
	r := strings.NewReader("first\r\nsecond\nlast")
	for _, want := range []string{"first", "second", "last"} {
		got, err := readLine(r)
		if err != nil || got != want {
			t.Fatalf("readLine = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := readLine(r); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("at EOF: %v", err)
	}
}

func TestReadSecretStdin(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "pw\n", want: "pw"},
		{in: " pw with spaces \r\n", want: " pw with spaces "},
		{in: "", err: "no password on stdin"},
		{in: "\n", err: "no password on stdin"},
		{in: strings.Repeat("x", maxSecretBytes+1), err: "longer than"},
	}
	for _, tt := range tests {
		got, err := readSecretStdin(strings.NewReader(tt.in), "password")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("readSecretStdin(%.10q) = %v; want error %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("readSecretStdin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestPromptUsesDefault(t *testing.T) {
	var w bytes.Buffer
	got, err := prompt(strings.NewReader("\n"), &w, "R2R URL", "http://localhost:7272")
	if err != nil || got != "http://localhost:7272" || w.String() != "R2R URL [http://localhost:7272]: " {
		t.Errorf("prompt = %q, %v; wrote %q", got, err, w.String())
	}
	got, err = prompt(strings.NewReader("  http://other \n"), &w, "R2R URL", "http://localhost:7272")
	if err != nil || got != "http://other" {
		t.Errorf("prompt = %q, %v", got, err)
	}
}

// waitUntil polls cond until it holds: for what a program running beside the test (a login
// on a terminal, a sync --watch) has done so far. Bounded, so a broken program fails
// instead of hanging, showing its output.
func waitUntil(t *testing.T, what string, cond func() bool, output func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; output so far: %q", what, output())
		}
		time.Sleep(2 * time.Millisecond)
	}
}
