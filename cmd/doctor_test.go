package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// allDoctorChecks is the order of the report.
var allDoctorChecks = []string{checkConfig, checkKeyring, checkR2R, checkCredentials, checkProject, checkSearchIndex,
	checkInitialize, checkToolsList, checkStatusCall, checkDiscover}

// testKeyring is an in-memory keyring that can fail or hang; the real one is never used.
type testKeyring struct {
	err  error         // every call fails with err
	hang chan struct{} // every call blocks until closed
}

func (k testKeyring) Get(string, string) (string, error) {
	if k.hang != nil {
		<-k.hang
	}
	if k.err != nil {
		return "", k.err
	}
	return "", keyring.ErrNotFound
}
func (k testKeyring) Set(string, string, string) error { return errors.New("read only") }
func (k testKeyring) Delete(string, string) error      { return keyring.ErrNotFound }

// doctorFixture is what every doctor test shares: the binaries, built once.
type doctorFixture struct {
	r2rmcp  string // r2r-mcp built from this checkout
	notools string // cmd/testdata/notools-server
}

func buildDoctorFixture(t *testing.T) doctorFixture {
	t.Helper()
	dir := t.TempDir()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	f := doctorFixture{r2rmcp: filepath.Join(dir, "r2r-mcp"+exe), notools: filepath.Join(dir, "notools-server"+exe)}
	for _, b := range []struct{ out, pkg string }{
		{f.r2rmcp, ".."},
		{f.notools, "./testdata/notools-server"},
	} {
		cmd := exec.Command("go", "build", "-ldflags", "-X github.com/r2r-mcp/r2r-mcp/cmd.version=doctor-test", "-o", b.out, b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return f
}

// doctorEnv is a hermetic environment: a private config dir, no inherited R2R settings,
// and a D-Bus address that leads nowhere, so a child that looks for the keyring fails fast
// instead of reaching a real one.
func doctorEnv(t *testing.T, kv ...string) map[string]string {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{
		auth.ConfigDirEnv:          filepath.Join(home, "config"),
		"HOME":                     home,
		"USERPROFILE":              home,
		"XDG_CONFIG_HOME":          filepath.Join(home, ".config"),
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=" + filepath.Join(home, "no-bus"),
	}
	for _, k := range []string{"PATH", "TMPDIR", "SYSTEMROOT", "TEMP", "TMP"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return env
}

func environList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// gitProjectDir makes a directory that is the root of a git project called name.
func gitProjectDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

type doctorRun struct {
	stdout, stderr string
	err            error
}

// run executes doctor in-process (its keyring is kr, never the real one) with the given
// environment; the server child gets the same environment.
func (f doctorFixture) run(t *testing.T, env map[string]string, kr auth.Keyring, args ...string) doctorRun {
	t.Helper()
	var out, errOut bytes.Buffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Build: BuildInfo{Version: "test"}, Getenv: func(k string) string { return env[k] }}
	c := newDoctorCmd(deps, func(o *doctorOptions) error {
		o.Env = authEnv{ConfigDir: env[auth.ConfigDirEnv], Keyring: kr}
		o.Environ = func() []string { return environList(env) }
		o.Executable = func() (string, error) { return f.r2rmcp, nil }
		return runDoctor(o)
	})
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.ExecuteContext(ctx)
	return doctorRun{out.String(), errOut.String(), err}
}

func (r doctorRun) report(t *testing.T) doctorReport {
	t.Helper()
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, r.stdout)
	}
	return rep
}

func checkByName(t *testing.T, rep doctorReport, name string) doctorCheck {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, rep.Checks)
	return doctorCheck{}
}

// wantStatuses compares every check's status with want (name → status).
func wantStatuses(t *testing.T, rep doctorReport, want map[string]string) {
	t.Helper()
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
		if w, ok := want[c.Name]; ok && c.Status != w {
			t.Errorf("%s: status %s, want %s\ndetail: %s\nfix: %s", c.Name, c.Status, w, c.Detail, c.Fix)
		}
		if c.OK != (c.Status != statusFail) || c.Title == "" || c.Detail == "" || c.DurationMS < 0 {
			t.Errorf("%s: inconsistent check %+v", c.Name, c)
		}
		if (c.Status == statusFail || c.Status == statusWarn) && c.Fix == "" && c.Detail != "interrupted" {
			t.Errorf("%s: %s without a fix", c.Name, c.Status)
		}
	}
	if !slices.Equal(names, allDoctorChecks) {
		t.Errorf("checks %v, want %v", names, allDoctorChecks)
	}
}

