// Package server builds r2r-mcp's MCP server from the tool registry and runs it over stdio.
//
// Nothing but JSON-RPC is written to the stdout writer Run receives; logs go to stderr or a
// log file. Run does no network I/O before it answers initialize: the R2R client connects on
// the first tool call, so the server starts even when R2R is down or the credentials are
// wrong, and the tools then say what is wrong and what to do.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Name is the server name reported in the initialize result.
const Name = "r2r-mcp"

// Config is everything Run needs. cmd/serve.go builds it from flags, the environment and
// auth.Resolve; tests build it directly.
type Config struct {
	// R2RURL is the R2R base URL; URLSource says where it came from ("flag --r2r-url",
	// "env R2R_API_URL", "default", ...).
	R2RURL    string
	URLSource string
	// Credentials authenticate R2R requests; nil = r2r.Anonymous(). A token source logs in
	// lazily, on the first request. AuthSource says where they came from ("keyring",
	// "env R2R_API_KEY", "none", ...); AuthWarning is a resolution problem to surface in
	// the log and in r2r_status ("" = none).
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
	// CallTimeout bounds each tool call; 0 = tools.DefaultCallTimeout.
	CallTimeout time.Duration
	// ShutdownGrace bounds the wait for in-flight calls after stdin closes or ctx is
	// cancelled; 0 = 500 ms.
	ShutdownGrace time.Duration
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

	logger.Info("r2r-mcp serving on stdio", "version", cfg.Version, "r2r_url", s.Deps.Client.BaseURL(),
		"url_source", cfg.URLSource, "auth_source", cfg.AuthSource, "read_only", cfg.ReadOnly,
		"tools", len(s.Tools))
	if cfg.AuthWarning != "" {
		logger.Warn("credentials", "warning", cfg.AuthWarning)
	}
	return serveStdio(ctx, s.MCP, stdin, stdout, logger, cfg.ShutdownGrace)
}

// Server is a configured MCP server and the dependencies its tools share.
type Server struct {
	MCP   *mcpserver.MCPServer
	Deps  *tools.Deps
	Tools []tools.Tool
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
	client, err := r2r.New(r2r.Options{
		BaseURL:     cfg.R2RURL,
		Credentials: creds,
		HTTPClient:  cfg.HTTPClient,
		UserAgent:   Name + "/" + version,
		Logger:      logger.With("component", "r2r"),
	})
	if err != nil {
		return nil, fmt.Errorf("R2R URL: %w", err)
	}

	cacheFile := ""
	if cfg.ConfigDir != "" {
		cacheFile = filepath.Join(cfg.ConfigDir, "projects.json")
	}
	projects := tools.NewProjectResolver(tools.ProjectOptions{
		WorkDir:   cfg.WorkDir,
		CacheFile: cacheFile,
		Logger:    logger.With("component", "project"),
	})

	settings := map[string]string{}
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
		Client:   client,
		Projects: projects,
		History:  tools.NewSearchHistory(0),
		Logger:   logger.With("component", "tools"),
		Status: tools.StatusInfo{
			Version:    version,
			Commit:     cfg.Commit,
			AuthSource: cfg.AuthSource,
			URLSource:  cfg.URLSource,
			ReadOnly:   cfg.ReadOnly,
			Config:     settings,
		},
		CallTimeout: cfg.CallTimeout,
	}

	registry := tools.Filter(tools.Registry(deps), cfg.ReadOnly)
	validator, err := newArgValidator(registry, logger.With("component", "validate"))
	if err != nil {
		return nil, err
	}
	roots := &rootsBridge{projects: projects, logger: logger.With("component", "roots")}

	hooks := &mcpserver.Hooks{}
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
	return &Server{MCP: s, Deps: deps, Tools: registry}, nil
}
