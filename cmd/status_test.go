package cmd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// status runs `status` in-process against the fixture, in a fresh project "proj".
func (f *authFixture) status(args ...string) cmdResult {
	f.t.Helper()
	return f.run(func(d Deps) *cobra.Command {
		return newStatusCmd(d, func(o *statusOptions) error { o.Env = f.authEnv(); return runStatus(o) })
	}, strings.NewReader(""), args...)
}

// statusProject makes a git checkout named name (with an optional .r2r-mcp.json) and returns its root.
func statusProject(t *testing.T, name, config string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(root, ".r2r-mcp.json"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return root
}

func decodeReport(t *testing.T, r cmdResult) StatusReport {
	t.Helper()
	var rep StatusReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("status --json printed no JSON (%v): %q\nstderr: %s", err, r.stdout, r.stderr)
	}
	return rep
}

func TestStatusReport(t *testing.T) {
	const missingID = "9b7e2f4c-0000-4000-8000-000000000001"
	tests := []struct {
		name string
		// setup prepares the fixture and returns extra status arguments and secrets that
		// must not show up in the output.
		setup      func(t *testing.T, f *authFixture) (secrets []string)
		config     string // .r2r-mcp.json content
		usable     bool
		source     string // credential source; "file" = the fixture's credentials file
		kind       string
		health     string
		wantUser   bool
		collExists bool
		problem    string // substring of a problem
		warning    string // substring of a warning
	}{
		{name: "API key in the keyring",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				sec, _, _ := f.keyringSecret()
				return []string{sec.Secret}
			},
			usable: true, source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthOK, wantUser: true},
		{name: "session in the file, with a warning",
			setup: func(t *testing.T, f *authFixture) []string {
				if r := f.loginWithPassword("--insecure-storage"); r.err != nil {
					t.Fatal(r.err)
				}
				return nil
			},
			usable: true, source: "file", kind: auth.KindRefreshToken, health: healthOK, wantUser: true, warning: "plain-text file"},
		{name: "session in the keyring",
			setup: func(t *testing.T, f *authFixture) []string {
				if r := f.loginWithPassword(); r.err != nil {
					t.Fatal(r.err)
				}
				sec, _, _ := f.keyringSecret()
				return []string{sec.Secret, sec.AccessToken}
			},
			usable: true, source: auth.SourceKeyring, kind: auth.KindRefreshToken, health: healthOK, wantUser: true},
		{name: "API key from the environment",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				sec, _, _ := f.keyringSecret()
				f.env["R2R_API_KEY"] = sec.Secret
				return []string{sec.Secret}
			},
			usable: true, source: auth.SourceEnvAPIKey, kind: auth.KindAPIKey, health: healthOK, wantUser: true},
		{name: "email and password from the environment",
			setup: func(t *testing.T, f *authFixture) []string {
				f.env["R2R_EMAIL"], f.env["R2R_PASSWORD"] = testEmail, testPassword
				return nil
			},
			usable: true, source: auth.SourceEnvPassword, kind: auth.KindPassword, health: healthOK, wantUser: true},
		{name: "wrong password in the environment",
			setup: func(t *testing.T, f *authFixture) []string {
				f.env["R2R_EMAIL"], f.env["R2R_PASSWORD"] = testEmail, "wrong-env-password"
				return []string{"wrong-env-password"}
			},
			source: auth.SourceEnvPassword, kind: auth.KindPassword, health: healthOK, problem: "Fix R2R_EMAIL/R2R_PASSWORD where they are set"},
		{name: "unknown email in the environment",
			setup: func(t *testing.T, f *authFixture) []string {
				f.env["R2R_EMAIL"], f.env["R2R_PASSWORD"] = "nobody@example.com", testPassword
				return []string{testPassword}
			},
			source: auth.SourceEnvPassword, kind: auth.KindPassword, health: healthOK, problem: "R2R has no account nobody@example.com (the email from env R2R_EMAIL/R2R_PASSWORD)"},
		{name: "revoked stored key",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				sec, _, _ := f.keyringSecret()
				c, _ := r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.APIKey(sec.Secret)})
				if err := c.DeleteAPIKey(context.Background(), sec.UserID, sec.KeyID); err != nil {
					t.Fatal(err)
				}
				return []string{sec.Secret}
			},
			source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthOK, problem: "Run `r2r-mcp login` in a terminal to store a new credential"},
		{name: "not logged in",
			source: auth.SourceNone, health: healthOK, problem: "no credential was found: 401"},
		{name: "R2R down",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				f.srv.Down(true)
				return nil
			},
			source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthUnreachable, problem: "Cannot reach R2R"},
		{name: "R2R unhealthy",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				f.srv.ForceStatus("GET /v3/health", http.StatusServiceUnavailable, 1)
				return nil
			},
			source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthError, wantUser: true, problem: "is not healthy: "},
		{name: "existing collection",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				sec, _, _ := f.keyringSecret()
				c, _ := r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.APIKey(sec.Secret)})
				if _, err := c.CreateCollection(context.Background(), "claude-code-proj", ""); err != nil {
					t.Fatal(err)
				}
				return nil
			},
			usable: true, source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthOK, wantUser: true, collExists: true},
		{name: "configured collection id that does not exist",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				return nil
			},
			config: `{"collection": "` + missingID + `"}`,
			source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthOK, wantUser: true, problem: missingID + " configured in"},
		{name: "broken .r2r-mcp.json",
			setup: func(t *testing.T, f *authFixture) []string {
				statusLogin(t, f)
				return nil
			},
			config: `{nope`,
			source: auth.SourceKeyring, kind: auth.KindAPIKey, health: healthOK, wantUser: true, problem: "Cannot determine the project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t)
			var secrets []string
			if tt.setup != nil {
				secrets = tt.setup(t, f)
			}
			proj := statusProject(t, "proj", tt.config)
			f.srv.ResetCounts()
			r := f.status("--url", f.srv.URL, "--project-dir", proj, "--json")
			rep := decodeReport(t, r)
			if tt.usable != (r.err == nil) || (r.err != nil && !errors.Is(r.err, SilentError)) {
				t.Errorf("err = %v, want usable=%v (problems %q)", r.err, tt.usable, rep.Problems)
			}
			if rep.Usable != tt.usable {
				t.Errorf("usable = %v, want %v; problems %q", rep.Usable, tt.usable, rep.Problems)
			}
			if tt.usable && len(rep.Problems) != 0 {
				t.Errorf("usable with problems %q", rep.Problems)
			}
			source := tt.source
			if source == "file" {
				source = string(auth.FileSource(f.credentialsFile()))
			}
			if rep.Credential.Source != source || rep.Credential.Kind != tt.kind {
				t.Errorf("credential %+v, want source %q kind %q", rep.Credential, source, tt.kind)
			}
			if tt.kind == auth.KindAPIKey && !strings.HasPrefix(rep.Credential.Key, "key_") {
				t.Errorf("masked key %q", rep.Credential.Key)
			}
			if rep.R2R.URL != f.srv.URL || rep.R2R.URLSource != auth.URLSourceFlag || rep.R2R.Health != tt.health {
				t.Errorf("r2r %+v, want health %q", rep.R2R, tt.health)
			}
			if tt.wantUser != (rep.User != nil) || tt.wantUser != rep.Credential.Accepted {
				t.Errorf("user %+v accepted %v; want user %v", rep.User, rep.Credential.Accepted, tt.wantUser)
			}
			if rep.User != nil && (rep.User.Email != testEmail || rep.User.ID != f.uid || rep.User.Superuser) {
				t.Errorf("user %+v, want %s %s not superuser", rep.User, testEmail, f.uid)
			}
			if tt.problem != "" && !slices.ContainsFunc(rep.Problems, func(p string) bool { return strings.Contains(p, tt.problem) }) {
				t.Errorf("problems %q lack %q", rep.Problems, tt.problem)
			}
			if tt.warning != "" && !slices.ContainsFunc(rep.Warnings, func(p string) bool { return strings.Contains(p, tt.warning) }) {
				t.Errorf("warnings %q lack %q", rep.Warnings, tt.warning)
			}
			if tt.config == "" && rep.Project.Name == "proj" {
				if rep.Project.Root != proj || rep.Project.CollectionName != "claude-code-proj" ||
					rep.Project.Source != "git root of --project-dir" {
					t.Errorf("project %+v", rep.Project)
				}
				if rep.Project.CollectionExists != tt.collExists || (tt.collExists && len(rep.Project.CollectionID) != 36) {
					t.Errorf("collection exists %v id %q, want exists %v", rep.Project.CollectionExists, rep.Project.CollectionID, tt.collExists)
				}
			}
			if n := f.srv.Count("POST /v3/collections"); n != 0 {
				t.Errorf("status created %d collections", n)
			}
			assertNoSecrets(t, cmdResult{stderr: r.stdout + r.stderr}, secrets...)
		})
	}
}

