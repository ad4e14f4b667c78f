package cmd

// What status and doctor both find out: the configuration serve would use, then live
// answers from R2R (health, the account, the project's collection, looked up read only).
// Each check returns what it found; the commands word it for their own reports.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
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
// for a@example.com", "R2R session for …", "password for …"); "" when there is none.
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
		return "R2R session" + who
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

// slowAPIKey is the time of one authenticated request above which an API key's cost is
// worth a warning: R2R 3.6.6 checks a key with bcrypt on every request (about 0.5 s), a
// session's token in milliseconds.
const slowAPIKey = 100 * time.Millisecond

// apiKeyCost is what status and doctor say about an API key credential whose check took
// took: its cost per request on this R2R and how to switch; "" when it is cheap here.
func apiKeyCost(kind string, took time.Duration) string {
	if kind != auth.KindAPIKey || took < slowAPIKey {
		return ""
	}
	return fmt.Sprintf("an authenticated request with the API key took %d ms on this R2R (R2R checks API keys with bcrypt on every "+
		"request, and serves nobody else meanwhile); a session costs it milliseconds: run r2r-mcp login (without --api-key-stdin; "+
		"unset R2R_API_KEY if it is set)", took.Milliseconds())
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
