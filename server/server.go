// Package server builds r2r-mcp's MCP server from the tool registry and runs it over stdio.
//
// Nothing but JSON-RPC is written to the stdout writer Run receives; logs go to stderr or a
// log file. Run does no network I/O before it answers initialize: the R2R client connects on
// the first tool call, so the server starts even when R2R is down or the credentials are
// wrong, and the tools then say what is wrong and what to do.
//
// New wires the resilience: one circuit breaker for the R2R URL around retries of
// idempotent calls (r2rChain), the byte-bounded result cache, per-tool rate limits and
// deadlines (the tool call chain, toolChain). A client's notifications/cancelled aborts
// the call's R2R request, and the cancelled call gets no response (cancel.go).
package server

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// Name is the server name reported in the initialize result.
const Name = "r2r-mcp"

// Config is everything Run needs. cmd/serve.go builds it from flags, the environment and
// auth.ResolveLazy; tests build it directly.
type Config struct {
	// R2RURL is the R2R base URL; URLSource says where it came from ("flag --url",
	// "env R2R_API_URL", "default", ...).
	R2RURL    string
	URLSource string
	// Credentials authenticate R2R requests; nil = r2r.Anonymous(). A token source logs in
	// lazily, on the first request. Where they came from, and any problem with them to
	// surface in the log and in r2r_status, is what they say (auth.OriginOf: auth's
	// credentials do; a stored credential read on first use knows its source after it).
	Credentials r2r.Credentials

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
	// FirstAnswered, when set, runs once Run has written its first response to a client
	// request (serve starts reading the stored credential there); nil = nothing.
	FirstAnswered func()

	// AllowDirs are further directories r2r_ingest_document may read files from, beside
	// the project (--allow-dir).
	AllowDirs []string

	// Remote serves clients on other machines (serve --http): no local project, files only
	// from AllowDirs (project.Options.Remote).
	Remote bool
	// Tracing and Metrics, when set, observe every tool call and every R2R request of the
	// server and of each copy ForCredentials builds; chain.go places them.
	Tracing Observer
	Metrics Observer

	// AnalyticsDir keeps the analytics of the user's projects (analytics.FileStore); "" =
	// none kept, as with Options.NoAnalytics. serve sets analytics.DefaultDir().
	AnalyticsDir string

	// Options are the tunable settings (cache, retries, breaker, rate limits, deadlines).
	Options Options
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
	limitMemory(s.Cache.Stats().MaxBytes)

	// Asked now, not at start-up: the stored credential is read in the background and may
	// already be known, so "not read yet" is never logged after the read's own log line;
	// the read's warnings are the read's to log (StartOrigin).
	origin := auth.StartOrigin(cfg.Credentials)
	logger.Info("r2r-mcp serving on stdio", "version", cfg.Version, "r2r_url", s.Deps.Client.BaseURL(),
		"url_source", cfg.URLSource, "auth_source", string(origin.Source), "read_only", cfg.ReadOnly,
		"cache_bytes", s.Cache.Stats().MaxBytes,
		"breaker_failures", s.Breaker.Settings().Failures, "breaker_cooldown", s.Breaker.Settings().Cooldown)
	if w := origin.Warning(); w != "" {
		logger.Warn("credentials", "warning", w)
	}
	return serveStdio(ctx, s.MCP, s.cancelled.watch(stdin), stdout, logger, stdioConfig{limits: cfg.Options.stdioLimits(),
		grace: cfg.ShutdownGrace, hooks: s.hooks, filter: s.cancelled.filter, stop: s.cancelled.stop, answered: cfg.FirstAnswered})
}

// memoryHeadroom is what a serve process needs beside its result cache: the runtime, the
// tool registry, requests in flight. With 20 MiB a full 16 MiB cache left the heap so near
// the limit that the collector ran on nearly every call: cache hits slowed from 0.4 to
// 1.7–2.3 ms after about 1,500 distinct searches (shared/bench, 10 rounds); with 40 MiB they
// stayed at 0.3–0.4 ms.
const memoryHeadroom = 40 << 20

// limitMemory sets the Go runtime's soft memory limit to the cache's bound plus
// memoryHeadroom, unless GOMEMLIMIT says otherwise. Without it a full cache lets the heap
// grow to twice its live size before a collection (GOGC=100); with it, the process stays
// near what the cache is allowed (a larger transient need, a big R2R response, still
// succeeds: the limit is soft).
func limitMemory(cacheBytes int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || cacheBytes <= 0 {
		return
	}
	debug.SetMemoryLimit(cacheBytes + memoryHeadroom)
}

// Server is a configured MCP server and the dependencies its tools share.
type Server struct {
	MCP  *mcpserver.MCPServer
	Deps *tools.Deps
	// Breaker guards every call to R2R; Cache holds tool results (nil when disabled).
	Breaker *r2r.Breaker
	Cache   *cache.Cache

	// cancelled remembers tool calls whose context ended before they answered, so their
	// responses are not written (see cancel.go).
	cancelled *cancelledCalls
	// hooks are the MCP server's; Run adds the in-flight bound's before serving.
	hooks *mcpserver.Hooks
	tools func() []tools.Tool // built on first use (lazyTools)
	// scope adapts a call to the user of a copy ForCredentials built (UserOptions.Scope).
	scope func(mcp.Tool) mcpserver.ToolHandlerMiddleware

	cfg    Config
	logger *slog.Logger
	skills *teamSkills
}

