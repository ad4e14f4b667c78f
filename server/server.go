// Package server builds r2r-mcp's MCP server from the tool registry and runs it over stdio.
//
// Nothing but JSON-RPC is written to the stdout writer Run receives; logs go to stderr or a
// log file. Run does no network I/O before it answers initialize: the R2R client connects on
// the first tool call, so the server starts even when R2R is down or the credentials are
// wrong, and the tools then say what is wrong and what to do.
//
// New wires the resilience of DESIGN §6: one circuit breaker for the R2R URL around
// retries of idempotent calls (r2r.Resilient), the byte-bounded result cache, per-tool rate
// limits and deadlines (in tools). A client's notifications/cancelled aborts the call's
// R2R request, and the cancelled call gets no response (cancel.go).
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// describedCredentials are credentials that say where they came from as far as known
// now (auth.LazyCredentials). Tool errors use it to advise on authentication failures.
type describedCredentials interface {
	r2r.Credentials
	Source() string
	Warning() string
}

// Name is the server name reported in the initialize result.
const Name = "r2r-mcp"

// Config is everything Run needs. cmd/serve.go builds it from flags, the environment and
// auth.ResolveLazy; tests build it directly.
type Config struct {
	// R2RURL is the R2R base URL; URLSource says where it came from ("flag --r2r-url",
	// "env R2R_API_URL", "default", ...).
	R2RURL    string
	URLSource string
	// Credentials authenticate R2R requests; nil = r2r.Anonymous(). A token source logs in
	// lazily, on the first request. AuthSource says where they came from ("keyring",
	// "env R2R_API_KEY", "none", ...; auth.SourceKeyringPending while a stored credential
	// is still to be read); AuthWarning is a resolution problem to surface in the log and in
	// r2r_status ("" = none). Credentials that describe themselves (Source, Warning: a
	// credential read on first use) override both in r2r_status and in error advice.
	Credentials r2r.Credentials
	AuthSource  string
	AuthWarning string

	// ReadOnly drops every tool that writes to R2R (--read-only).
	ReadOnly bool

	// Logger receives the server's logs. nil = Run opens one from LogFile, LogLevel and
	// Stderr (see OpenLogger); cmd opens it itself so credential resolution logs there too.
	Logger *slog.Logger
	// LogFile receives the logs (created 0600, appended to); "" = Stderr.
	LogFile string
	// LogLevel is debug, info, warn or error; "" = info.
	LogLevel string
	// Stderr receives the logs when LogFile is empty; nil = discard.
	Stderr io.Writer

	// WorkDir is the directory the project is inferred from when the client offers no
	// roots (--project-dir, default the working directory).
	WorkDir string
	// ConfigDir is r2r-mcp's configuration directory; the project → collection mapping
	// cache lives there (projects.json). "" = the tools package default.
	ConfigDir string

	// Version and Commit identify this build.
	Version string
	Commit  string

	// Settings are further effective settings and their sources for r2r_status (no secrets).
	Settings map[string]string

	// HTTPClient talks to R2R; nil = the r2r package's shared client.
	HTTPClient *http.Client
	// ShutdownGrace bounds the wait for in-flight calls after stdin closes or ctx is
	// cancelled; 0 = 500 ms.
	ShutdownGrace time.Duration
	// MaxInflight bounds the tools/call and resources/read requests served at once; one
	// more is answered "busy" (-32004) at once. 0 = DefaultMaxInflight (64).
	MaxInflight int
	// MaxRequestBytes bounds one JSON-RPC message from the client; a larger one gets an
	// error and is skipped. 0 = DefaultMaxRequestBytes (4 MiB).
	MaxRequestBytes int

	// AllowDirs are further directories r2r_ingest_document may read files from, beside
	// the project (--allow-dir).
	AllowDirs []string

	// Resilience and caching (DESIGN §6). Zero values take the defaults; where "negative"
	// is mentioned, a negative value switches the feature off.

	// CacheSize bounds the result cache in bytes; 0 = cache.DefaultMaxBytes (64 MiB),
	// negative = no cache.
	CacheSize int64
	// CacheTTLSearch, CacheTTLRAG and CacheTTLList are how long search results, RAG
	// answers, and listings and documents stay cached; 0 = 300 s, 120 s, 60 s; negative =
	// that kind is not cached.
	CacheTTLSearch time.Duration
	CacheTTLRAG    time.Duration
	CacheTTLList   time.Duration
	// RetryMax is how often an idempotent R2R call is retried after a transport error,
	// 429, 502, 503 or 504; 0 = r2r.DefaultMaxRetries (3), negative = never.
	RetryMax int
	// RetryWait is the first backoff wait (doubling, with jitter); 0 = 200 ms.
	RetryWait time.Duration
	// BreakerFailures failed calls in a row open the circuit breaker; it stays open for
	// BreakerCooldown, then BreakerSuccesses successful probes close it. 0 = 5, 60 s, 2.
	BreakerFailures  int
	BreakerCooldown  time.Duration
	BreakerSuccesses int
	// RateLimit and RateBurst are every tool's token bucket (calls per second, burst);
	// RAGRateLimit and RAGRateBurst r2r_rag_query's. 0 = 10/s burst 20 and 2/s burst 5;
	// a negative rate = no limit.
	RateLimit    float64
	RateBurst    int
	RAGRateLimit float64
	RAGRateBurst int
	// SearchTimeout, RAGTimeout and CallTimeout bound calls of r2r_search, r2r_rag_query
	// and every other tool; 0 = 20 s, 45 s, 15 s (tools.Default*Timeout).
	SearchTimeout time.Duration
	RAGTimeout    time.Duration
	CallTimeout   time.Duration
}

