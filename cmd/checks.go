package cmd

// What status and doctor both find out: the configuration serve would use, then live
// answers from R2R (health, the account, the project's collection, looked up read only).
// Each check returns what it found; the commands word it for their own reports.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// ClaudeProjectDirEnv is set by Claude Code, for the servers it starts, to the project the
// user opened.
const ClaudeProjectDirEnv = "CLAUDE_PROJECT_DIR"

// projectDir is the directory the project is inferred from when the client offers no MCP
// roots: $CLAUDE_PROJECT_DIR when it names a directory, else flag (--project-dir) when
// given, else the working directory; absolute. source names where it came from.
func projectDir(getenv func(string) string, flag string) (dir, source string, err error) {
	if env := getenv(ClaudeProjectDirEnv); env != "" {
		if fi, err := os.Stat(env); err == nil && fi.IsDir() {
			if abs, err := filepath.Abs(env); err == nil {
				env = abs
			}
			return env, "env " + ClaudeProjectDirEnv, nil
		}
	}
	dir, source = flag, "--project-dir"
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", "", fmt.Errorf("find the working directory: %w (pass --project-dir)", err)
		}
		dir, source = wd, "the working directory"
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("--project-dir %s is not a directory", dir)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir, source, nil
}

// authOptions are the auth.Options of every command that resolves the configuration as
// serve does. urlFlagName names the URL flag in sources and errors (auth.DefaultURLFlagName);
// logger nil = discard.
func authOptions(deps Deps, env authEnv, configDir, urlFlag, urlFlagName string, logger *slog.Logger) auth.Options {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return auth.Options{
		URLFlag:        urlFlag,
		URLFlagName:    urlFlagName,
		Getenv:         deps.Getenv,
		Keyring:        env.Keyring,
		KeyringTimeout: env.KeyringTimeout,
		ConfigDir:      configDir,
		HTTPClient:     env.HTTPClient,
		UserAgent:      "r2r-mcp/" + deps.Build.Version,
		Logger:         logger,
	}
}

// resolveR2R resolves the R2R URL and credential (--url) as serve does, reading the
// keyring at once, and returns a client that uses them.
func resolveR2R(ctx context.Context, deps Deps, env authEnv, configDir, urlFlag string) (auth.Resolved, *r2r.Client, error) {
	res, err := auth.Resolve(ctx, authOptions(deps, env, configDir, urlFlag, auth.DefaultURLFlagName, nil))
	if err != nil {
		return auth.Resolved{}, nil, err
	}
	client, err := r2r.New(r2r.Options{BaseURL: res.URL, Credentials: res.Credentials,
		HTTPClient: env.HTTPClient, UserAgent: "r2r-mcp/" + deps.Build.Version})
	if err != nil {
		return auth.Resolved{}, nil, err
	}
	return res, client, nil
}

// maskedKey shows an API key credential as "key_ab…" without keeping the key around.
func maskedKey(ctx context.Context, c r2r.Credentials) string {
	h := http.Header{}
	if c == nil || c.Apply(ctx, h) != nil {
		return ""
	}
	return auth.ShortKey(h.Get("X-API-Key"))
}

// credentialText names a credential for people without revealing it ("API key key_ab…
// for a@example.com", "refresh token for …", "password for …"); "" when there is none.
// key is the masked key (maskedKey) or "".
func credentialText(kind, key, email string) string {
	who := ""
	if email != "" {
		who = " for " + email
	}
	switch kind {
	case auth.KindAPIKey:
		if key != "" {
			return "API key " + key + who
		}
		return "API key" + who
	case auth.KindRefreshToken:
		return "refresh token" + who
	case auth.KindPassword:
		return "password" + who
	}
	return ""
}

