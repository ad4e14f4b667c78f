package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// serveKeyring is an in-memory OS keyring.
type serveKeyring struct {
	mu sync.Mutex
	m  map[string]string
}

func (k *serveKeyring) Get(service, account string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.m[service+"|"+account]; ok {
		return v, nil
	}
	return "", keyring.ErrNotFound
}

func (k *serveKeyring) Set(service, account, secret string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[service+"|"+account] = secret
	return nil
}

func (k *serveKeyring) Delete(service, account string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, service+"|"+account)
	return nil
}

func TestServeConfig(t *testing.T) {
	const saved = "http://saved.example:7272"
	tests := []struct {
		name       string
		flagURL    string
		env        map[string]string
		savedURL   string // written to config.json
		storedKey  string // stored in the keyring for the resolved URL
		wantURL    string
		wantSource string
		wantAuth   string
		wantErr    string
	}{
		{name: "default", wantURL: auth.DefaultURL, wantSource: "default", wantAuth: "none"},
		{name: "flag beats env", flagURL: "http://flag.example/v3/", env: map[string]string{"R2R_API_URL": "http://env.example"},
			wantURL: "http://flag.example", wantSource: "flag --url", wantAuth: "none"},
		{name: "R2R_API_URL beats R2R_API_BASE", env: map[string]string{"R2R_API_URL": "http://url.example", "R2R_API_BASE": "http://base.example"},
			wantURL: "http://url.example", wantSource: "env R2R_API_URL", wantAuth: "none"},
		{name: "R2R_API_BASE", env: map[string]string{"R2R_API_BASE": "http://base.example"},
			wantURL: "http://base.example", wantSource: "env R2R_API_BASE", wantAuth: "none"},
		{name: "env beats saved config", env: map[string]string{"R2R_API_BASE": "http://base.example"}, savedURL: saved,
			wantURL: "http://base.example", wantSource: "env R2R_API_BASE", wantAuth: "none"},
		{name: "saved config", savedURL: saved, wantURL: saved, wantSource: "config", wantAuth: "none"},
		{name: "API key from env", env: map[string]string{"R2R_API_KEY": "key_abc.secret"},
			wantURL: auth.DefaultURL, wantSource: "default", wantAuth: "env R2R_API_KEY"},
		{name: "email and password from env", env: map[string]string{"R2R_EMAIL": "a@example.com", "R2R_PASSWORD": "s3cr3t-pw!"},
			wantURL: auth.DefaultURL, wantSource: "default", wantAuth: "env R2R_EMAIL/R2R_PASSWORD"},
		{name: "key in the keyring", savedURL: saved, storedKey: "key_stored.secret",
			wantURL: saved, wantSource: "config", wantAuth: "keyring"},
		{name: "invalid flag URL", flagURL: "localhost:7272", wantErr: "--url"},
		{name: "invalid env URL", env: map[string]string{"R2R_API_URL": "ftp://x"}, wantErr: "R2R_API_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			kr := &serveKeyring{m: map[string]string{}}
			if tt.savedURL != "" {
				if err := auth.SaveURL(dir, tt.savedURL); err != nil {
					t.Fatal(err)
				}
			}
			if tt.storedKey != "" {
				store := &auth.KeyringStore{Keyring: kr}
				if err := store.Save(context.Background(), tt.wantURL, auth.Secret{Kind: auth.KindAPIKey, Secret: tt.storedKey}); err != nil {
					t.Fatal(err)
				}
			}
			deps := Deps{Build: BuildInfo{Version: "9.9.9", Commit: "c0ffee"}, Getenv: func(k string) string { return tt.env[k] }}
			opts := &serveOptions{R2RURL: tt.flagURL, ProjectDir: t.TempDir(), Env: authEnv{ConfigDir: dir, Keyring: kr}, Options: server.DefaultOptions()}
			cfg, err := serveConfig(context.Background(), deps, opts, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			authSource := auth.OriginOf(cfg.Credentials).Source
			lc, lazy := cfg.Credentials.(*auth.LazyCredentials)
			if wantLazy := tt.env["R2R_API_KEY"] == "" && tt.env["R2R_EMAIL"] == ""; lazy != wantLazy {
				t.Errorf("credentials %v: lazy %v, want %v (only environment credentials are resolved at once)", cfg.Credentials, lazy, wantLazy)
			}
			if lazy {
				// The stored credential is read on first use, not by serveConfig.
				if authSource != auth.SourceKeyringPending || lc.Loaded() {
					t.Errorf("lazy credential: auth source %q, loaded %v; want %q, not loaded", authSource, lc.Loaded(), auth.SourceKeyringPending)
				}
				if err := lc.Load(context.Background()); err != nil {
					t.Fatalf("load: %v", err)
				}
				authSource = lc.Origin().Source
			}
			if cfg.R2RURL != tt.wantURL || !strings.HasPrefix(cfg.URLSource, tt.wantSource) || string(authSource) != tt.wantAuth {
				t.Errorf("got url %q (%s), auth %q; want %q (%s), %q", cfg.R2RURL, cfg.URLSource, authSource, tt.wantURL, tt.wantSource, tt.wantAuth)
			}
			if cfg.Credentials == nil {
				t.Error("nil credentials")
			}
			if cfg.Version != "9.9.9" || cfg.Commit != "c0ffee" || cfg.ConfigDir != dir {
				t.Errorf("cfg = %+v", cfg)
			}
			for k, v := range cfg.Settings {
				for _, secret := range []string{tt.env["R2R_API_KEY"], tt.env["R2R_PASSWORD"], tt.storedKey} {
					if secret != "" && strings.Contains(v, secret) {
						t.Errorf("setting %s=%q leaks a secret", k, v)
					}
				}
			}
		})
	}
}