// resilience is Config's resilience and caching settings with the defaults applied.
type resilience struct {
	cacheSize                               int64 // 0 = off
	ttlSearch, ttlRAG, ttlList              time.Duration
	retry                                   r2r.RetryPolicy
	breaker                                 r2r.BreakerSettings
	limits                                  tools.RateLimits
	timeoutSearch, timeoutRAG, timeoutOther time.Duration
}

func (cfg Config) resilience() resilience {
	dur := func(v, def time.Duration) time.Duration {
		switch {
		case v < 0:
			return 0
		case v == 0:
			return def
		}
		return v
	}
	ttl := cache.DefaultTTL()
	r := resilience{
		cacheSize:     cfg.CacheSize,
		ttlSearch:     dur(cfg.CacheTTLSearch, ttl[cache.KindSearch]),
		ttlRAG:        dur(cfg.CacheTTLRAG, ttl[cache.KindRAG]),
		ttlList:       dur(cfg.CacheTTLList, ttl[cache.KindList]),
		retry:         r2r.RetryPolicy{MaxRetries: cfg.RetryMax, InitialInterval: cfg.RetryWait},
		timeoutSearch: dur(cfg.SearchTimeout, tools.DefaultSearchTimeout),
		timeoutRAG:    dur(cfg.RAGTimeout, tools.DefaultRAGTimeout),
		timeoutOther:  dur(cfg.CallTimeout, tools.DefaultCallTimeout),
	}
	switch {
	case cfg.CacheSize == 0:
		r.cacheSize = cache.DefaultMaxBytes
	case cfg.CacheSize < 0:
		r.cacheSize = 0
	}
	r.breaker = r2r.BreakerSettings{Cooldown: cfg.BreakerCooldown}
	if cfg.BreakerFailures > 0 {
		r.breaker.Failures = uint32(cfg.BreakerFailures)
	}
	if cfg.BreakerSuccesses > 0 {
		r.breaker.HalfOpenSuccesses = uint32(cfg.BreakerSuccesses)
	}
	limit := func(rate float64, burst int, def tools.RateLimit) tools.RateLimit {
		switch {
		case rate < 0:
			return tools.RateLimit{}
		case rate == 0:
			rate = def.Rate
		}
		if burst <= 0 {
			burst = def.Burst
		}
		return tools.RateLimit{Rate: rate, Burst: burst}
	}
	r.limits = tools.RateLimits{
		Default: limit(cfg.RateLimit, cfg.RateBurst, tools.DefaultRateLimit),
		PerTool: map[string]tools.RateLimit{"r2r_rag_query": limit(cfg.RAGRateLimit, cfg.RAGRateBurst, tools.DefaultRAGRateLimit)},
	}
	return r
}

// settings describes r for r2r_status's config section; b holds the breaker's effective
// settings.
func (r resilience) settings(b r2r.BreakerSettings) map[string]string {
	d := func(v time.Duration) string {
		if v == 0 {
			return "off"
		}
		return v.String()
	}
	rate := func(l tools.RateLimit) string {
		if l.Rate <= 0 {
			return "off"
		}
		return strconv.FormatFloat(l.Rate, 'f', -1, 64) + "/s burst " + strconv.Itoa(l.Burst)
	}
	size := "off"
	if r.cacheSize > 0 {
		size = FormatBytes(r.cacheSize)
	}
	retries := r.retry.MaxRetries
	if retries == 0 {
		retries = r2r.DefaultMaxRetries
	}
	wait := r.retry.InitialInterval
	if wait <= 0 {
		wait = r2r.DefaultInitialInterval
	}
	return map[string]string{
		"cache_size":        size,
		"cache_ttl_search":  d(r.ttlSearch),
		"cache_ttl_rag":     d(r.ttlRAG),
		"cache_ttl_list":    d(r.ttlList),
		"retry_max":         strconv.Itoa(max(retries, 0)),
		"retry_wait":        wait.String(),
		"breaker_failures":  strconv.FormatUint(uint64(b.Failures), 10),
		"breaker_cooldown":  b.Cooldown.String(),
		"breaker_successes": strconv.FormatUint(uint64(b.HalfOpenSuccesses), 10),
		"rate_limit":        rate(r.limits.Default),
		"rag_rate_limit":    rate(r.limits.For("r2r_rag_query")),
		"timeout_search":    r.timeoutSearch.String(),
		"timeout_rag":       r.timeoutRAG.String(),
		"timeout":           r.timeoutOther.String(),
	}
}