// Tools returns the tools s offers, in registry order.
func (s *Server) Tools() []tools.Tool { return s.tools() }

// Close releases the cache. The server must not be used afterwards.
func (s *Server) Close() {
	s.skills.close()
	s.Cache.Close()
	ctx, cancel := context.WithTimeout(context.Background(), analyticsCloseWait)
	defer cancel()
	s.Deps.Analytics.Close(ctx)
}

// analyticsCloseWait bounds how long Close waits for queued analytics to be written.
const analyticsCloseWait = time.Second

// newAnalytics is the recorder cfg asks for: nil when analytics are off.
func newAnalytics(cfg Config, logger *slog.Logger) *analytics.Recorder {
	if cfg.Options.NoAnalytics || cfg.AnalyticsDir == "" {
		return nil
	}
	return analytics.NewRecorder(&analytics.FileStore{Dir: cfg.AnalyticsDir}, logger.With("component", "analytics"))
}

// New builds the MCP server for cfg without starting it. It does no network I/O.
func New(cfg Config, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, err := r2r.NormalizeBaseURL(cfg.R2RURL)
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}
	c, err := newClients(cfg, base, logger.With("component", "r2r"))
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}
	results, err := cache.New(cfg.Options.Cache.Config())
	if err != nil {
		return nil, err
	}
	cacheFile := ""
	if cfg.ConfigDir != "" {
		cacheFile = filepath.Join(cfg.ConfigDir, "projects.json")
	}
	projects := project.NewResolver(project.Options{
		WorkDir:    cfg.WorkDir,
		ExtraRoots: cfg.AllowDirs,
		CacheFile:  cacheFile,
		Logger:     logger.With("component", "project"),
		Remote:     cfg.Remote,
	})
	deps := newDeps(cfg, c, projects, logger)
	if results != nil { // a nil *cache.Cache in the interface would be a non-nil Cache
		deps.Cache = results
	}
	srv := &Server{Deps: deps, Breaker: c.breaker, Cache: results, cfg: cfg, logger: logger}
	srv.build(projects)
	return srv, nil
}

// build registers s.Deps's tools, each in the tool call chain (toolChain), and resources on
// a new MCP server.
func (s *Server) build(projects *project.Resolver) {
	registry := sync.OnceValue(s.toolChain)
	cancelled := newCancelledCalls(s.logger.With("component", "mcp"))
	lazy := &lazyTools{registry: registry}
	hooks := &mcpserver.Hooks{}
	skills := &teamSkills{remote: s.cfg.Remote, poll: s.cfg.Options.SkillPoll}
	m := newMCPServer(s.cfg, projects, hooks, cancelled, lazy, skills, s.logger)
	lazy.srv = m
	skills.prompts = tools.NewSkillPrompts(s.Deps, m)
	s.skills = skills
	m.AddResources(tools.Resources(s.Deps)...)
	m.AddResourceTemplates(tools.ResourceTemplates(s.Deps)...)
	m.AddPrompts(tools.Prompts(s.Deps, s.cfg.ReadOnly)...)
	// Options applied before m serves anything: the completer needs s.Deps.
	mcpserver.WithCompletions()(m)
	mcpserver.WithPromptCompletionProvider(tools.PromptCompletions(s.Deps, s.cfg.ReadOnly))(m)
	mcpserver.WithResourceCompletionProvider(tools.ResourceCompletions(s.Deps))(m)
	s.MCP, s.tools, s.cancelled, s.hooks = m, registry, cancelled, hooks
}

// lazyTools builds the tools and hands them to mcp-go on the first tools/list or tools/call
// rather than at start-up: building the definitions, and mcp-go re-encoding and re-reading
// every input schema as a tool is added, are most of serve's own start-up work, and a
// client's first message, initialize, needs none of it. The capability is declared up
// front (WithToolCapabilities), so initialize answers the same either way.
type lazyTools struct {
	once     sync.Once
	srv      *mcpserver.MCPServer
	registry func() []tools.Tool
}

func (l *lazyTools) register() {
	l.once.Do(func() { l.srv.AddTools(tools.ServerTools(l.registry())...) })
}

// clients are the R2R clients of one server: the tools' (retries inside one circuit
// breaker) and r2r_status's health check (neither, so it reports R2R as it is now).
type clients struct {
	tools, health *r2r.Client
	breaker       *r2r.Breaker
}