// newAPIKey creates a user on srv and an API key for it.
func newAPIKey(t *testing.T, srv *r2rtest.Server) (key string, client *r2r.Client) {
	t.Helper()
	ctx := context.Background()
	uid := srv.CreateUser(testEmail, testPassword, false)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := c.Login(ctx, testEmail, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.WithCredentials(r2r.Bearer(tp.AccessToken.Token)).CreateAPIKey(ctx, uid, "doctor-test", "")
	if err != nil {
		t.Fatal(err)
	}
	return k.APIKey, c.WithCredentials(r2r.APIKey(k.APIKey))
}

// registryToolNames is what serve should list: the tool registry itself.
func registryToolNames(t *testing.T) []string {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Registry(&tools.Deps{Client: c, Projects: project.NewResolver(project.Options{CacheFile: "-"}),
		History: tools.NewSearchHistory(0)}) {
		names = append(names, tl.Def.Name)
	}
	slices.Sort(names)
	return names
}

// closedURL is an R2R URL nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestDoctor runs doctor against the emulator and the real r2r-mcp binary (built once),
// healthy and in each failure it must explain.
func TestDoctor(t *testing.T) {
	f := buildDoctorFixture(t)
	wantTools := registryToolNames(t)

	t.Run("all ok", func(t *testing.T) {
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		key, client := newAPIKey(t, srv)
		proj := gitProjectDir(t, "ledgerline")
		coll, err := client.CreateCollection(context.Background(), project.CollectionPrefix+"ledgerline", "")
		if err != nil {
			t.Fatal(err)
		}
		env := doctorEnv(t, "R2R_API_URL", srv.URL, "R2R_API_KEY", key)

		r := f.run(t, env, testKeyring{}, "--json", "--project-dir", proj)
		if r.err != nil {
			t.Fatalf("doctor: %v\n%s", r.err, r.stdout)
		}
		rep := r.report(t)
		all := map[string]string{}
		for _, n := range allDoctorChecks {
			all[n] = statusOK
		}
		wantStatuses(t, rep, all)
		if !rep.OK || rep.Server == nil {
			t.Fatalf("report %+v", rep)
		}
		s := rep.Server
		if s.Name != "r2r-mcp" || s.Version != "doctor-test" || s.ProtocolVersion != mcp.LATEST_LEGACY_PROTOCOL_VERSION || s.Command != f.r2rmcp {
			t.Errorf("server %+v", s)
		}
		if !slices.Equal(s.Tools, wantTools) {
			t.Errorf("tools %v, want the registry's %v", s.Tools, wantTools)
		}
		wantSent := []string{"initialize", "notifications/initialized", "tools/list", "tools/call"}
		if !slices.Equal(s.Handshake, wantSent) {
			t.Errorf("client sent %v, want %v", s.Handshake, wantSent)
		}
		if len(s.StderrTail) != 0 {
			t.Errorf("stderr tail kept although nothing failed: %v", s.StderrTail)
		}
		if got := checkByName(t, rep, checkProject).Detail; !strings.Contains(got, "ledgerline ("+proj+") → collection claude-code-ledgerline (id "+coll.ID+")") {
			t.Errorf("project detail %q", got)
		}
		if got := checkByName(t, rep, checkCredentials).Detail; !strings.Contains(got, testEmail+" (user), credentials from "+auth.SourceEnvAPIKey) {
			t.Errorf("credentials detail %q", got)
		}
		if got := checkByName(t, rep, checkStatusCall).Detail; !strings.Contains(got, "R2R health as the server sees it: ok") ||
			!strings.Contains(got, "collection claude-code-ledgerline (id "+coll.ID+")") {
			t.Errorf("r2r_status detail %q", got)
		}
		if got, want := checkByName(t, rep, checkDiscover).Detail, fmt.Sprintf("protocol 2026-07-28; handshake: server/discover; %d tools", len(registryToolNames(t))); got != want {
			t.Errorf("server/discover detail %q", got)
		}
		if strings.Contains(r.stdout+r.stderr, key) {
			t.Error("the API key appears in the output")
		}
		if srv.Count("POST /v3/collections") != 1 {
			t.Errorf("doctor created something: %v", srv.Counts())
		}

		// The same run for people.
		r = f.run(t, env, testKeyring{}, "--project-dir", proj)
		if r.err != nil {
			t.Fatalf("doctor: %v\n%s", r.err, r.stdout)
		}
		for _, title := range checkTitles {
			if !strings.Contains(r.stdout, "✓ "+title+": ") {
				t.Errorf("no ✓ line for %s:\n%s", title, r.stdout)
			}
		}
		if strings.ContainsAny(r.stdout, "✗⚠") || !strings.Contains(r.stdout, "All checks passed (10 ok) in ") {
			t.Errorf("stdout:\n%s", r.stdout)
		}
		if r.stderr != "" {
			t.Errorf("stderr is not a terminal, yet got %q", r.stderr)
		}
	})

	t.Run("R2R stopped", func(t *testing.T) {
		t.Parallel()
		url := closedURL(t)
		env := doctorEnv(t, "R2R_API_KEY", "key_abc.secret")
		r := f.run(t, env, testKeyring{}, "--url", url, "--project-dir", gitProjectDir(t, "alpha"))
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)\n%s", r.err, r.stdout)
		}
		for _, w := range []string{
			"✗ R2R reachable: cannot reach R2R at " + url + ": ",
			"fix: Start R2R, or point r2r-mcp at it with --url, R2R_API_URL or r2r-mcp login --url URL (the URL now comes from flag --url).",
			"- Credentials accepted: R2R is not reachable",
			"- Project → collection: alpha (",
			// serve starts without R2R and says so through r2r_status.
			"✓ MCP tools/call r2r_status: R2R health as the server sees it: unreachable",
			"server uses " + url + " (from flag --url)",
			"Some checks failed",
		} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
			}
		}
	})

	t.Run("bad credentials", func(t *testing.T) {
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		env := doctorEnv(t, "R2R_API_URL", srv.URL, "R2R_API_KEY", "key_bad.bad")
		r := f.run(t, env, testKeyring{}, "--json", "--project-dir", gitProjectDir(t, "alpha"))
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)", r.err)
		}
		rep := r.report(t)
		wantStatuses(t, rep, map[string]string{checkConfig: statusOK, checkKeyring: statusOK, checkR2R: statusOK,
			checkCredentials: statusFail, checkProject: statusSkip, checkInitialize: statusOK, checkToolsList: statusOK, checkStatusCall: statusOK})
		c := checkByName(t, rep, checkCredentials)
		if rep.OK || !strings.Contains(c.Detail, "R2R rejected the API key key_ba… (from env R2R_API_KEY): 401") ||
			!strings.Contains(c.Fix, "run `r2r-mcp login`") {
			t.Errorf("credentials check %+v", c)
		}
	})

	t.Run("anonymous on an R2R with auth off", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			// Without a credential the server child looks in the OS keyring; only on Linux
			// does doctorEnv's D-Bus address keep it away from the real one.
			t.Skip("needs Linux to keep the child away from the real keyring")
		}
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{})
		env := doctorEnv(t, "R2R_API_URL", srv.URL)
		r := f.run(t, env, testKeyring{err: errors.New("The name org.freedesktop.secrets was not provided by any .service files")},
			"--json", "--project-dir", gitProjectDir(t, "beta"))
		if r.err != nil {
			t.Fatalf("doctor: %v\n%s", r.err, r.stdout)
		}
		rep := r.report(t)
		wantStatuses(t, rep, map[string]string{checkConfig: statusOK, checkKeyring: statusWarn, checkCredentials: statusOK,
			checkProject: statusOK, checkStatusCall: statusOK})
		if d := checkByName(t, rep, checkCredentials).Detail; !strings.HasPrefix(d, "anonymous (R2R has auth off)") {
			t.Errorf("credentials detail %q", d)
		}
		if d := checkByName(t, rep, checkKeyring).Detail; !strings.Contains(d, "not needed now: R2R has auth off") {
			t.Errorf("keyring detail %q", d)
		}
		if d := checkByName(t, rep, checkProject).Detail; !strings.Contains(d, "collection claude-code-beta: not created yet — the first ingest creates it") {
			t.Errorf("project detail %q", d)
		}
		if srv.Count("POST /v3/collections") != 0 {
			t.Errorf("doctor created the collection: %v", srv.Counts())
		}
	})

	t.Run("server without tools", func(t *testing.T) {
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{})
		env := doctorEnv(t, "R2R_API_URL", srv.URL, "R2R_API_KEY", "key_abc.secret")
		r := f.run(t, env, testKeyring{}, "--json", "--server-command", f.notools, "--project-dir", gitProjectDir(t, "alpha"))
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)", r.err)
		}
		rep := r.report(t)
		wantStatuses(t, rep, map[string]string{checkInitialize: statusFail, checkToolsList: statusSkip, checkStatusCall: statusSkip})
		c := checkByName(t, rep, checkInitialize)
		if !strings.Contains(c.Detail, "the server notools-fixture 0.0.1 does not declare the tools capability (it declares: prompts)") ||
			!strings.Contains(c.Fix, "--server-command "+f.notools+" is not r2r-mcp's server") {
			t.Errorf("initialize check %+v", c)
		}
		if s := rep.Server; s == nil || !slices.Equal(s.Capabilities, []string{"prompts"}) || len(s.Tools) != 0 {
			t.Errorf("server %+v", s)
		}
	})

	t.Run("server exits", func(t *testing.T) {
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{})
		env := doctorEnv(t, "R2R_API_URL", srv.URL, "R2R_API_KEY", "key_abc.secret", "NOTOOLS_FIXTURE_EXIT", "fatal: cannot open the log file")
		r := f.run(t, env, testKeyring{}, "--server-command", f.notools)
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)", r.err)
		}
		for _, w := range []string{
			"✗ MCP initialize: the server exited (exit status 3) during initialize; transport closed",
			"Last lines of notools-server",
			"  | notools-server: starting\n  | fatal: cannot open the log file\n",
		} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("stdout lacks %q:\n%s", w, r.stdout)
			}
		}
	})

	t.Run("server hangs", func(t *testing.T) {
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{})
		env := doctorEnv(t, "R2R_API_URL", srv.URL, "R2R_API_KEY", "key_abc.secret", "NOTOOLS_FIXTURE_HANG", "1")
		// 1s, not less: on a loaded 2-core machine the fixture may not have written its
		// "hanging" line within a few hundred milliseconds of being started.
		r := f.run(t, env, testKeyring{}, "--json", "--server-command", f.notools, "--timeout", "1s")
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)", r.err)
		}
		rep := r.report(t)
		c := checkByName(t, rep, checkInitialize)
		if c.Status != statusFail || c.Detail != "the server did not answer initialize within 1s" || !strings.Contains(c.Fix, "--timeout") {
			t.Errorf("initialize check %+v", c)
		}
		if s := rep.Server; s == nil || !slices.Contains(s.StderrTail, "notools-server: hanging") {
			t.Errorf("server %+v", s)
		}
	})

	t.Run("invalid URL", func(t *testing.T) {
		t.Parallel()
		env := doctorEnv(t, "R2R_API_URL", "localhost:7272")
		r := f.run(t, env, testKeyring{}, "--json")
		if !errors.Is(r.err, SilentError) {
			t.Fatalf("err = %v, want SilentError (exit 1)", r.err)
		}
		rep := r.report(t)
		wantStatuses(t, rep, map[string]string{checkConfig: statusFail, checkR2R: statusSkip, checkCredentials: statusSkip,
			checkProject: statusSkip, checkInitialize: statusSkip, checkToolsList: statusSkip, checkStatusCall: statusSkip})
		if c := checkByName(t, rep, checkConfig); !strings.Contains(c.Detail, "env R2R_API_URL") || rep.Server != nil {
			t.Errorf("config check %+v, server %+v", c, rep.Server)
		}
	})

	// The built binary itself: doctor finds serve through os.Executable, and the exit
	// status is 0 with nothing failed and 1 otherwise.
	t.Run("binary exit status", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("needs Linux to keep doctor away from the real keyring")
		}
		t.Parallel()
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		key, _ := newAPIKey(t, srv)
		for _, tt := range []struct {
			name string
			url  string
			want int
		}{
			{"healthy", srv.URL, 0},
			{"R2R stopped", closedURL(t), 1},
		} {
			env := doctorEnv(t, "R2R_API_URL", tt.url, "R2R_API_KEY", key)
			cmd := exec.Command(f.r2rmcp, "doctor", "--json")
			cmd.Env = environList(env)
			cmd.Dir = gitProjectDir(t, "gamma")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.want {
				t.Fatalf("%s: exit %d, want %d\n%s\n%s", tt.name, code, tt.want, out.String(), errOut.String())
			}
			rep := doctorRun{stdout: out.String()}.report(t)
			if rep.OK != (tt.want == 0) || rep.Server == nil || rep.Server.Command != f.r2rmcp {
				t.Errorf("%s: report ok=%v server=%+v", tt.name, rep.OK, rep.Server)
			}
			if errOut.Len() != 0 {
				t.Errorf("%s: stderr %q (SilentError must print nothing more)", tt.name, errOut.String())
			}
		}
	})
}