// FormatBytes formats a byte count with binary units as --cache-size accepts it:
// "64MiB", "1.5GiB", "512B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', -1, 64) + units[i]
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".") + units[i]
}

// Run serves MCP over stdin/stdout until stdin is closed or ctx is cancelled (SIGINT,
// SIGTERM); both are a clean stop and return nil. In-flight tool calls are cancelled.
// stdout receives JSON-RPC messages only.
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout io.Writer) error {
	base := cfg.Logger
	if base == nil {
		l, closeLog, err := OpenLogger(cfg.LogFile, cfg.LogLevel, cfg.Stderr)
		if err != nil {
			return err
		}
		defer closeLog()
		base = l
	}
	clientLog := &atomic.Pointer[mcpserver.MCPServer]{}
	logger := slog.New(&clientLogHandler{next: base.Handler(), srv: clientLog})

	s, err := New(cfg, logger)
	if err != nil {
		logger.Error("cannot start", "error", err)
		return err
	}
	clientLog.Store(s.MCP)
	defer s.Close()

	logger.Info("r2r-mcp serving on stdio", "version", cfg.Version, "r2r_url", s.Deps.Client.BaseURL(),
		"url_source", cfg.URLSource, "auth_source", cfg.AuthSource, "read_only", cfg.ReadOnly,
		"tools", len(s.Tools), "cache_bytes", s.Cache.Stats().MaxBytes,
		"breaker_failures", s.Breaker.Settings().Failures, "breaker_cooldown", s.Breaker.Settings().Cooldown)
	if cfg.AuthWarning != "" {
		logger.Warn("credentials", "warning", cfg.AuthWarning)
	}
	return serveStdio(ctx, s.MCP, s.cancelled.watch(ctx, stdin), s.cancelled.filter(stdout), logger, cfg.ShutdownGrace,
		stdioLimits{maxInflight: cfg.MaxInflight, maxRequestBytes: cfg.MaxRequestBytes})
}

// Server is a configured MCP server and the dependencies its tools share.
type Server struct {
	MCP   *mcpserver.MCPServer
	Deps  *tools.Deps
	Tools []tools.Tool
	// Breaker guards every call to R2R; Cache holds tool results (nil when disabled).
	Breaker *r2r.Breaker
	Cache   *cache.Cache

	// cancelled remembers tool calls whose context ended before they answered, so their
	// responses are not written (see cancel.go).
	cancelled *cancelledCalls
}

// Close releases the cache. The server must not be used afterwards.
func (s *Server) Close() {
	s.Cache.Close()
}

