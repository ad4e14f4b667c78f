package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

type serveOptions struct {
	R2RURL     string
	ReadOnly   bool
	ProjectDir string
	LogFile    string
	LogLevel   string
	// AllowDirs are extra directories files may be ingested from (--allow-dir,
	// R2R_MCP_ALLOW_DIRS).
	AllowDirs []string

	// Options are the tunable settings; each knob is a flag with an environment twin
	// bound straight onto its field (server.Options.Knobs).
	server.Options

	// Env is where credentials are looked up; tests replace the keyring and config dir.
	Env authEnv

	allowDirsFrom string // "--allow-dir" or "R2R_MCP_ALLOW_DIRS", for errors
}

// newServeCmd builds "serve". runF, when set, receives the resolved configuration instead
// of running the server (tests).
func newServeCmd(deps Deps, runF func(context.Context, server.Config) error) *cobra.Command {
	opts := &serveOptions{allowDirsFrom: "--allow-dir", Options: server.DefaultOptions()}
	knobs := opts.Knobs()
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the MCP server over stdio (started by your MCP client)",
		Long: `Run r2r-mcp as a stdio MCP server. Your MCP client starts it; stdout carries only
JSON-RPC, logs go to stderr or --log-file.

The R2R URL comes from --url, then R2R_API_URL, then R2R_API_BASE, then the URL saved
by "r2r-mcp login", then http://localhost:7272. Credentials come from R2R_API_KEY (or
R2R_EMAIL and R2R_PASSWORD), then the OS keyring; without any, requests go unauthenticated
(fine for an R2R with authentication off). serve never prompts: when R2R is unreachable or
rejects the credentials, the tools say so and what to do.

Results of searches, RAG answers, listings and documents are cached in memory and
invalidated by every write through r2r-mcp. Reads of R2R are retried after network errors
and 429/502/503/504; after --breaker-failures failed calls in a row a circuit breaker fails
calls fast for --breaker-cooldown. Each tool has a rate limit and a deadline. Every such
flag has an environment twin (named in its help); the flag wins over the variable, the
variable over the default, and an invalid value stops serve with an error naming it.`,
		Example: `  claude mcp add r2r -- r2r-mcp serve
  r2r-mcp serve --read-only --log-file ~/.r2r-mcp.log --log-level debug
  r2r-mcp serve --cache-size 256MiB --timeout-rag 30s --allow-dir ~/notes
  r2r-mcp serve --http 127.0.0.1:8080 --allowed-hosts mcp.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, deps, opts, knobs, runF)
		},
	}
	f := c.Flags()
	addURLFlag(f, &opts.R2RURL)
	f.BoolVar(&opts.ReadOnly, "read-only", false, "offer only tools that do not change the knowledge base")
	f.StringVar(&opts.ProjectDir, "project-dir", "", "directory used to infer the project when the client gives no roots and CLAUDE_PROJECT_DIR is not set (default: the working directory)")
	f.StringVar(&opts.LogFile, "log-file", "", "append logs to this file (created with mode 0600) instead of stderr")
	f.StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringArrayVar(&opts.AllowDirs, "allow-dir", nil, "a further directory r2r_ingest_document may read files from; repeatable (env R2R_MCP_ALLOW_DIRS, "+
		"directories separated by "+string(filepath.ListSeparator)+")")
	for _, k := range knobs {
		f.Var(k.Value(), k.Name, k.Usage())
		if k.Value().Type() == "bool" {
			f.Lookup(k.Name).NoOptDefVal = "true" // --no-analytics alone turns it on
		}
	}
	return c
}

// runServe applies the environment twins of the flags not given, opens the log, resolves
// the configuration and serves (or hands the configuration to runF, in tests).
func runServe(cmd *cobra.Command, deps Deps, opts *serveOptions, knobs []knob.Row, runF func(context.Context, server.Config) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	getenv := deps.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if err := knob.ApplyEnv(knobs, cmd.Flags().Changed, getenv); err != nil {
		return err
	}
	if err := checkHTTP(&opts.HTTP, knobs, cmd.Flags(), opts.ReadOnly); err != nil {
		return err
	}
	if !cmd.Flags().Changed("allow-dir") {
		if v := getenv("R2R_MCP_ALLOW_DIRS"); v != "" {
			opts.AllowDirs = filepath.SplitList(v)
			opts.allowDirsFrom = "R2R_MCP_ALLOW_DIRS"
		}
	}
	logger, closeLog, err := server.OpenLogger(opts.LogFile, opts.LogLevel, deps.IO.ErrOut)
	if err != nil {
		return err
	}
	defer closeLog()
	cfg, err := serveConfig(ctx, deps, opts, logger)
	if err != nil {
		if opts.LogFile != "" { // stderr gets the error from Execute anyway
			logger.Error("cannot start", "error", err)
		}
		return err
	}
	if _, tty := terminalFd(deps.IO.In); tty && opts.HTTP.Addr == "" {
		fmt.Fprintln(deps.IO.ErrOut, serveTerminalHint)
	}
	if runF != nil {
		return runF(ctx, cfg)
	}
	stopTracing, err := startTracing(ctx, &cfg, getenv, logger)
	if err != nil {
		return err
	}
	defer stopTracing()
	if opts.HTTP.Addr != "" {
		return runHTTP(ctx, cfg, logger)
	}
	cfg.FirstAnswered = func() { startCredentialRead(ctx, cfg.Credentials) }
	out := deps.IO.Out
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		// The protocol owns the real stdout. Anything else that writes to os.Stdout from
		// here on (a stray print in a dependency) lands on stderr instead of corrupting
		// the JSON-RPC stream.
		os.Stdout = os.Stderr
	}
	return server.Run(ctx, cfg, deps.IO.In, out)
}

// serveTerminalHint is what serve says when a person starts it at a terminal: it serves
// anyway (a client may be attached to a terminal too), but a person expects a prompt.
const serveTerminalHint = "r2r-mcp serve speaks MCP on stdin/stdout and waits for an MCP client: add it to one with " +
	"`r2r-mcp install claude-code` (or claude-desktop, cursor, vscode); Ctrl-C stops it."

// serveConfig turns flags, environment and stored credentials into the server
// configuration. It never prompts, does no network I/O and does not touch the keyring: a
// stored credential is read, and a password or refresh-token credential logs in, on the
// first tool call.
func serveConfig(ctx context.Context, deps Deps, opts *serveOptions, logger *slog.Logger) (server.Config, error) {
	dir, _, err := projectDir(deps.Getenv, opts.ProjectDir)
	if err != nil {
		return server.Config{}, err
	}
	configDir, err := opts.Env.configDir(deps.Getenv)
	if err != nil {
		return server.Config{}, err
	}
	// The keyring is read once the client's first request is answered (startCredentialRead),
	// or by the first tool call, not here: a locked or slow keyring must not hold up
	// initialize.
	res, err := auth.ResolveLazy(ctx, authOptions(deps, opts.Env, configDir, opts.R2RURL, auth.DefaultURLFlagName, logger.With("component", "auth")))
	if err != nil {
		return server.Config{}, err
	}
	allow, err := allowDirs(opts.AllowDirs, opts.allowDirsFrom)
	if err != nil {
		return server.Config{}, err
	}
	settings := map[string]string{"config_dir": configDir}
	if res.Kind != "" {
		settings["credential_kind"] = res.Kind
	}
	if res.Email != "" {
		settings["account"] = res.Email
	}
	return server.Config{
		R2RURL:      res.URL,
		URLSource:   res.URLSource,
		Credentials: res.Credentials,
		ReadOnly:    opts.ReadOnly,
		Logger:      logger,
		LogFile:     opts.LogFile,
		LogLevel:    opts.LogLevel,
		Stderr:      deps.IO.ErrOut,
		WorkDir:     dir,
		ConfigDir:   configDir,
		Version:     deps.Build.Version,
		Commit:      deps.Build.Commit,
		Settings:    settings,
		HTTPClient:  opts.Env.HTTPClient,
		AllowDirs:   allow,
		// No cache directory: nothing kept, as with --no-analytics.
		AnalyticsDir: analyticsDir(),

		Options: opts.Options,
	}, nil
}

// startCredentialRead reads a stored credential in the background, so that a keyring's
// unlock prompt shows up while the user watches the client start, and the first tool call
// finds the credential ready instead of spending its wait (auth.Options.KeyringTimeout) on
// the read. serve starts it once the client's first request (initialize, or
// server/discover) is answered (server.Config.FirstAnswered): started any earlier, the
// read's goroutines, file and D-Bus look-ups and log lines shared the machine with that
// answer (spawn to initialize response 1.225x -> 1.182x the bare mcp-go floor, 300
// interleaved rounds). Nothing waits for it, and a failed read is logged and tried again on
// the next use.
func startCredentialRead(ctx context.Context, c r2r.Credentials) {
	if lc, ok := c.(*auth.LazyCredentials); ok {
		go func() { _ = lc.Load(ctx) }()
	}
}

// allowDirs checks the extra ingest roots: each must be an existing directory; they are
// returned as absolute paths. from names the flag or variable they came from.
func allowDirs(dirs []string, from string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", from, d, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s %s is not a directory", from, d)
		}
		out = append(out, abs)
	}
	return out, nil
}

// analyticsDir is where serve keeps the user's analytics; "" (none kept) without a user
// cache directory.
func analyticsDir() string {
	d, err := analytics.DefaultDir()
	if err != nil {
		return ""
	}
	return d
}