// sourced is a credential that says it came from source, as auth's do (auth.Described).
type sourced struct {
	r2r.Credentials
	source auth.Source
}

func (s sourced) Origin() auth.Origin { return auth.Origin{Source: s.source} }

// TestDoctorKeyringVerdict covers how an unreachable keyring is judged from what the
// other checks found.
func TestDoctorKeyringVerdict(t *testing.T) {
	// No Secret Service at all: auth.SystemKeyring classifies this D-Bus error as ErrNoKeyring.
	unavailable := testKeyring{err: fmt.Errorf("%w: The name org.freedesktop.secrets was not provided by any .service files", auth.ErrNoKeyring)}
	// A keyring that is there but refuses: login would fail rather than use the file.
	locked := testKeyring{err: errors.New("Cannot get secret of a locked object")}
	hung := testKeyring{hang: make(chan struct{})}
	t.Cleanup(func() { close(hung.hang) })
	tests := []struct {
		name      string
		kr        auth.Keyring
		source    string
		anonymous bool
		needLogin bool
		status    string
		detail    string
	}{
		{"reachable", testKeyring{}, auth.SourceNone, false, false, statusOK, "answered"},
		{"holds the credential", testKeyring{}, auth.SourceKeyring, false, false, statusOK, "it holds the credential for http://r2r.test"},
		{"unavailable, env credentials", unavailable, auth.SourceEnvAPIKey, false, false, statusWarn, "not needed now: the credentials come from env R2R_API_KEY"},
		{"unavailable, file credentials", unavailable, string(auth.FileSource("/x/credentials.json")), false, false, statusWarn, "the credentials come from file /x/credentials.json"},
		{"unavailable, auth off", unavailable, auth.SourceNone, true, false, statusWarn, "not needed now: R2R has auth off"},
		{"unavailable, R2R not asked", unavailable, auth.SourceNone, false, false, statusWarn, "not needed unless R2R requires a login"},
		{"unavailable, login needed", unavailable, auth.SourceNone, false, true, statusFail, "r2r-mcp login would have to store it in a plain-text file"},
		{"locked, login needed", locked, auth.SourceNone, false, true, statusFail, "r2r-mcp login fails until the keyring is unlocked, or needs --insecure-storage"},
		{"locked, R2R not asked", locked, auth.SourceNone, false, false, statusWarn, "r2r-mcp login would then need the keyring unlocked, or --insecure-storage"},
		{"hung, login needed", hung, auth.SourceNone, false, true, statusFail, "r2r-mcp login fails until the keyring is unlocked"},
		{"hung", hung, auth.SourceEnvAPIKey, false, false, statusWarn, "did not answer within 20ms"},
		// A bad URL stops resolution before any credential source is known.
		{"unavailable, configuration invalid", unavailable, "", false, false, statusWarn, "whether it is needed is known once the configuration is fixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := auth.Resolved{URL: "http://r2r.test"}
			if tt.source != "" {
				res.Credentials = sourced{Credentials: r2r.Anonymous(), source: auth.Source(tt.source)}
			}
			d := &doctor{opts: &doctorOptions{r2rCmd: r2rCmd{Env: authEnv{Keyring: tt.kr, KeyringTimeout: 20 * time.Millisecond}}},
				res: res, anonymous: tt.anonymous, needLogin: tt.needLogin}
			c := d.checkKeyring(context.Background())
			d.settleKeyring(&c)
			c = finishCheck(checkKeyring, c, 0)
			if c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("got %s %q, want %s containing %q", c.Status, c.Detail, tt.status, tt.detail)
			}
			if c.Status != statusOK && !strings.Contains(c.Fix, "0600 file fallback") {
				t.Errorf("fix %q", c.Fix)
			}
		})
	}
}