func TestServeFlags(t *testing.T) {
	proj := t.TempDir()
	logFile := filepath.Join(t.TempDir(), "serve.log")
	env := map[string]string{"R2R_API_KEY": "key_abc.secret", auth.ConfigDirEnv: t.TempDir()}
	var got server.Config
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(k string) string { return env[k] }}
	c := newServeCmd(deps, func(_ context.Context, cfg server.Config) error { got = cfg; return nil })
	c.SetArgs([]string{"--r2r-url", "https://r2r.example.com", "--read-only", "--project-dir", proj,
		"--log-file", logFile, "--log-level", "debug"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.R2RURL != "https://r2r.example.com" || !got.ReadOnly || got.WorkDir != proj ||
		got.LogFile != logFile || got.LogLevel != "debug" || auth.OriginOf(got.Credentials).Source != "env R2R_API_KEY" || got.Logger == nil {
		t.Errorf("config = %+v", got)
	}
	if fi, err := os.Stat(logFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file: %v %v", fi, err)
	}

	for _, bad := range [][]string{
		{"--log-level", "loud"},
		{"--project-dir", filepath.Join(proj, "missing")},
		{"extra-arg"},
	} {
		c := newServeCmd(deps, func(context.Context, server.Config) error { return errors.New("must not run") })
		c.SetArgs(bad)
		c.SetOut(&bytes.Buffer{})
		c.SetErr(&bytes.Buffer{})
		if err := c.Execute(); err == nil || err.Error() == "must not run" {
			t.Errorf("serve %v: err = %v, want a configuration error", bad, err)
		}
	}
}

// TestServeStdoutIsProtocolOnly runs serve in-process with R2R unreachable: it answers
// initialize and tools/list (no network I/O at startup), and nothing but JSON-RPC reaches
// stdout, not even for a junk line (logs go to stderr).
func TestServeStdoutIsProtocolOnly(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`not json`,
	}, "\n") + "\n"
	var out, errOut bytes.Buffer
	env := map[string]string{"R2R_API_URL": "http://127.0.0.1:1", "R2R_API_KEY": "key_abc.secret", auth.ConfigDirEnv: t.TempDir()}
	deps := Deps{IO: IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut},
		Build: BuildInfo{Version: "1.0.0"}, Getenv: func(k string) string { return env[k] }}
	root := NewRootCmd(deps)
	root.SetArgs([]string{"serve", "--project-dir", t.TempDir()})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("serve: %v\n%s", err, errOut.String())
	}
	ids := map[float64]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line %q is not JSON-RPC", sc.Text())
		}
		if id, ok := m["id"].(float64); ok {
			ids[id] = true
		}
	}
	if !ids[1] || !ids[2] {
		t.Errorf("responses for ids %v; want 1 and 2\nstdout:\n%s", ids, out.String())
	}
	if !strings.Contains(errOut.String(), "r2r-mcp serving on stdio") {
		t.Errorf("stderr lacks the startup log:\n%s", errOut.String())
	}
}

