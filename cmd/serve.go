package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
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

	// Options are the tunable settings; each is a flag with an environment twin
	// (serveKnobs) bound straight onto its field.
	server.Options

	// Env is where credentials are looked up; tests replace the keyring and config dir.
	Env authEnv

	allowDirsFrom string // "--allow-dir" or "R2R_MCP_ALLOW_DIRS", for errors
}

// Limits of the knobs. Every tool must answer within 50 s (clients give up around 60 s).
const (
	maxToolTimeout = 50 * time.Second
	maxRetries     = 10
	maxRetryWait   = 10 * time.Second
)

// serveKnob is a serve flag with an environment twin: the flag wins over the environment,
// which wins over the default. The value validates itself, so a bad flag and a bad
// environment value fail the same way, naming where the value came from.
type serveKnob struct {
	flag, env, usage string
	value            pflag.Value
}

// serveKnobs binds the resilience and cache flags to opts, with their defaults.
func serveKnobs(opts *serveOptions) []serveKnob {
	opts.Options = server.DefaultOptions()
	day := 24 * time.Hour
	return []serveKnob{
		{"cache-size", "R2R_MCP_CACHE_SIZE", "memory for cached results, e.g. 64MiB, 512KiB, 1GB; 0 disables the cache", &bytesValue{&opts.CacheSize}},
		{"cache-ttl-search", "R2R_MCP_CACHE_TTL_SEARCH", "how long search results stay cached; 0 = not cached", &durationValue{&opts.CacheTTLSearch, 0, day}},
		{"cache-ttl-rag", "R2R_MCP_CACHE_TTL_RAG", "how long RAG answers stay cached; 0 = not cached", &durationValue{&opts.CacheTTLRAG, 0, day}},
		{"cache-ttl-list", "R2R_MCP_CACHE_TTL_LIST", "how long document and collection listings and documents stay cached; 0 = not cached", &durationValue{&opts.CacheTTLList, 0, day}},
		{"retry-max", "R2R_MCP_RETRY_MAX", "retries of a read (search, RAG, GET) after a network error, 429, 502, 503 or 504; writes are never retried; 0 = none", &intValue{&opts.RetryMax, 0, maxRetries}},
		{"retry-wait", "R2R_MCP_RETRY_WAIT", "first wait before a retry, doubling with jitter", &durationValue{&opts.RetryWait, time.Millisecond, maxRetryWait}},
		{"breaker-failures", "R2R_MCP_BREAKER_FAILURES", "failed R2R calls in a row (after their retries) that open the circuit breaker", &intValue{&opts.BreakerFailures, 1, 1000}},
		{"breaker-cooldown", "R2R_MCP_BREAKER_COOLDOWN", "how long an open breaker fails calls fast before probing R2R again", &durationValue{&opts.BreakerCooldown, time.Millisecond, day}},
		{"breaker-successes", "R2R_MCP_BREAKER_SUCCESSES", "successful probes that close the breaker again", &intValue{&opts.BreakerSuccesses, 1, 100}},
		{"rate-limit", "R2R_MCP_RATE_LIMIT", "calls per second allowed per tool (token bucket); 0 = no limit", &floatValue{&opts.RateLimit, 0, 10000}},
		{"rate-burst", "R2R_MCP_RATE_BURST", "calls per tool allowed at once above --rate-limit", &intValue{&opts.RateBurst, 1, 100000}},
		{"rag-rate-limit", "R2R_MCP_RAG_RATE_LIMIT", "calls per second allowed for r2r_rag_query; 0 = no limit", &floatValue{&opts.RAGRateLimit, 0, 10000}},
		{"rag-rate-burst", "R2R_MCP_RAG_RATE_BURST", "r2r_rag_query calls allowed at once above --rag-rate-limit", &intValue{&opts.RAGRateBurst, 1, 100000}},
		{"timeout-search", "R2R_MCP_TIMEOUT_SEARCH", "deadline of r2r_search (at most 50s)", &durationValue{&opts.TimeoutSearch, time.Millisecond, maxToolTimeout}},
		{"timeout-rag", "R2R_MCP_TIMEOUT_RAG", "deadline of r2r_rag_query (at most 50s)", &durationValue{&opts.TimeoutRAG, time.Millisecond, maxToolTimeout}},
		{"timeout", "R2R_MCP_TIMEOUT", "deadline of every other tool (at most 50s; r2r_ingest_document with run_async=false has 45s)", &durationValue{&opts.Timeout, time.Millisecond, maxToolTimeout}},
		{"max-inflight", "R2R_MCP_MAX_INFLIGHT", "tool calls and resource reads served at once; one more is answered \"busy, retry in 1 s\" at once", &intValue{&opts.MaxInflight, 1, 10000}},
		{"max-request-bytes", "R2R_MCP_MAX_REQUEST_BYTES", "largest JSON-RPC message read from the client, e.g. 4MiB; a larger one gets an error and is skipped", &boundedBytes{bytesValue{&opts.MaxRequestBytes}, 64 << 10, 1 << 30}},
	}
}