// TestDoctorJSONRPCErrors drives mcp-go's client against a peer that answers every
// request with one JSON-RPC error, and checks the text, code and retryable flag doctor
// reports (seed 004's mapping table), and that a closed transport reads "server exited".
func TestDoctorJSONRPCErrors(t *testing.T) {
	tests := []struct {
		code      int
		meaning   string
		retryable bool
	}{
		{mcp.PARSE_ERROR, "parse error", false},
		{mcp.INVALID_REQUEST, "invalid request", false},
		{mcp.METHOD_NOT_FOUND, "method not found", false},
		{mcp.INVALID_PARAMS, "invalid params", false},
		{mcp.INTERNAL_ERROR, "internal error in the server", true},
		{toolerr.CodeR2RAPI, "R2R API error", true},
		{toolerr.CodeAuth, "authentication failed", false},
		{toolerr.CodeBreakerOpen, "circuit breaker open", true},
		{toolerr.CodeRateLimited, "rate limited: by r2r-mcp's own per-tool limit, or by R2R (429)", true},
		{-32050, "unexpected error (code -32050)", true},
	}
	for _, tt := range tests {
		t.Run(tt.meaning, func(t *testing.T) {
			p, stop := scriptedProbe(t, func(id json.RawMessage) string {
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":` + strconv.Itoa(tt.code) + `,"message":"peer says no"}}`
			})
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := p.client.Initialize(ctx, mcp.InitializeRequest{})
			if err == nil {
				t.Fatal("initialize succeeded")
			}
			c := p.explain(ctx, "initialize", err)
			want := "initialize failed: " + tt.meaning
			if c.Status != statusFail || !strings.HasPrefix(c.Detail, want) || !strings.HasSuffix(c.Detail, "(JSON-RPC "+strconv.Itoa(tt.code)+": peer says no)") {
				t.Errorf("detail %q, want %q… (JSON-RPC %d: peer says no)", c.Detail, want, tt.code)
			}
			if c.Code != tt.code || c.Retryable == nil || *c.Retryable != tt.retryable || c.Fix == "" {
				t.Errorf("code %d retryable %v fix %q", c.Code, c.Retryable, c.Fix)
			}
		})
	}
	t.Run("transport closed", func(t *testing.T) {
		p, stop := scriptedProbe(t, nil) // hangs up at the first request
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := p.client.Initialize(ctx, mcp.InitializeRequest{})
		c := p.explain(ctx, "initialize", err)
		if c.Status != statusFail || !strings.HasPrefix(c.Detail, "the server exited during initialize; transport closed") {
			t.Errorf("err %v → %+v", err, c)
		}
	})
}