// TestServeResilienceFlags: every knob is a flag with an environment twin; flag > env >
// default; 0 switches a feature off; an invalid value is a startup error that names the
// flag or variable.
func TestServeResilienceFlags(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(server.Config) bool
		wantErr string
	}{
		{name: "defaults", check: func(c server.Config) bool {
			return c.Options.Cache.MaxBytes == 16<<20 && c.Options.Cache.TTLSearch == 300*time.Second && c.Options.Cache.TTLRAG == 120*time.Second &&
				c.Options.Cache.TTLList == 60*time.Second && c.Options.Retry.MaxRetries == 3 && c.Options.Retry.InitialInterval == 200*time.Millisecond &&
				c.Options.Breaker.Failures == 5 && c.Options.Breaker.Cooldown == time.Minute && c.Options.Breaker.HalfOpenSuccesses == 2 &&
				c.Options.Tools.RateLimit == 10 && c.Options.Tools.RateBurst == 20 && c.Options.Tools.RAGRateLimit == 2 && c.Options.Tools.RAGRateBurst == 5 &&
				c.Options.Tools.SearchTimeout == 20*time.Second && c.Options.Tools.RAGTimeout == 45*time.Second && c.Options.Tools.CallTimeout == 15*time.Second &&
				len(c.AllowDirs) == 0
		}},
		{name: "flags", args: []string{"--cache-size", "1.5GiB", "--cache-ttl-search", "10s", "--cache-ttl-rag", "5s",
			"--cache-ttl-list", "1s", "--retry-max", "5", "--retry-wait", "50ms", "--breaker-failures", "3",
			"--breaker-cooldown", "500ms", "--breaker-successes", "1", "--rate-limit", "0.5", "--rate-burst", "2",
			"--rag-rate-limit", "1", "--rag-rate-burst", "3", "--timeout-search", "2s", "--timeout-rag", "30s", "--timeout", "5s",
			"--allow-dir", dirA, "--allow-dir", dirB},
			check: func(c server.Config) bool {
				return c.Options.Cache.MaxBytes == 3<<29 && c.Options.Cache.TTLSearch == 10*time.Second && c.Options.Cache.TTLRAG == 5*time.Second &&
					c.Options.Cache.TTLList == time.Second && c.Options.Retry.MaxRetries == 5 && c.Options.Retry.InitialInterval == 50*time.Millisecond &&
					c.Options.Breaker.Failures == 3 && c.Options.Breaker.Cooldown == 500*time.Millisecond && c.Options.Breaker.HalfOpenSuccesses == 1 &&
					c.Options.Tools.RateLimit == 0.5 && c.Options.Tools.RateBurst == 2 && c.Options.Tools.RAGRateLimit == 1 && c.Options.Tools.RAGRateBurst == 3 &&
					c.Options.Tools.SearchTimeout == 2*time.Second && c.Options.Tools.RAGTimeout == 30*time.Second && c.Options.Tools.CallTimeout == 5*time.Second &&
					strings.Join(c.AllowDirs, ",") == dirA+","+dirB
			}},
		{name: "environment", env: map[string]string{"R2R_MCP_CACHE_SIZE": "512KiB", "R2R_MCP_RETRY_MAX": "1",
			"R2R_MCP_BREAKER_COOLDOWN": "2s", "R2R_MCP_RATE_LIMIT": "4", "R2R_MCP_TIMEOUT_SEARCH": "3s",
			"R2R_MCP_ALLOW_DIRS": dirA + string(filepath.ListSeparator) + dirB},
			check: func(c server.Config) bool {
				return c.Options.Cache.MaxBytes == 512<<10 && c.Options.Retry.MaxRetries == 1 && c.Options.Breaker.Cooldown == 2*time.Second && c.Options.Tools.RateLimit == 4 &&
					c.Options.Tools.SearchTimeout == 3*time.Second && len(c.AllowDirs) == 2
			}},
		{name: "flag beats environment", args: []string{"--retry-max", "2", "--allow-dir", dirA},
			env: map[string]string{"R2R_MCP_RETRY_MAX": "7", "R2R_MCP_ALLOW_DIRS": dirB},
			check: func(c server.Config) bool {
				return c.Options.Retry.MaxRetries == 2 && len(c.AllowDirs) == 1 && c.AllowDirs[0] == dirA
			}},
		{name: "zero switches off", args: []string{"--cache-size", "0", "--cache-ttl-rag", "0", "--retry-max", "0", "--rate-limit", "0"},
			env: map[string]string{"R2R_MCP_RAG_RATE_LIMIT": "0"},
			check: func(c server.Config) bool {
				return c.Options.Cache.MaxBytes == 0 && c.Options.Cache.TTLRAG == 0 && c.Options.Retry.MaxRetries == 0 && c.Options.Tools.RateLimit == 0 && c.Options.Tools.RAGRateLimit == 0 &&
					c.Options.Cache.TTLSearch == 300*time.Second
			}},
		{name: "bad size flag", args: []string{"--cache-size", "lots"}, wantErr: "--cache-size"},
		{name: "bad size env", env: map[string]string{"R2R_MCP_CACHE_SIZE": "-5MiB"}, wantErr: "R2R_MCP_CACHE_SIZE"},
		{name: "timeout over 50 s", args: []string{"--timeout-rag", "2m"}, wantErr: "--timeout-rag"},
		{name: "timeout env not a duration", env: map[string]string{"R2R_MCP_TIMEOUT": "soon"}, wantErr: "R2R_MCP_TIMEOUT"},
		{name: "zero failures", args: []string{"--breaker-failures", "0"}, wantErr: "--breaker-failures"},
		{name: "negative rate", env: map[string]string{"R2R_MCP_RATE_LIMIT": "-1"}, wantErr: "R2R_MCP_RATE_LIMIT"},
		{name: "burst not a number", args: []string{"--rag-rate-burst", "many"}, wantErr: "--rag-rate-burst"},
		{name: "missing allow dir", args: []string{"--allow-dir", filepath.Join(dirA, "nope")}, wantErr: "--allow-dir"},
		{name: "missing allow dir from env", env: map[string]string{"R2R_MCP_ALLOW_DIRS": filepath.Join(dirA, "nope")}, wantErr: "R2R_MCP_ALLOW_DIRS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{auth.ConfigDirEnv: t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			var got server.Config
			ran := false
			deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
				Getenv: func(k string) string { return env[k] }}
			c := newServeCmd(deps, func(_ context.Context, cfg server.Config) error { got, ran = cfg, true; return nil })
			c.SetArgs(append([]string{"--project-dir", t.TempDir()}, tt.args...))
			c.SetOut(&bytes.Buffer{})
			c.SetErr(&bytes.Buffer{})
			err := c.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ran {
					t.Fatalf("err = %v (ran %v), want an error naming %s", err, ran, tt.wantErr)
				}
				if strings.Contains(err.Error(), "strconv") || strings.Contains(err.Error(), "parsing \"") {
					t.Fatalf("err = %v: the parser's internals leak into the message", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(got) {
				t.Fatalf("config = %+v", got)
			}
		})
	}
}

