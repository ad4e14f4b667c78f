package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// The auth end-to-end tests run the real binary (login, status, serve, logout) with a
// minimal environment against the R2R emulator, and talk to serve with mcp-go's stdio
// client. None of them has a D-Bus session, so auth's bus check fails fast and the 0600
// file is the store; the same flows against a real Secret Service are in auth/servertest.

const (
	e2eEmail    = "e2e-auth@example.com"
	e2ePassword = "e2e-Pass-word-never-printed"
	guideText   = "# Payout guide\n\nThe quasar ledger reconciles payouts every night at 02:00 UTC.\n" +
		"If the quasar ledger falls behind, page the payments on-call.\n"
	guideQuery   = "quasar ledger reconciles payouts"
	routeNewKey  = "POST /v3/users/{id}/api-keys"
	routeRefresh = "POST /v3/users/refresh-token"
	routeLogin   = "POST /v3/users/login"
)

func TestMain(m *testing.M) { servertest.Main(m) }

func TestE2EAuth(t *testing.T) {
	servertest.Build(t) // once, before the parallel subtests
	t.Run("without a Secret Service login falls back to the file and serve uses it", func(t *testing.T) {
		t.Parallel()
		testFileFallback(t)
	})
	t.Run("concurrent calls with expiring tokens refresh rarely", func(t *testing.T) {
		t.Parallel()
		testTokenRefreshUnderLoad(t)
	})
	t.Run("no secret in any output", func(t *testing.T) {
		t.Parallel()
		testNoSecretsAnywhere(t)
	})
}

// authWorld is one emulated R2R with a user, a project checkout and a private home.
type authWorld struct {
	t         *testing.T
	srv       *servertest.RecordingR2R
	proj      string
	env       []string // no credential, no URL, a D-Bus address nothing answers on
	configDir string
}