// scriptedProbe connects an mcpProbe's client, through the recording transport, to a peer
// that answers each request with answer(id); a nil answer hangs up instead.
func scriptedProbe(t *testing.T, answer func(id json.RawMessage) string) (*mcpProbe, func()) {
	t.Helper()
	clientIn, peerOut := io.Pipe()
	peerIn, clientOut := io.Pipe()
	go func() {
		defer peerOut.Close()
		dec := json.NewDecoder(peerIn)
		for {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if dec.Decode(&msg) != nil {
				return
			}
			if msg.ID == nil {
				continue
			}
			if answer == nil {
				peerIn.Close()
				return
			}
			if _, err := io.WriteString(peerOut, answer(msg.ID)+"\n"); err != nil {
				return
			}
		}
	}()
	p := &mcpProbe{d: &doctor{opts: &doctorOptions{}}, srv: &doctorServer{Command: "peer"}, timeout: time.Second, stderr: &tailBuffer{max: 1024}}
	p.rec = &recordingTransport{Interface: transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader("")))}
	p.client = mcpclient.NewClient(p.rec, mcpclient.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	if err := p.client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// EOF (not a closed pipe) on the client's side, so mcp-go has nothing to log.
	return p, func() { peerOut.Close(); p.close(); peerIn.Close() }
}