// statusLogin stores an API key, as logins before sessions did (and `login --api-key-stdin`
// does), and saves the URL.
func statusLogin(t *testing.T, f *authFixture) {
	t.Helper()
	f.seedAPIKey()
}

func TestStatusSettingsAndSources(t *testing.T) {
	f := newAuthFixture(t)
	statusLogin(t, f) // saves the URL in config.json
	f.env[auth.ConfigDirEnv] = f.dir
	proj := statusProject(t, "proj", `{"collection": "shared-docs"}`)
	sub := filepath.Join(proj, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if real, err := filepath.EvalSymlinks(plain); err == nil {
		plain = real
	}
	plainSum := sha256.Sum256([]byte(plain))
	plainName := filepath.Base(plain) + "-" + hex.EncodeToString(plainSum[:4])
	tests := []struct {
		name string
		dir  string
		env  map[string]string
		want map[string][2]string // setting → value, source
	}{
		{name: "saved URL, git root above the directory, configured collection", dir: sub,
			want: map[string][2]string{
				"r2r_url":    {f.srv.URL, "config " + auth.ConfigPath(f.dir)},
				"config_dir": {f.dir, "env " + auth.ConfigDirEnv},
				"project":    {proj, "git root of --project-dir"},
				"collection": {"shared-docs", "config " + filepath.Join(proj, ".r2r-mcp.json")},
			}},
		{name: "URL from R2R_API_BASE, no git repository", dir: plain, env: map[string]string{"R2R_API_BASE": f.srv.URL + "/v3"},
			want: map[string][2]string{
				"r2r_url": {f.srv.URL, auth.URLSourceEnvBase},
				"project": {plain, "--project-dir, not in a git repository"},
				// outside git the project is named by its path too (issue 18 item 4)
				"collection": {"claude-code-" + plainName, "default name for project " + plainName},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				f.env[k] = v
				t.Cleanup(func() { delete(f.env, k) })
			}
			r := f.status("--project-dir", tt.dir, "--json")
			if r.err != nil {
				t.Fatalf("status: %v\n%s", r.err, r.stdout)
			}
			rep := decodeReport(t, r)
			got := map[string][2]string{}
			for _, s := range rep.Config {
				got[s.Name] = [2]string{s.Value, s.Source}
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s = %q, want %q", name, got[name], want)
				}
			}
			if cred := got["credential"]; !strings.HasPrefix(cred[0], "API key key_") || !strings.HasSuffix(cred[0], "… for "+testEmail) || cred[1] != auth.SourceKeyring {
				t.Errorf("credential setting %q", cred)
			}
		})
	}
}