// applyEnv sets every knob whose flag was not given from its environment variable.
func applyEnv(fs *pflag.FlagSet, knobs []serveKnob, getenv func(string) string) error {
	for _, k := range knobs {
		if fs.Changed(k.flag) {
			continue
		}
		if v := strings.TrimSpace(getenv(k.env)); v != "" {
			if err := k.value.Set(v); err != nil {
				return fmt.Errorf("invalid %s=%q (the environment twin of --%s): %v", k.env, v, k.flag, err)
			}
		}
	}
	return nil
}

// bytesValue is a byte size with units (64MiB, 512KB, 1.5GiB, 1024).
// boundedBytes is a size in [lo, hi].
type boundedBytes struct {
	bytesValue
	lo, hi int64
}

func (v *boundedBytes) Set(s string) error {
	old := *v.p
	if err := v.bytesValue.Set(s); err != nil {
		return err
	}
	if n := *v.p; n < v.lo || n > v.hi {
		*v.p = old
		return fmt.Errorf("want a size from %s to %s", server.FormatBytes(v.lo), server.FormatBytes(v.hi))
	}
	return nil
}

type bytesValue struct{ p *int64 }

func (v *bytesValue) String() string {
	if v.p == nil {
		return ""
	}
	return server.FormatBytes(*v.p)
}
func (v *bytesValue) Type() string { return "bytes" }
func (v *bytesValue) Set(s string) error {
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return errors.New("want a size such as 64MiB, 512KB or 0")
	}
	if n > math.MaxInt64 {
		return fmt.Errorf("%s is too large", s)
	}
	*v.p = int64(n)
	return nil
}

// durationValue is a duration in [lo, hi]; "0" is accepted when lo is 0.
type durationValue struct {
	p      *time.Duration
	lo, hi time.Duration
}

func (v *durationValue) String() string {
	if v.p == nil {
		return ""
	}
	return v.p.String()
}
func (v *durationValue) Type() string { return "duration" }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		if s == "0" {
			d, err = 0, nil
		} else {
			return fmt.Errorf("want a duration such as 1.5s, 300ms or 2m (%v)", err)
		}
	}
	if d < v.lo || d > v.hi {
		return fmt.Errorf("must be between %s and %s", v.lo, v.hi)
	}
	*v.p = d
	return nil
}

// intValue is an integer in [lo, hi].
type intValue struct {
	p      *int
	lo, hi int
}

func (v *intValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.Itoa(*v.p)
}
func (v *intValue) Type() string { return "int" }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	if n < v.lo || n > v.hi {
		return fmt.Errorf("must be between %d and %d", v.lo, v.hi)
	}
	*v.p = n
	return nil
}

// floatValue is a number in [lo, hi].
type floatValue struct {
	p      *float64
	lo, hi float64
}

func (v *floatValue) String() string {
	if v.p == nil {
		return ""
	}
	return strconv.FormatFloat(*v.p, 'f', -1, 64)
}
func (v *floatValue) Type() string { return "float" }
func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return fmt.Errorf("want a number")
	}
	if f < v.lo || f > v.hi {
		return fmt.Errorf("must be between %s and %s", strconv.FormatFloat(v.lo, 'f', -1, 64), strconv.FormatFloat(v.hi, 'f', -1, 64))
	}
	*v.p = f
	return nil
}

// newServeCmd builds "serve". runF, when set, receives the resolved configuration instead
// of running the server (tests).
func newServeCmd(deps Deps, runF func(context.Context, server.Config) error) *cobra.Command {
	opts := &serveOptions{allowDirsFrom: "--allow-dir"}
	knobs := serveKnobs(opts)
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
		f.Var(k.value, k.flag, k.usage+" (env "+k.env+")")
	}
	addHTTPFlags(f, &opts.HTTP)
	return c
}

// runServe applies the environment twins of the flags not given, opens the log, resolves
// the configuration and serves (or hands the configuration to runF, in tests).
func runServe(cmd *cobra.Command, deps Deps, opts *serveOptions, knobs []serveKnob, runF func(context.Context, server.Config) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	getenv := deps.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if err := applyEnv(cmd.Flags(), knobs, getenv); err != nil {
		return err
	}
	httpEnv(cmd.Flags(), &opts.HTTP, getenv)
	if err := checkHTTP(&opts.HTTP, cmd.Flags(), opts.ReadOnly); err != nil {
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
	startCredentialRead(ctx, cfg.Credentials)
	out := deps.IO.Out
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		// The protocol owns the real stdout. Anything else that writes to os.Stdout from
		// here on (a stray print in a dependency) lands on stderr instead of corrupting
		// the JSON-RPC stream.
		os.Stdout = os.Stderr
	}
	return server.Run(ctx, cfg, deps.IO.In, out)
}

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
	// The keyring is read on the first tool call (or by startCredentialRead), not here:
	// a locked or slow keyring must not hold up initialize.
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
		AuthSource:  res.Source,
		AuthWarning: res.Warning,
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

		Options: opts.Options,
	}, nil
}

// startCredentialRead reads a stored credential in the background while the server
// starts, so that a keyring's unlock prompt shows up while the user watches the client
// start, and the first tool call finds the credential ready instead of spending its wait
// (auth.Options.KeyringTimeout) on the read. It never delays initialize: the server does
// not wait for it, and a failed read is logged and tried again on the next use.
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