// TestDoctorCredentialsCheck runs the configuration, R2R and credentials checks in-process
// against the emulator, with the credential from the environment: a failed password
// login is reported as R2R's answer to it, not as R2R being unreachable.
func TestDoctorCredentialsCheck(t *testing.T) {
	tests := []struct {
		name   string
		env    []string // key, value pairs
		setup  func(srv *r2rtest.Server)
		status string
		detail string
		fix    string
	}{
		{name: "password accepted", env: []string{"R2R_EMAIL", testEmail, "R2R_PASSWORD", testPassword},
			status: statusOK, detail: testEmail + " (user), credentials from " + auth.SourceEnvPassword},
		{name: "wrong password", env: []string{"R2R_EMAIL", testEmail, "R2R_PASSWORD", "wrong-env-password"},
			status: statusFail, detail: "R2R rejected the password for " + testEmail + " (from " + auth.SourceEnvPassword + "): login: 401 Incorrect email or password",
			fix: "Fix R2R_EMAIL/R2R_PASSWORD where they are set"},
		{name: "unknown email", env: []string{"R2R_EMAIL", "nobody@example.com", "R2R_PASSWORD", testPassword},
			status: statusFail, detail: "R2R has no account nobody@example.com (the email from " + auth.SourceEnvPassword + "): login: 404 User not found",
			fix: "Fix R2R_EMAIL/R2R_PASSWORD where they are set"},
		{name: "login fails on R2R's side", env: []string{"R2R_EMAIL", testEmail, "R2R_PASSWORD", testPassword},
			setup:  func(srv *r2rtest.Server) { srv.ForceStatus("POST /v3/users/login", 500, 1) },
			status: statusFail, detail: "GET /v3/users/me failed: login: 500", fix: "Check R2R's logs"},
		{name: "wrong API key", env: []string{"R2R_API_KEY", "key_bad.bad"},
			status: statusFail, detail: "R2R rejected the API key key_ba… (from " + auth.SourceEnvAPIKey + "): 401", fix: "Fix R2R_API_KEY where it is set"},
		{name: "no credential", status: statusFail, detail: "R2R requires authentication and no credential was found: 401",
			fix: "Run `r2r-mcp login`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
			srv.CreateUser(testEmail, testPassword, false)
			if tt.setup != nil {
				tt.setup(srv)
			}
			env := doctorEnv(t, append([]string{"R2R_API_URL", srv.URL}, tt.env...)...)
			d := &doctor{opts: &doctorOptions{ProjectDir: t.TempDir(), r2rCmd: r2rCmd{
				Deps: Deps{Build: BuildInfo{Version: "test"}, Getenv: func(k string) string { return env[k] }},
				Env:  authEnv{ConfigDir: env[auth.ConfigDirEnv], Keyring: testKeyring{}}}}}
			ctx := context.Background()
			for _, step := range []func(context.Context) doctorCheck{d.checkConfig, d.checkR2R} {
				if c := step(ctx); c.Status != statusOK {
					t.Fatalf("an earlier check failed: %+v", c)
				}
			}
			c := d.checkCredentials(ctx)
			if c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) || !strings.Contains(c.Fix, tt.fix) {
				t.Errorf("got %s %q (fix %q), want %s containing %q (fix with %q)", c.Status, c.Detail, c.Fix, tt.status, tt.detail, tt.fix)
			}
			if d.needLogin != (tt.name == "no credential") {
				t.Errorf("needLogin = %v", d.needLogin)
			}
			if p := env["R2R_PASSWORD"]; p != "" && strings.Contains(c.Detail+c.Fix, p) {
				t.Error("the password appears in the check")
			}
		})
	}
}