// TestServeHelpListsEveryKnob: --help shows each knob with its environment twin and,
// when it has one, its default (a switch is off unless given).
func TestServeHelpListsEveryKnob(t *testing.T) {
	c := newServeCmd(Deps{}, nil)
	usage := c.Flags().FlagUsages()
	opts := server.DefaultOptions()
	for _, k := range opts.Knobs() {
		line := ""
		for l := range strings.SplitSeq(usage, "\n") {
			if strings.Contains(l, "--"+k.Name+" ") {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, "(env "+k.Env+")") || (k.Value().String() != "" && k.Value().Type() != "bool" && !strings.Contains(line, "(default ")) {
			t.Errorf("--%s: help line %q lacks the env twin or the default", k.Name, line)
		}
	}
	if !strings.Contains(usage, "--allow-dir") || !strings.Contains(usage, "R2R_MCP_ALLOW_DIRS") {
		t.Error("--allow-dir is not documented")
	}
}

// TestServeStatusReadsTheKeyring: serve resolves a stored credential lazily (nothing is
// read before initialize), and r2r_status reads it before reporting, so it names the
// keyring and the collection lookup that needs the credential works; a keyring that does
// not answer is reported as a warning.
func TestServeStatusReadsTheKeyring(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	key, _ := newAPIKey(t, srv)
	stored := &serveKeyring{m: map[string]string{}}
	if err := (&auth.KeyringStore{Keyring: stored}).Save(context.Background(), srv.URL, auth.Secret{Kind: auth.KindAPIKey, Secret: key}); err != nil {
		t.Fatal(err)
	}
	hung := testKeyring{hang: make(chan struct{})}
	t.Cleanup(func() { close(hung.hang) })
	tests := []struct {
		name       string
		kr         auth.Keyring
		wantSource string
		wantLoaded bool
		warning    string // substring of config.auth_warning
		projectErr string // substring of project.error; "" = the collection was looked up
	}{
		{name: "key in the keyring", kr: stored, wantSource: auth.SourceKeyring, wantLoaded: true},
		{name: "keyring does not answer", kr: hung, wantSource: auth.SourceKeyringPending,
			warning:    "could not read the stored credential: system keyring read failed: system keyring did not answer in time",
			projectErr: "the stored credential could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := Deps{Build: BuildInfo{Version: "9.9.9"}, Getenv: func(string) string { return "" }}
			opts := &serveOptions{R2RURL: srv.URL, ProjectDir: gitProjectDir(t, "delta"), Options: server.DefaultOptions(),
				Env: authEnv{ConfigDir: t.TempDir(), Keyring: tt.kr, KeyringTimeout: 100 * time.Millisecond}}
			cfg, err := serveConfig(context.Background(), deps, opts, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			lc, ok := cfg.Credentials.(*auth.LazyCredentials)
			if !ok || lc.Loaded() || lc.Origin().Source != auth.SourceKeyringPending {
				t.Fatalf("credentials %v; want a lazy credential not read yet", cfg.Credentials)
			}
			st := serveStatusCall(t, cfg, func() {
				if lc.Loaded() {
					t.Error("the keyring was read before the first tool call")
				}
			})
			project, _ := st["project"].(map[string]any)
			config, _ := st["config"].(map[string]any)
			warning, _ := config["auth_warning"].(string)
			if st["auth_source"] != tt.wantSource || (tt.warning == "") != (warning == "") || !strings.Contains(warning, tt.warning) {
				t.Errorf("r2r_status: auth_source %v, auth_warning %q; want %q, %q", st["auth_source"], warning, tt.wantSource, tt.warning)
			}
			projectErr, _ := project["error"].(string)
			if project["collection_name"] != "claude-code-delta" || (tt.projectErr == "") != (projectErr == "") || !strings.Contains(projectErr, tt.projectErr) {
				t.Errorf("project %v; want error %q", project, tt.projectErr)
			}
			if lc.Loaded() != tt.wantLoaded || string(lc.Origin().Source) != tt.wantSource {
				t.Errorf("after r2r_status: loaded %v, source %q", lc.Loaded(), lc.Origin().Source)
			}
		})
	}
}

// serveStatusCall runs the server of cfg over pipes, initializes it, runs afterInit, calls
// r2r_status and returns its structured content.
func serveStatusCall(t *testing.T, cfg server.Config, afterInit func()) map[string]any {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg, inR, outW); outW.Close() }()
	defer func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	response := func(id float64) map[string]any {
		t.Helper()
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("stdout line %q: %v", sc.Text(), err)
			}
			if m["id"] == id {
				return m
			}
		}
		t.Fatalf("no response %v: %v", id, sc.Err())
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	response(1)
	afterInit()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_status","arguments":{}}}`)
	res, _ := response(2)["result"].(map[string]any)
	st, ok := res["structuredContent"].(map[string]any)
	if !ok {
		t.Fatalf("r2r_status gave no structured content: %v", res)
	}
	return st
}