// New builds the MCP server for cfg without starting it. It does no network I/O.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	creds := cfg.Credentials
	if creds == nil {
		creds = r2r.Anonymous()
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}
	base, err := r2r.NormalizeBaseURL(cfg.R2RURL)
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}
	res := cfg.resilience()
	r2rLog := logger.With("component", "r2r")
	// One breaker per server, and a server talks to one R2R: one breaker per R2R URL.
	breaker := r2r.NewBreaker(base, res.breaker, r2rLog)
	client, err := r2r.New(r2r.Options{
		BaseURL:     base,
		Credentials: creds,
		HTTPClient:  cfg.HTTPClient,
		UserAgent:   Name + "/" + version,
		Logger:      r2rLog,
		Middleware:  r2r.Resilient(r2r.ResilienceOptions{URL: base, Retry: res.retry, Breaker: breaker, Logger: r2rLog}),
	})
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}
	// The health client bypasses the breaker; its successful checks end an open one.
	health, err := r2r.New(r2r.Options{BaseURL: base, Credentials: creds, HTTPClient: cfg.HTTPClient,
		UserAgent: Name + "/" + version, Logger: r2rLog, Middleware: []r2r.Middleware{breaker.HealthProbe()}})
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}
	breaker.SetProbe(health.Health)
	results, err := cache.New(cache.Config{MaxBytes: res.cacheSize, TTL: map[cache.Kind]time.Duration{
		cache.KindSearch: res.ttlSearch, cache.KindRAG: res.ttlRAG,
		cache.KindList: res.ttlList, cache.KindDocument: res.ttlList,
	}})
	if err != nil {
		return nil, err
	}

	cacheFile := ""
	if cfg.ConfigDir != "" {
		cacheFile = filepath.Join(cfg.ConfigDir, "projects.json")
	}
	projects := tools.NewProjectResolver(tools.ProjectOptions{
		WorkDir:    cfg.WorkDir,
		ExtraRoots: cfg.AllowDirs,
		CacheFile:  cacheFile,
		Logger:     logger.With("component", "project"),
	})

	settings := res.settings(breaker.Settings())
	lim := stdioLimits{maxInflight: cfg.MaxInflight, maxRequestBytes: cfg.MaxRequestBytes}.withDefaults()
	settings["max_inflight"] = strconv.Itoa(lim.maxInflight)
	settings["max_request_bytes"] = FormatBytes(int64(lim.maxRequestBytes))
	if len(cfg.AllowDirs) > 0 {
		settings["allow_dirs"] = strings.Join(cfg.AllowDirs, string(filepath.ListSeparator))
	}
	maps.Copy(settings, cfg.Settings)
	if cfg.LogFile != "" {
		settings["log_file"] = cfg.LogFile
	}
	if cfg.LogLevel != "" {
		settings["log_level"] = cfg.LogLevel
	}
	if cfg.WorkDir != "" {
		settings["project_dir"] = cfg.WorkDir
	}
	if cfg.AuthWarning != "" {
		settings["auth_warning"] = cfg.AuthWarning
	}

	deps := &tools.Deps{
		Client:       client,
		Projects:     projects,
		History:      tools.NewSearchHistory(0),
		Logger:       logger.With("component", "tools"),
		HealthClient: health,
		BreakerState: breaker.State,
		Status: tools.StatusInfo{
			Version:     version,
			Commit:      cfg.Commit,
			AuthSource:  cfg.AuthSource,
			AuthWarning: cfg.AuthWarning,
			URLSource:   cfg.URLSource,
			ReadOnly:    cfg.ReadOnly,
			Config:      settings,
		},
		CallTimeout:   res.timeoutOther,
		SearchTimeout: res.timeoutSearch,
		RAGTimeout:    res.timeoutRAG,
		RateLimits:    res.limits,
	}
	if lc, ok := cfg.Credentials.(describedCredentials); ok {
		// Read lazily (auth.LazyCredentials): where they came from is known after first use.
		deps.AuthState = func() (string, string) { return lc.Source(), lc.Warning() }
	}
	if results != nil { // a nil *cache.Cache in the interface would be a non-nil Cache
		deps.Cache = results
	}

	registry := tools.Filter(tools.Registry(deps), cfg.ReadOnly)
	validator, err := newArgValidator(registry, logger.With("component", "validate"))
	if err != nil {
		return nil, err
	}
	roots := &rootsBridge{projects: projects, logger: logger.With("component", "roots")}

	hooks := &mcpserver.Hooks{}
	cancelled := newCancelledCalls(logger.With("component", "mcp"))
	hooks.AddAfterCallTool(cancelled.afterCallTool)
	hooks.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		logger.Info("client initialized", "client", req.Params.ClientInfo.Name,
			"client_version", req.Params.ClientInfo.Version, "protocol", res.ProtocolVersion,
			"roots", req.Params.Capabilities.Roots != nil)
	})

	s := mcpserver.NewMCPServer(Name, version,
		mcpserver.WithHooks(hooks),
		mcpserver.WithTitle("R2R knowledge base"),
		mcpserver.WithInstructions(instructions(cfg.ReadOnly)),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, false),
		mcpserver.WithLogging(),
		// mcp-go advertises this as a server capability ("roots": {}); clients ignore it.
		// What matters is the client's roots capability, which rootsBridge checks.
		mcpserver.WithRoots(),
		mcpserver.WithRecovery(),
		mcpserver.WithResourceRecovery(),
		// Published schemas are strict (additionalProperties: false); validator enforces
		// them with messages a model can act on, in place of WithInputSchemaValidation.
		mcpserver.WithStrictInputSchemaDefault(),
		mcpserver.WithLogger(logger.With("component", "mcp")),
		mcpserver.WithToolHandlerMiddleware(validator.middleware),
	)
	roots.srv = s
	projects.SetRootsProvider(roots.request)
	s.AddNotificationHandler(string(mcp.MethodNotificationRootsListChanged), func(ctx context.Context, _ mcp.JSONRPCNotification) {
		roots.invalidate()
	})

	s.AddTools(tools.ServerTools(registry)...)
	s.AddResources(tools.Resources(deps)...)
	s.AddResourceTemplates(tools.ResourceTemplates(deps)...)
	return &Server{MCP: s, Deps: deps, Tools: registry, Breaker: breaker, Cache: results, cancelled: cancelled}, nil
}