// TestDoctorStatusCallErrors feeds doctor's r2r_status call error results as r2r-mcp
// sends them (the code in _meta, the text in content) and checks what it makes of them.
func TestDoctorStatusCallErrors(t *testing.T) {
	retryAfter := 2.5
	tests := []struct {
		name      string
		result    *mcp.CallToolResult
		detail    string
		fix       string
		code      int
		retryable bool
	}{
		{name: "configuration problem",
			result: toolerr.Result(toolerr.Info{Type: "configuration", Code: toolerr.CodeInternal,
				Message: "The project's .r2r-mcp.json is not valid JSON."}),
			detail: "r2r_status returned an error: r2r-mcp could not run the tool: a configuration problem or an internal error (code -32603): The project's .r2r-mcp.json is not valid JSON.",
			fix:    "or report the bug", code: toolerr.CodeInternal},
		{name: "r2r-mcp's rate limit",
			result: toolerr.Result(toolerr.Info{Type: "rate_limited", Code: toolerr.CodeRateLimited, Retryable: true,
				RetryAfter: &retryAfter, Message: "r2r_status is called too often."}),
			detail: "rate limited: by r2r-mcp's own per-tool limit, or by R2R (429) (code -32004)",
			fix:    "Retry after 2.5 s. Wait retry_after seconds", code: toolerr.CodeRateLimited, retryable: true},
		{name: "authentication",
			result: toolerr.Result(toolerr.Info{Type: "authentication", Code: toolerr.CodeAuth, Message: "R2R rejected R2R_API_KEY (401)."}),
			detail: "authentication failed: R2R rejected the credentials (code -32002): R2R rejected R2R_API_KEY (401).",
			fix:    "Run r2r-mcp login", code: toolerr.CodeAuth},
		{name: "error without r2r-mcp's data",
			result: mcp.NewToolResultError("something broke"),
			detail: "r2r_status returned an error: something broke", fix: "See the server's stderr below."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.result)
			if err != nil {
				t.Fatal(err)
			}
			// The peer answers the first request (initialize) as a server with tools, every
			// later one with the tool result.
			initialized := false
			p, stop := scriptedProbe(t, func(id json.RawMessage) string {
				result := string(raw)
				if !initialized {
					initialized = true
					result = `{"protocolVersion":"` + mcp.LATEST_LEGACY_PROTOCOL_VERSION + `","capabilities":{"tools":{}},"serverInfo":{"name":"peer","version":"0"}}`
				}
				return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
			})
			defer stop()
			p.schemas = map[string]mcp.Tool{statusToolName: mcp.NewTool(statusToolName)}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req := mcp.InitializeRequest{}
			req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
			if _, err := p.client.Initialize(ctx, req); err != nil {
				t.Fatal(err)
			}
			c := p.callStatus(ctx)
			if c.Status != statusFail || !strings.Contains(c.Detail, tt.detail) || !strings.Contains(c.Fix, tt.fix) {
				t.Errorf("got %s %q (fix %q), want detail with %q, fix with %q", c.Status, c.Detail, c.Fix, tt.detail, tt.fix)
			}
			if c.Code != tt.code || (tt.code != 0 && (c.Retryable == nil || *c.Retryable != tt.retryable)) {
				t.Errorf("code %d retryable %v, want %d %v", c.Code, c.Retryable, tt.code, tt.retryable)
			}
		})
	}
}