// TestServeOnlyTree: the tree Execute builds for "r2r-mcp serve …" (root and serve alone)
// answers serve's help and argument errors exactly as the full tree does.
func TestServeOnlyTree(t *testing.T) {
	tests := [][]string{
		{"serve", "--help"},
		{"serve", "-h"},
		{"serve", "--no-such-flag"},
		{"serve", "extra"},
		{"serve", "--cache-size", "lots"},
		{"serve", "--read-only=maybe"},
	}
	run := func(serveOnly bool, args []string) string {
		var out, errOut bytes.Buffer
		root := newRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}, serveOnly)
		root.SetArgs(args)
		err := root.Execute()
		return fmt.Sprintf("stdout:\n%s\nstderr:\n%s\nerror: %v", out.String(), errOut.String(), err)
	}
	for _, args := range tests {
		full, only := run(false, args), run(true, args)
		if full != only {
			t.Errorf("%q: the serve-only tree answers\n%s\nthe full tree\n%s", args, only, full)
		}
		if !strings.Contains(full, "Usage:") && strings.HasSuffix(full, "error: <nil>") {
			t.Errorf("%q: neither help nor an error: %s", args, full)
		}
	}
}

// An R2R_API_KEY that cannot be sent (a second line pasted with it) does not stop serve:
// it answers initialize, and each tool call with the cause and the fix, never the key.
func TestServeAnswersWithAnUnsendableAPIKey(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	env := map[string]string{"R2R_API_URL": srv.URL, "R2R_API_KEY": "key_abc.secretone\nkey_def.secrettwo", auth.ConfigDirEnv: t.TempDir()}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut bytes.Buffer
	deps := Deps{IO: IOStreams{In: inR, Out: outW, ErrOut: &errOut}, Build: BuildInfo{Version: "1.0.0"}, Getenv: func(k string) string { return env[k] }}
	root := NewRootCmd(deps)
	root.SetArgs([]string{"serve", "--project-dir", t.TempDir()})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(context.Background()); _ = outW.Close() }()
	go func() {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`,
		} {
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				return
			}
		}
	}()
	answers := map[float64]map[string]any{}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for len(answers) < 2 && sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if id, ok := m["id"].(float64); ok {
			answers[id] = m
		}
	}
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, errOut.String())
	}
	if answers[1]["result"] == nil {
		t.Fatalf("initialize not answered: %v\n%s", answers[1], errOut.String())
	}
	res, _ := answers[2]["result"].(map[string]any)
	text := fmt.Sprint(res["content"])
	if res["isError"] != true || !strings.Contains(text, "R2R_API_KEY contains a line break") ||
		!strings.Contains(text, "Fix R2R_API_KEY where it is set") || strings.Contains(text, "secret") || strings.Contains(errOut.String(), "secret") {
		t.Fatalf("tools/call: %v", answers[2])
	}
}
