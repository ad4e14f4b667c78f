package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// errInfo is toolerr.Of without the ok flag (zero toolerr.Info for a result without one).
func errInfo(res *mcp.CallToolResult) toolerr.Info {
	info, _ := toolerr.Of(res)
	return info
}

// withCreds sets the credentials of the env's R2R client.
func withCreds(c r2r.Credentials) envOption { return func(cfg *envConfig) { cfg.creds = c } }

// describedCreds are credentials that say where they came from, as auth's do
// (auth.Described); origin is asked at each use, as of a credential read lazily.
type describedCreds struct {
	r2r.Credentials
	origin func() auth.Origin
}

func (d describedCreds) Origin() auth.Origin { return d.origin() }

// from gives c the origin src with the warning w ("" = none); nil c is anonymous.
func from(c r2r.Credentials, src auth.Source, w string) describedCreds {
	if c == nil {
		c = r2r.Anonymous()
	}
	o := auth.Origin{Source: src}
	if w != "" {
		o.Warnings = []auth.Warning{{Text: w}}
	}
	return describedCreds{Credentials: c, origin: func() auth.Origin { return o }}
}

// TestUnauthorizedAdvice: the next step after a 401 depends on where the rejected
// credential came from; `r2r-mcp login` cannot replace an environment credential.
func TestUnauthorizedAdvice(t *testing.T) {
	tests := []struct {
		name    string
		creds   r2r.Credentials
		source  auth.Source
		warning string
		dynamic bool // known only after the first use, as a credential read lazily
		want    []string
		not     []string
	}{
		{name: "env api key", creds: r2r.APIKey("not-a-valid-key"), source: auth.SourceEnvAPIKey,
			want: []string{"R2R rejected the credential (from env R2R_API_KEY) (401)", "Fix R2R_API_KEY where it is set (for serve: in the MCP client's configuration)", "unset it and run `r2r-mcp login`"},
			not:  []string{"call again"}},
		{name: "env password", creds: r2r.APIKey("not-a-valid-key"), source: auth.SourceEnvPassword,
			want: []string{"(from env R2R_EMAIL/R2R_PASSWORD) (401)", "Fix R2R_EMAIL/R2R_PASSWORD where they are set"}},
		{name: "keyring", creds: r2r.APIKey("not-a-valid-key"), source: auth.SourceKeyring,
			want: []string{"rejected the credential (from keyring) (401)", "Run `r2r-mcp login`", "Then call again"},
			not:  []string{"R2R_API_KEY", "restart"}},
		{name: "file", creds: r2r.APIKey("not-a-valid-key"), source: "file /home/u/.config/r2r-mcp/credentials.json",
			want: []string{"(from file /home/u/.config/r2r-mcp/credentials.json) (401)", "Run `r2r-mcp login`"}},
		{name: "none", creds: nil, source: auth.SourceNone,
			want: []string{"R2R requires authentication (401)", "Run `r2r-mcp login` in a terminal", "Then call again"}},
		{name: "none, the credentials file unusable: the file's problem leads", creds: nil, source: auth.SourceNone,
			warning: "run `chmod 600 /c/credentials.json`: the credentials file has mode 0644, readable by other users, so r2r-mcp does not use it; " +
				"system keyring read failed: dial unix /run/user/1000/bus: connect: no such file or directory",
			want: []string{"R2R requires authentication (401), and r2r-mcp has no usable credential: run `chmod 600 /c/credentials.json`:",
				"no such file or directory. Fix that"},
			not: []string{"sciphi", "Credentials warning"}},
		{name: "keyring read lazily, with a warning", creds: r2r.APIKey("not-a-valid-key"), source: auth.SourceKeyring,
			warning: "system keyring did not answer in time", dynamic: true,
			want: []string{"(from keyring) (401)", "Credentials warning: system keyring did not answer in time."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			creds := from(tt.creds, tt.source, tt.warning)
			if tt.dynamic {
				used := false
				creds.Credentials = applied{creds.Credentials, &used}
				read := creds.origin
				creds.origin = func() auth.Origin {
					if !used {
						return auth.Origin{Source: auth.SourceKeyringPending}
					}
					return read()
				}
			}
			e := newEnv(t, withEmulator(r2rtest.Options{RequireAuth: true}), withCreds(creds))
			_, info := e.fail("r2r_list_collections", nil)
			t.Log(info.Message)
			if info.Code != toolerr.CodeAuth || info.Type != "authentication" || info.Status != http.StatusUnauthorized {
				t.Fatalf("%+v", info)
			}
			for _, w := range tt.want {
				if !strings.Contains(info.Message, w) {
					t.Errorf("message %q lacks %q", info.Message, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(info.Message, w) {
					t.Errorf("message %q contains %q", info.Message, w)
				}
			}
		})
	}
}

// applied records that its credential was applied.
type applied struct {
	r2r.Credentials
	used *bool
}

func (a applied) Apply(ctx context.Context, h http.Header) error {
	*a.used = true
	return a.Credentials.Apply(ctx, h)
}

// failingCredentials stand for credentials that cannot be applied without R2R's help,
// such as a keyring that does not answer.
type failingCredentials struct{ err error }

func (f failingCredentials) Apply(context.Context, http.Header) error { return f.err }
func (f failingCredentials) Identity() string                         { return "test:failing" }

// busyCredentials wait, as a stored session does while another process renews it, until
// the call's deadline, and then say so.
type busyCredentials struct{ lock string }

func (b busyCredentials) Apply(ctx context.Context, _ http.Header) error {
	start := time.Now()
	<-ctx.Done()
	return &auth.SessionBusyError{Path: b.lock, Waited: time.Since(start)}
}
func (busyCredentials) Identity() string { return "test:busy" }

// TestCredentialErrors: when the credentials cannot be applied (a login fails), nothing is
// sent, and the result is -32002 with the cause and source-specific advice, never the
// login's own status passed off as the tool's (a 404 "User not found" is not "document not
// found"). A login that fails because R2R is down is reported as R2R being down.
func TestCredentialErrors(t *testing.T) {
	t.Run("unknown account from the environment", func(t *testing.T) {
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		login, err := r2r.New(r2r.Options{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		creds := auth.NewPasswordSource(auth.TokenSourceOptions{Client: login, Origin: auth.Origin{Source: auth.SourceEnvPassword}},
			"nobody@example.com", "wrong-password")
		e := newEnv(t, withCreds(creds))
		_, info := e.fail("r2r_get_document", map[string]any{"document_id": "00000000-0000-4000-8000-000000000001"})
		t.Log(info.Message)
		if info.Code != toolerr.CodeAuth || info.Type != "authentication" || info.Retryable {
			t.Fatalf("%+v", info)
		}
		for _, w := range []string{"could not authenticate to R2R at " + e.r2r.URL, "Fix R2R_EMAIL/R2R_PASSWORD where they are set", "r2r-mcp doctor"} {
			if !strings.Contains(info.Message, w) {
				t.Errorf("message %q lacks %q", info.Message, w)
			}
		}
		if strings.Contains(info.Message, "was not found") || strings.Contains(info.Message, "wrong-password") {
			t.Errorf("message %q", info.Message)
		}
		if n := len(e.r2r.Counts()); n != 0 {
			t.Errorf("the call reached the tools' R2R: %v", e.r2r.Counts())
		}
	})

	t.Run("login while R2R fails", func(t *testing.T) {
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		srv.ForceStatus("POST /v3/users/login", http.StatusServiceUnavailable, 10)
		login, err := r2r.New(r2r.Options{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		creds := auth.NewPasswordSource(auth.TokenSourceOptions{Client: login, Origin: auth.Origin{Source: auth.SourceEnvPassword}},
			r2rtest.AdminEmail, r2rtest.AdminPassword)
		e := newEnv(t, withCreds(creds))
		_, info := e.fail("r2r_list_collections", nil)
		if info.Code != toolerr.CodeR2RAPI || info.Status != http.StatusServiceUnavailable || !info.Retryable {
			t.Fatalf("%+v", info)
		}
	})

	t.Run("stored session expired: log in again, said once", func(t *testing.T) {
		srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
		c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		pair, err := c.Login(context.Background(), r2rtest.AdminEmail, r2rtest.AdminPassword)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.RefreshToken(context.Background(), pair.RefreshToken.Token); err != nil { // rotated away
			t.Fatal(err)
		}
		sec := auth.Secret{Kind: auth.KindRefreshToken, Secret: pair.RefreshToken.Token, Email: r2rtest.AdminEmail}
		store := &auth.FileStore{Path: filepath.Join(t.TempDir(), "credentials.json")}
		if err := store.Save(context.Background(), srv.URL, sec); err != nil {
			t.Fatal(err)
		}
		creds := auth.NewStoredSource(auth.TokenSourceOptions{Client: c, Origin: auth.Origin{Source: auth.SourceKeyring}}, srv.URL, sec, store)
		e := newEnv(t, withCreds(creds))
		_, info := e.fail("r2r_list_collections", nil)
		t.Log(info.Message)
		if info.Code != toolerr.CodeAuth || info.Retryable || !strings.Contains(info.Message, auth.SessionExpiredText(srv.URL)) ||
			strings.Count(info.Message, "r2r-mcp login") != 1 {
			t.Fatalf("%+v", info)
		}
	})

	t.Run("another process renews the session past the call's deadline", func(t *testing.T) {
		lock := filepath.Join(t.TempDir(), auth.SessionLockName)
		e := newEnv(t, withCreds(from(busyCredentials{lock: lock}, auth.SourceKeyring, "")))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		res := e.callCtx(ctx, "r2r_list_collections", nil)
		info, ok := toolerr.Of(res)
		t.Log(info.Message)
		if !ok || !res.IsError || info.Code != toolerr.CodeRateLimited || !info.Retryable ||
			!strings.Contains(info.Message, "another process to finish renewing the R2R session (it holds the lock "+lock+")") ||
			!strings.Contains(info.Message, "nothing was sent to R2R") || strings.Contains(info.Message, "did not answer") {
			t.Fatalf("%+v", info)
		}
		if n := len(e.r2r.Counts()); n != 0 {
			t.Errorf("the call reached R2R: %v", e.r2r.Counts())
		}
	})

	t.Run("keyring does not answer", func(t *testing.T) {
		e := newEnv(t, withCreds(from(failingCredentials{err: fmt.Errorf("reading the stored credential: %w", auth.ErrKeyringTimeout)},
			auth.SourceKeyringPending, "")))
		_, info := e.fail("r2r_list_collections", nil)
		if info.Code != toolerr.CodeAuth || !info.Retryable || !strings.Contains(info.Message, "Unlock the system keyring") {
			t.Fatalf("%+v", info)
		}
	})
}

// TestErrorCodes: failures that are not R2R's do not claim -32001 "R2R API error".
func TestErrorCodes(t *testing.T) {
	ctx := withCall(context.Background(), callInfo{tool: "r2r_ingest_document", timeout: 45 * time.Second})
	const docID = "0c5d8a52-6f4e-5b1a-9f3e-2d7c1b0a9e88"
	tests := []struct {
		name      string
		res       *mcp.CallToolResult
		code      int
		typ       string
		retryable bool
		want      string
	}{
		{"cancelled", r2rErrorResult(ctx, context.Canceled, "http://r2r", errHints{}), toolerr.CodeInternal, "cancelled", false, "cancelled"},
		{"unexpected", r2rErrorResult(ctx, errors.New("boom"), "http://r2r", errHints{}), toolerr.CodeInternal, "internal", false, "Unexpected error: boom"},
		{"configuration", configError("Cannot read /p/.r2r-mcp.json: invalid JSON. Fix the file."), toolerr.CodeInternal, "configuration", false, ".r2r-mcp.json"},
		{"timeout", r2rErrorResult(ctx, context.DeadlineExceeded, "http://r2r", errHints{}), toolerr.CodeR2RAPI, "timeout", true, "within 45 s"},
		{"ingest timeout", r2rErrorResult(ctx, context.DeadlineExceeded, "http://r2r", stillIngesting(errHints{}, docID)),
			toolerr.CodeR2RAPI, "timeout", false, "R2R may still be ingesting the file: follow it with r2r_monitor_task document_id=" + docID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := toolerr.Of(tt.res)
			if !ok || tt.res.StructuredContent != nil || info.Code != tt.code || info.Type != tt.typ || info.Retryable != tt.retryable ||
				!strings.Contains(info.Message, tt.want) {
				t.Fatalf("%+v (want code %d type %s, text with %q)", info, tt.code, tt.typ, tt.want)
			}
		})
	}

	t.Run("panic", func(t *testing.T) {
		e := newEnv(t)
		h := e.deps.guard(&Tool{Def: mcp.Tool{Name: "r2r_search"}})(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			panic("handler bug")
		})
		res, err := h(context.Background(), mcp.CallToolRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if info := errInfo(res); info.Code != toolerr.CodeInternal || info.Type != "internal" || !strings.Contains(info.Message, "Please report it") {
			t.Fatalf("%+v", info)
		}
	})
}