// doctor's credentials check says what the check itself ran into: a renewal that went
// without the session lock, with why.
func TestDoctorNamesWhyTheSessionLockCannotBeMade(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	srv.CreateUser(testEmail, testPassword, false)
	env := doctorEnv(t, "R2R_API_URL", srv.URL)
	dir := env[auth.ConfigDirEnv]
	anon, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := anon.Login(context.Background(), testEmail, testPassword)
	if err != nil {
		t.Fatal(err)
	}
	// A session stored without its access token is renewed on first use.
	sec := auth.Secret{Kind: auth.KindRefreshToken, Secret: pair.RefreshToken.Token, Email: testEmail}
	if err := (&auth.FileStore{Path: filepath.Join(dir, auth.CredentialsFileName)}).Save(context.Background(), srv.URL, sec); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(auth.SessionLockPath(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	d := &doctor{opts: &doctorOptions{ProjectDir: t.TempDir(), r2rCmd: r2rCmd{
		Deps: Deps{Build: BuildInfo{Version: "test"}, Getenv: func(k string) string { return env[k] }},
		Env:  authEnv{ConfigDir: dir, Keyring: testKeyring{err: errors.New("no keyring")}}}}}
	ctx := context.Background()
	for _, step := range []func(context.Context) doctorCheck{d.checkConfig, d.checkR2R} {
		if c := step(ctx); c.Status == statusFail {
			t.Fatalf("an earlier check failed: %+v", c)
		}
	}
	c := d.checkCredentials(ctx)
	if c.Status != statusWarn || !strings.Contains(c.Fix, "Cannot use the session lock "+auth.SessionLockPath(dir)+": it is a directory") {
		t.Fatalf("%+v", c)
	}
}