func newAuthWorld(t *testing.T, opts r2rtest.Options) *authWorld {
	t.Helper()
	opts.RequireAuth = true
	w := &authWorld{t: t, srv: servertest.NewRecordingR2R(t, opts)}
	w.srv.CreateUser(e2eEmail, e2ePassword, false)
	// A session bus address nothing listens on: the keyring reports "no Secret Service"
	// even on a machine whose user session has a bus at /run/user/<uid>/bus.
	w.env = servertest.MinimalEnv(t, "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	w.configDir = filepath.Join(servertest.EnvValue(w.env, "XDG_CONFIG_HOME"), "r2r-mcp")
	w.proj = servertest.GitProject(t, "payouts", map[string]string{"docs/guide.md": guideText})
	return w
}

func (w *authWorld) run(env []string, stdin string, args ...string) servertest.Result {
	w.t.Helper()
	if env == nil {
		env = w.env
	}
	return servertest.Run(w.t, w.proj, env, stdin, args...)
}

func (w *authWorld) login(extra ...string) servertest.Result {
	w.t.Helper()
	args := append([]string{"login", "--url", w.srv.URL, "--email", e2eEmail, "--password-stdin"}, extra...)
	r := w.run(nil, e2ePassword+"\n", args...)
	if r.Code != 0 {
		w.t.Fatalf("login exited %d:\n%s", r.Code, r.Stderr)
	}
	return r
}

func (w *authWorld) credentialsFile() string {
	return filepath.Join(w.configDir, auth.CredentialsFileName)
}

// storedSecret reads the file store's entry for the emulator.
func (w *authWorld) storedSecret() auth.Secret {
	w.t.Helper()
	sec, err := (&auth.FileStore{Path: w.credentialsFile()}).Load(context.Background(), w.srv.URL)
	if err != nil {
		w.t.Fatalf("read %s: %v", w.credentialsFile(), err)
	}
	return sec
}

// statusJSON runs status --json with env and decodes the report.
func (w *authWorld) statusJSON(env []string) (map[string]any, servertest.Result) {
	w.t.Helper()
	r := w.run(env, "", "status", "--json")
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		w.t.Fatalf("status --json exited %d without a JSON report: %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	return rep, r
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	return v
}

// mustCall calls a tool and fails the test on a protocol error or an isError result.
func mustCall(ctx context.Context, t *testing.T, s *servertest.Session, name string, args map[string]any) servertest.ToolResult {
	t.Helper()
	r, err := s.Call(ctx, name, args)
	if err != nil {
		t.Fatalf("%s: protocol error: %v\nstderr:\n%s", name, err, s.Stderr())
	}
	if r.IsError {
		t.Fatalf("%s: isError: %s\nstderr:\n%s", name, r.Text, s.Stderr())
	}
	return r
}

// ingestAndSearch ingests docs/guide.md through serve and finds it with r2r_search.
func ingestAndSearch(ctx context.Context, t *testing.T, s *servertest.Session) (docID string, results []servertest.ToolResult) {
	t.Helper()
	ing := mustCall(ctx, t, s, "r2r_ingest_document", map[string]any{"file_path": "docs/guide.md"})
	docID, _ = ing.Structured["document_id"].(string)
	found := mustCall(ctx, t, s, "r2r_search", map[string]any{"query": guideQuery, "limit": 5})
	hits, _ := found.Structured["results"].([]any)
	hit := false
	for _, h := range hits {
		if m, ok := h.(map[string]any); ok && docID != "" && m["document_id"] == docID {
			hit = true
		}
	}
	if !hit {
		t.Errorf("search did not find the ingested document %q:\n%s", docID, found.Text)
	}
	return docID, []servertest.ToolResult{ing, found}
}

// testFileFallback: with no Secret Service, login stores the session in the 0600 file
// with a warning, serve authenticates with it (its stored access token: no refresh at
// start), status names the file, logout removes it.
func testFileFallback(t *testing.T) {
	w := newAuthWorld(t, r2rtest.Options{})
	r := w.login()
	for _, want := range []string{"! no usable system keyring", "system keyring write failed", "stored in " + w.credentialsFile() + " (plain-text file)"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("login stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	fi, err := os.Stat(w.credentialsFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(w.credentialsFile()); strings.Contains(string(b), e2ePassword) {
		t.Fatal("the password is in the credentials file")
	}
	sec := w.storedSecret()
	if sec.Kind != auth.KindRefreshToken || sec.AccessToken == "" {
		t.Fatalf("stored %v, want a session", sec)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := servertest.Serve(ctx, t, w.proj, w.env)
	ingestAndSearch(ctx, t, s)
	if lr := w.srv.LastRequest("POST /v3/retrieval/search"); lr == nil || lr.Header.Get("Authorization") != "Bearer "+sec.AccessToken {
		t.Error("search was not authenticated with the access token from the file")
	}
	if n := w.srv.Count("POST /v3/users/refresh-token"); n != 0 {
		t.Errorf("serve renewed a fresh session %d times", n)
	}
	_, stderr := s.Close()
	if !strings.Contains(stderr, "plain-text file") {
		t.Errorf("serve did not warn about the plain-text file:\n%s", stderr)
	}

	rep, sr := w.statusJSON(nil)
	if sr.Code != 0 || field(rep, "credential", "source") != string(auth.FileSource(w.credentialsFile())) ||
		field(rep, "credential", "kind") != auth.KindRefreshToken || !strings.Contains(fmt.Sprint(rep["warnings"]), "plain-text file") {
		t.Errorf("status exited %d:\n%s", sr.Code, sr.Stdout)
	}

	r = w.run(nil, "", "logout")
	if r.Code != 0 || !strings.Contains(r.Stderr, "removed from "+w.credentialsFile()) {
		t.Errorf("logout exited %d: %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(w.credentialsFile()); !os.IsNotExist(err) {
		t.Errorf("credentials file left after logout (%v)", err)
	}
}

// testTokenRefreshUnderLoad: 50 tool calls in five waves of 10 concurrent calls, with every
// access token expired by R2R before each wave after the first, must all succeed while
// serve renews the token only once per expiry — with the password from the environment
// and with the stored session login keeps. Expiry is R2R's decision
// (ExpireTokens), so the test does not wait for tokens to age.
func testTokenRefreshUnderLoad(t *testing.T) {
	const (
		calls       = 50
		wave        = 10
		maxRefresh  = 6
		maxLogins   = 2
		callTimeout = 30 * time.Second
	)
	tests := []struct {
		name string
		// setup returns serve's environment.
		setup func(w *authWorld) []string
		// logins allowed during serve.
		logins int
	}{
		{name: "env password", logins: maxLogins, setup: func(w *authWorld) []string {
			return append(append([]string(nil), w.env...), "R2R_API_URL="+w.srv.URL, "R2R_EMAIL="+e2eEmail, "R2R_PASSWORD="+e2ePassword)
		}},
		{name: "stored session", logins: 0, setup: func(w *authWorld) []string {
			w.login()
			if sec := w.storedSecret(); sec.Kind != auth.KindRefreshToken {
				w.t.Fatalf("stored %v, want a session", sec)
			}
			return w.env
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newAuthWorld(t, r2rtest.Options{})
			// The waves come faster than r2r_rag_query's default rate limit allows.
			env := append(tt.setup(w), "R2R_MCP_RAG_RATE_LIMIT=0", "R2R_MCP_RATE_LIMIT=0")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s := servertest.Serve(ctx, t, w.proj, env)
			docID, _ := ingestAndSearch(ctx, t, s)
			w.srv.ResetCounts()

			tools := []func(i int) (string, map[string]any){
				func(i int) (string, map[string]any) {
					return "r2r_search", map[string]any{"query": fmt.Sprintf("%s %d", guideQuery, i), "limit": 3}
				},
				func(i int) (string, map[string]any) {
					return "r2r_list_documents", map[string]any{"limit": 10 + i%40}
				},
				func(i int) (string, map[string]any) {
					return "r2r_get_document", map[string]any{"document_id": docID}
				},
				func(i int) (string, map[string]any) {
					return "r2r_rag_query", map[string]any{"question": fmt.Sprintf("When does the quasar ledger reconcile payouts? (%d)", i)}
				},
				func(i int) (string, map[string]any) { return "r2r_status", map[string]any{} },
			}
			var (
				wg       sync.WaitGroup
				mu       sync.Mutex
				failures []string
			)
			for i := range calls {
				if i > 0 && i%wave == 0 {
					wg.Wait()
					w.srv.ExpireTokens()
				}
				name, args := tools[i%len(tools)](i)
				wg.Add(1)
				go func() {
					defer wg.Done()
					cctx, ccancel := context.WithTimeout(ctx, callTimeout)
					defer ccancel()
					r, err := s.Call(cctx, name, args)
					if err == nil && !r.IsError {
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						failures = append(failures, fmt.Sprintf("call %d %s: protocol error %v", i, name, err))
					} else {
						failures = append(failures, fmt.Sprintf("call %d %s: isError: %s", i, name, r.Text))
					}
				}()
			}
			wg.Wait()
			refreshes, logins := w.srv.Count(routeRefresh), w.srv.Count(routeLogin)
			t.Logf("%d calls, tokens expired %d times: %d token refreshes, %d logins; requests by route: %v",
				calls, calls/wave-1, refreshes, logins, w.srv.Counts())
			for _, f := range failures {
				t.Error(f)
			}
			if refreshes > maxRefresh || logins > tt.logins {
				t.Errorf("%d refreshes and %d logins for %d calls; want at most %d and %d", refreshes, logins, calls, maxRefresh, tt.logins)
			}
			if refreshes+logins < calls/wave-1 {
				t.Errorf("%d renewals for %d expiries; the setup did not exercise expiry", refreshes+logins, calls/wave-1)
			}
			s.Close()
		})
	}
}

// testNoSecretsAnywhere runs the realistic flows — a failed and a good login, status,
// serve on the stored key and on R2R_EMAIL/R2R_PASSWORD with debug logs to a file, token
// expiry, logout — and checks that no password, API key or token appears in any stdout,
// stderr, log file or tool result.
func testNoSecretsAnywhere(t *testing.T) {
	w := newAuthWorld(t, r2rtest.Options{})
	const wrongPassword = "Wrong-pass-word-also-secret"
	outputs := map[string]string{}
	keep := func(name string, r servertest.Result) {
		outputs[name+" stdout"], outputs[name+" stderr"] = r.Stdout, r.Stderr
	}

	r := w.run(nil, wrongPassword+"\n", "login", "--url", w.srv.URL, "--email", e2eEmail, "--password-stdin")
	if r.Code == 0 || !strings.Contains(r.Stderr, "wrong password") {
		t.Errorf("login with a wrong password exited %d: %s", r.Code, r.Stderr)
	}
	keep("failed login", r)
	keep("login", w.login())
	apiKey := w.storedSecret().Secret
	keep("status", w.run(nil, "", "status"))
	_, sr := w.statusJSON(nil)
	keep("status --json", sr)

	passwordEnv := append(append([]string(nil), w.env...), "R2R_EMAIL="+e2eEmail, "R2R_PASSWORD="+e2ePassword)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"serve with the stored key", w.env},
		{"serve with R2R_EMAIL/R2R_PASSWORD", passwordEnv},
	} {
		logFile := filepath.Join(t.TempDir(), "serve.log")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s := servertest.Serve(ctx, t, w.proj, tc.env, "--log-file", logFile, "--log-level", "debug")
		docID, results := ingestAndSearch(ctx, t, s)
		w.srv.ExpireTokens() // the password flow renews its token from here on
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{"r2r_rag_query", map[string]any{"question": "When does the quasar ledger reconcile payouts?"}},
			{"r2r_status", map[string]any{}},
			{"r2r_get_document", map[string]any{"document_id": docID}},
			{"r2r_list_documents", map[string]any{}},
			{"r2r_monitor_task", map[string]any{"document_id": docID}},
		} {
			results = append(results, mustCall(ctx, t, s, c.name, c.args))
		}
		stdout, stderr := s.Close()
		cancel()
		outputs[tc.name+" stdout"], outputs[tc.name+" stderr"] = stdout, stderr
		for i, res := range results {
			outputs[fmt.Sprintf("%s tool result %d", tc.name, i)] = res.JSON()
		}
		b, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		outputs[tc.name+" log file"] = string(b)
		if !strings.Contains(string(b), "level=DEBUG") {
			t.Errorf("%s: the log file has no debug records; the check would prove little:\n%s", tc.name, b)
		}
	}
	keep("status with R2R_EMAIL/R2R_PASSWORD", w.run(passwordEnv, "", "status"))
	keep("logout", w.run(nil, "", "logout"))
	// What r2r-mcp leaves in its config dir (config.json, projects.json) once logged out.
	entries, err := os.ReadDir(w.configDir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("config dir %s: %v %v", w.configDir, entries, err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(w.configDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		outputs["file "+e.Name()] = string(b)
	}
	if _, ok := outputs["file "+auth.CredentialsFileName]; ok {
		t.Errorf("%s left after logout", auth.CredentialsFileName)
	}

	secrets := append(w.srv.Credentials(), e2ePassword, wrongPassword, apiKey)
	tokens := 0
	for _, s := range secrets {
		if strings.HasPrefix(s, "eyJ") {
			tokens++
		}
	}
	if tokens < 4 || w.srv.Count(routeRefresh)+w.srv.Count(routeLogin) < 3 {
		t.Errorf("only %d tokens seen (%d refreshes, %d logins); the flows did not exercise token auth", tokens, w.srv.Count(routeRefresh), w.srv.Count(routeLogin))
	}
	t.Logf("checked %d outputs (%d bytes) against %d secrets (%d tokens)", len(outputs), totalLen(outputs), len(secrets), tokens)
	for _, leak := range servertest.FindSecrets(outputs, secrets) {
		t.Error(leak)
	}
}

func totalLen(m map[string]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