// collectionLabel is how a project's collection is named in reports: its name, else its id.
func collectionLabel(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

// healthCheck is the answer to GET /v3/health.
type healthCheck struct {
	Err     error
	Latency time.Duration
	// Status is the HTTP status R2R answered an error with; 0 when it did not answer (or
	// Err is nil).
	Status int
	// Cause is the transport failure when R2R did not answer.
	Cause error
}

// Answered reports whether R2R answered at all (healthy or not).
func (h healthCheck) Answered() bool { return h.Err == nil || h.Status != 0 }

// checkHealth sends GET /v3/health within timeout.
func checkHealth(ctx context.Context, c *r2r.Client, timeout time.Duration) healthCheck {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := c.Health(hctx)
	h := healthCheck{Err: err, Latency: time.Since(start)}
	if re, ok := errors.AsType[*r2r.Error](err); ok {
		h.Status, h.Cause = re.StatusCode, re.Err
	}
	if h.Status == 0 && h.Cause == nil {
		h.Cause = err
	}
	return h
}

// userVerdict is what GET /v3/users/me said about the credential.
type userVerdict int

const (
	userAccepted    userVerdict = iota
	userNeedsLogin              // R2R requires a credential and there is none
	userRejected                // R2R turned the credential down (401; a login with an unknown email)
	userForbidden               // 403: the account exists but may not act (inactive, unverified)
	userUnreachable             // R2R did not answer, also while logging in or refreshing
	userFailed                  // anything else
)

// userCheck is the answer to GET /v3/users/me.
type userCheck struct {
	User    *r2r.User // when accepted
	Verdict userVerdict
	Err     error
	// Message is R2R's answer for reports: "401 Incorrect email or password", prefixed by
	// the operation ("login: …") when the credential could not be applied; else Err's text.
	Message string
	// Status is R2R's HTTP status behind the verdict (the login's or refresh's when the
	// credential could not be applied); 0 when R2R did not answer or nothing was sent.
	Status int
	// Credential is true when the call was never sent because the credential could not be
	// applied: a password login or token refresh failed (the verdict is R2R's answer to that).
	Credential bool
	// UnknownAccount is true when R2R knows no account with the credential's email (a
	// password login answered 404).
	UnknownAccount bool
}

// checkUser sends GET /v3/users/me within timeout. source is where the credential came
// from (auth.SourceNone = there is none).
func checkUser(ctx context.Context, c *r2r.Client, timeout time.Duration, source string) userCheck {
	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u, err := c.Me(uctx)
	if err == nil {
		return userCheck{User: u, Verdict: userAccepted}
	}
	uc := userCheck{Err: err, Verdict: userFailed, Message: err.Error()}
	// A failed login or refresh comes back as an *r2r.Error that matches only
	// r2r.ErrCredentials; what R2R said to the login is inside its CredentialError.
	var cause error = err
	if ce, ok := errors.AsType[*r2r.CredentialError](err); ok {
		uc.Credential, cause = true, ce
	}
	re, _ := errors.AsType[*r2r.Error](cause)
	if re != nil {
		uc.Status, uc.Message = re.StatusCode, re.Error()
		if re.StatusCode != 0 {
			uc.Message = strings.TrimSpace(fmt.Sprintf("%d %s", re.StatusCode, re.Message))
			if uc.Credential {
				uc.Message = re.Op + ": " + uc.Message
			}
		}
	}
	switch {
	case errors.Is(cause, r2r.ErrUnauthorized) && source == auth.SourceNone:
		uc.Verdict = userNeedsLogin
	case errors.Is(cause, r2r.ErrUnauthorized):
		uc.Verdict = userRejected
	case errors.Is(cause, r2r.ErrForbidden):
		uc.Verdict = userForbidden
	case uc.Credential && errors.Is(cause, r2r.ErrNotFound):
		uc.Verdict, uc.UnknownAccount = userRejected, true
	case re != nil && re.StatusCode == 0:
		uc.Verdict = userUnreachable
	}
	return uc
}

// newProjectResolver resolves the project in dir without a disk cache: status and doctor
// look the collection up afresh and write nothing.
func newProjectResolver(dir string) *project.Resolver {
	return project.NewResolver(project.Options{WorkDir: dir, CacheFile: "-"})
}

// lookupCollection finds the project's collection within timeout, read only: a missing
// collection is reported (Exists() false), never created.
func lookupCollection(ctx context.Context, pr *project.Resolver, c *r2r.Client, timeout time.Duration) (*project.Collection, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return pr.Collection(cctx, c, false)
}