func newClients(cfg Config, base string, logger *slog.Logger) (clients, error) {
	creds := cfg.Credentials
	if creds == nil {
		creds = r2r.Anonymous()
	}
	agent := Name + "/" + cmp.Or(cfg.Version, "dev")
	// One breaker per server, and a server talks to one R2R: one breaker per R2R URL.
	c := clients{breaker: r2r.NewBreaker(base, cfg.Options.Breaker, logger)}
	var err error
	toolsChain, healthChain := r2rChain(cfg, cfg.Options.Retry, c.breaker, logger)
	c.tools, err = r2r.New(r2r.Options{
		BaseURL:     base,
		Credentials: creds,
		HTTPClient:  cfg.HTTPClient,
		UserAgent:   agent,
		Logger:      logger,
		Middleware:  toolsChain,
	})
	if err != nil {
		return c, err
	}
	c.health, err = r2r.New(r2r.Options{BaseURL: base, Credentials: creds, HTTPClient: cfg.HTTPClient,
		UserAgent: agent, Logger: logger, Middleware: healthChain})
	if err == nil {
		c.breaker.SetProbe(c.health.Health)
	}
	return c, err
}

// newDeps gathers what the tools share: their configuration from cfg.Options.Tools and
// the facts r2r_status reports, and the run-time state.
func newDeps(cfg Config, c clients, projects *project.Resolver, logger *slog.Logger) *tools.Deps {
	conf := cfg.Options.Tools
	conf.Status = tools.StatusInfo{
		Version:   cmp.Or(cfg.Version, "dev"),
		Commit:    cfg.Commit,
		URLSource: cfg.URLSource,
		ReadOnly:  cfg.ReadOnly,
		Config:    func() map[string]string { return statusSettings(cfg) },
	}
	deps := &tools.Deps{
		Config:       conf,
		Client:       c.tools,
		Projects:     projects,
		History:      tools.NewSearchHistory(0),
		Analytics:    newAnalytics(cfg, logger),
		Logger:       logger.With("component", "tools"),
		HealthClient: c.health,
		BreakerState: c.breaker.State,
	}
	return deps
}

// statusSettings are the effective settings r2r_status reports.
func statusSettings(cfg Config) map[string]string {
	settings := knob.Settings(cfg.Options.Knobs())
	if len(cfg.AllowDirs) > 0 {
		settings["allow_dirs"] = strings.Join(cfg.AllowDirs, string(filepath.ListSeparator))
	}
	maps.Copy(settings, cfg.Settings)
	for k, v := range map[string]string{"log_file": cfg.LogFile, "log_level": cfg.LogLevel,
		"project_dir": cfg.WorkDir, "auth_warning": auth.OriginOf(cfg.Credentials).Warning()} {
		if v != "" {
			settings[k] = v
		}
	}
	return settings
}

// newMCPServer is the mcp-go server with r2r-mcp's options, hooks and roots bridge: the
// transport's part of the tool call chain (see toolChain for the rest); the caller adds
// tools and resources.
func newMCPServer(cfg Config, projects *project.Resolver, hooks *mcpserver.Hooks, cancelled *cancelledCalls,
	lazy *lazyTools, skills *teamSkills, logger *slog.Logger) *mcpserver.MCPServer {
	roots := &rootsBridge{projects: projects, logger: logger.With("component", "roots")}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { lazy.register() })
	hooks.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { lazy.register() })
	cancelled.hooks(hooks)
	hooks.AddBeforeListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest) { skills.before(ctx) })
	hooks.AddBeforeGetPrompt(func(ctx context.Context, _ any, _ *mcp.GetPromptRequest) { skills.before(ctx) })
	hooks.AddAfterInitialize(func(_ context.Context, _ any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		logger.Info("client initialized", "client", req.Params.ClientInfo.Name,
			"client_version", req.Params.ClientInfo.Version, "protocol", res.ProtocolVersion,
			"roots", req.Params.Capabilities.Roots != nil)
	})
	opts := []mcpserver.ServerOption{
		mcpserver.WithHooks(hooks),
		mcpserver.WithTitle("R2R knowledge base"),
		mcpserver.WithInstructions(instructions(cfg.ReadOnly)),
		mcpserver.WithToolCapabilities(false),
		mcpserver.WithResourceCapabilities(false, false),
		mcpserver.WithPromptCapabilities(true), // team skills come and go (teamSkills)
		mcpserver.WithLogging(),
		// mcp-go advertises this as a server capability ("roots": {}); clients ignore it.
		// What matters is the client's roots capability, which rootsBridge checks.
		mcpserver.WithRoots(),
		mcpserver.WithRecovery(),
		mcpserver.WithResourceRecovery(),
		// Published schemas are strict (additionalProperties: false); the tool call chain's
		// validation (tools.Chain) enforces them with messages a model can act on, in place
		// of WithInputSchemaValidation.
		mcpserver.WithStrictInputSchemaDefault(),
		mcpserver.WithLogger(slog.New(quietRequests{logger.Handler()}).With("component", "mcp")),
	}
	s := mcpserver.NewMCPServer(Name, cmp.Or(cfg.Version, "dev"), opts...)
	roots.srv = s
	projects.SetRootsProvider(roots.request)
	s.AddNotificationHandler(string(mcp.MethodNotificationRootsListChanged), func(ctx context.Context, _ mcp.JSONRPCNotification) {
		roots.invalidate()
	})
	return s
}