// TestStatusHumanOutput checks the text report: aligned columns, marks, no secret.
func TestStatusHumanOutput(t *testing.T) {
	f := newAuthFixture(t)
	statusLogin(t, f)
	sec, _, _ := f.keyringSecret()
	proj := statusProject(t, "proj", "")

	r := f.status("--url", f.srv.URL, "--project-dir", proj)
	if r.err != nil {
		t.Fatalf("status: %v\n%s", r.err, r.stdout)
	}
	lines := strings.Split(r.stdout, "\n")
	var settings []string
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") && strings.HasSuffix(l, ")") {
			settings = append(settings, l)
		}
	}
	if len(settings) != 5 {
		t.Fatalf("want 5 setting lines, got %d:\n%s", len(settings), r.stdout)
	}
	col := -1
	for _, l := range settings {
		i := utf8.RuneCountInString(l[:strings.LastIndex(l, "  (")])
		if col == -1 {
			col = i
		} else if i != col {
			t.Errorf("source column not aligned (%d vs %d):\n%s", i, col, r.stdout)
		}
	}
	for _, want := range []string{
		"  R2R URL     " + f.srv.URL,
		"Credential  API key " + auth.ShortKey(sec.Secret) + " for " + testEmail,
		"(" + auth.SourceKeyring + ")",
		"✓ R2R         healthy (",
		"✓ Account     " + testEmail + " (id " + f.uid + ", superuser: no)",
		"✓ Collection  claude-code-proj does not exist yet",
		"✓ r2r-mcp is ready.",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	assertNoSecrets(t, cmdResult{stderr: r.stdout + r.stderr}, sec.Secret, strings.SplitN(sec.Secret, ".", 2)[1])
	if r.stderr != "" {
		t.Errorf("stderr %q", r.stderr)
	}

	f.srv.Down(true)
	r = f.status("--url", f.srv.URL, "--project-dir", proj, "--timeout", "2s")
	if !errors.Is(r.err, SilentError) {
		t.Fatalf("err = %v, want SilentError", r.err)
	}
	for _, want := range []string{"✗ R2R         unreachable: ", "✗ Account     not checked", "✗ r2r-mcp is not usable:", "  - Cannot reach R2R at " + f.srv.URL} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestStatusJSONFieldsAreStable pins the JSON field names scripts rely on.
func TestStatusJSONFieldsAreStable(t *testing.T) {
	f := newAuthFixture(t)
	statusLogin(t, f)
	r := f.status("--url", f.srv.URL, "--project-dir", statusProject(t, "proj", ""), "--json")
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(raw json.RawMessage) []string {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		obj  string
		want []string
	}{
		{"", []string{"config", "credential", "problems", "project", "r2r", "usable", "user", "version", "warnings"}},
		{"r2r", []string{"health", "latency_ms", "url", "url_source"}},
		{"credential", []string{"accepted", "check_ms", "email", "key", "key_id", "kind", "source"}},
		{"user", []string{"email", "id", "superuser"}},
		{"project", []string{"collection_checked", "collection_exists", "collection_name", "collection_source", "name", "root", "source"}},
	}
	for _, tt := range tests {
		raw := json.RawMessage(r.stdout)
		if tt.obj != "" {
			raw = doc[tt.obj]
		}
		if got := keys(raw); !slices.Equal(got, tt.want) {
			t.Errorf("%q keys %v, want %v", tt.obj, got, tt.want)
		}
	}
}

func TestStatusNoAuthR2R(t *testing.T) {
	auth.MockKeyring()
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	f := &authFixture{t: t, srv: srv, dir: t.TempDir(), env: map[string]string{}}
	r := f.status("--url", srv.URL, "--project-dir", statusProject(t, "proj", ""), "--json")
	rep := decodeReport(t, r)
	if r.err != nil || !rep.Usable || rep.Credential.Source != auth.SourceNone || rep.User == nil || !rep.User.Superuser ||
		rep.User.Email != r2rtest.AdminEmail {
		t.Fatalf("status against an R2R without auth: %v %+v", r.err, rep)
	}
}

func TestStatusFlags(t *testing.T) {
	var got *statusOptions
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(string) string { return "" }}
	c := newStatusCmd(deps, func(o *statusOptions) error { got = o; return nil })
	c.SetArgs([]string{"--url", "http://r2r.example", "--json", "--project-dir", "/tmp", "--timeout", "1500ms"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.URL != "http://r2r.example" || !got.JSON || got.ProjectDir != "/tmp" || got.Timeout != 1500*time.Millisecond {
		t.Errorf("options %+v", got)
	}

	f := newAuthFixture(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--url", "localhost:7272"}, "--url: "},
		{[]string{"--url", f.srv.URL, "--project-dir", filepath.Join(t.TempDir(), "missing")}, "is not a directory"},
		{[]string{"extra"}, "unknown command"},
	} {
		r := f.status(tt.args...)
		if r.err == nil || !strings.Contains(r.err.Error(), tt.want) || errors.Is(r.err, SilentError) {
			t.Errorf("status %v: err %v, want %q", tt.args, r.err, tt.want)
		}
		if len(f.srv.Counts()) != 0 {
			t.Errorf("status %v sent requests: %v", tt.args, f.srv.Counts())
		}
	}

	root := NewRootCmd(deps)
	if c, _, err := root.Find([]string{"status"}); err != nil || c.Name() != "status" {
		t.Errorf("status not registered: %v", err)
	}
}

// The plain-text file in use is a standing fact: status says it once a day (the Credential
// line names the file every time), status --json every time.
func TestStatusSaysThePlainTextFileOnceADay(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.loginWithPassword("--insecure-storage"); r.err != nil {
		t.Fatal(r.err)
	}
	const said = "the plain-text file"
	runs := []struct {
		name   string
		before func()
		args   []string
		want   bool
	}{
		{"first run", nil, nil, true},
		{"again the same day", nil, nil, false},
		{"--json", nil, []string{"--json"}, true},
		{"a day later", func() {
			old := time.Now().Add(-25 * time.Hour)
			markers, _ := filepath.Glob(filepath.Join(f.dir, "notices", "*"))
			for _, m := range markers {
				if err := os.Chtimes(m, old, old); err != nil {
					t.Fatal(err)
				}
			}
			if len(markers) == 0 {
				t.Fatal("no marker was written")
			}
		}, nil, true},
	}
	for _, r := range runs {
		if r.before != nil {
			r.before()
		}
		res := f.status(append([]string{"--project-dir", t.TempDir()}, r.args...)...)
		if got := strings.Contains(res.stdout, said); got != r.want {
			t.Errorf("%s: says the plain-text file: %v, want %v\n%s", r.name, got, r.want, res.stdout)
		}
		if !strings.Contains(res.stdout, f.credentialsFile()) {
			t.Errorf("%s: the credential's source is not named:\n%s", r.name, res.stdout)
		}
	}
}

// A renewal status's own check makes, and what it runs into (no session lock can be
// made), is reported, and the check still succeeds.
func TestStatusNamesWhyTheSessionLockCannotBeMade(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.loginWithPassword("--insecure-storage"); r.err != nil {
		t.Fatal(r.err)
	}
	// A session stored without its access token is renewed on first use.
	store := &auth.FileStore{Path: f.credentialsFile()}
	sec, err := store.Load(t.Context(), f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	sec.AccessToken = ""
	if err := store.Save(t.Context(), f.srv.URL, sec); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(auth.SessionLockPath(f.dir), 0o700); err != nil {
		t.Fatal(err)
	}
	r := f.status("--project-dir", t.TempDir())
	if r.err != nil || !strings.Contains(r.stdout, "! cannot use the session lock "+auth.SessionLockPath(f.dir)+": it is a directory") ||
		strings.Contains(r.stdout, "another r2r-mcp process is renewing") || f.srv.Count("POST /v3/users/refresh-token") != 1 {
		t.Fatalf("%v\n%s", r.err, r.stdout)
	}
}
