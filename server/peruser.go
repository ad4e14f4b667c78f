package server

import (
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// UserOptions adapt the copy of a server that ForCredentials builds.
type UserOptions struct {
	// Cache replaces the server's result cache (an L2 in front of it, metrics); nil = the
	// server's own.
	Cache tools.Cache
	// Scope returns what adapts a call of tool def to the user (the request's collection);
	// nil, or nil for def, = nothing. It runs before the argument validation (tools.Chain).
	Scope func(def mcp.Tool) mcpserver.ToolHandlerMiddleware
	// SharedLimits holds the rate-limit buckets across replicas; nil = this process's.
	SharedLimits tools.SharedLimiter
	// History keeps the search history across replicas; nil = this process's memory.
	History tools.HistoryStore
	// SyncJobs keeps the state of sync jobs across replicas; nil = this process's memory.
	SyncJobs tools.SyncJobStore
	// Analytics records the team's analytics across replicas; nil = the server's own
	// recorder (a file on this host, or none when analytics are off).
	Analytics *analytics.Recorder
}

// ForCredentials returns a server whose tools act as creds. It shares s's R2R connections,
// retry, circuit breaker and request middleware, and (unless o.Cache is set) the result
// cache, whose keys hold creds.Identity(), so one user's results never reach another. It
// has its own project resolver, search history and rate limiters: limits and history are
// per user. s must have been built by New; ForCredentials does no network I/O.
func (s *Server) ForCredentials(creds r2r.Credentials, o UserOptions) (*Server, error) {
	base := s.Deps
	logger := s.logger.With("identity", creds.Identity())
	projects := project.NewResolver(project.Options{
		WorkDir:    s.cfg.WorkDir,
		ExtraRoots: s.cfg.AllowDirs,
		CacheFile:  "-", // mappings of one user stay in memory
		Logger:     logger.With("component", "project"),
		Remote:     s.cfg.Remote,
	})
	deps := &tools.Deps{
		Config:       base.Config,
		Client:       base.Client.WithCredentials(creds),
		HealthClient: base.HealthClient.WithCredentials(creds),
		Projects:     projects,
		Cache:        base.Cache,
		History:      tools.NewSharedSearchHistory(0, o.History),
		Logger:       logger.With("component", "tools"),
		Now:          base.Now,
		BreakerState: base.BreakerState,
		SharedLimits: o.SharedLimits,
		SyncJobs:     o.SyncJobs,
		Analytics:    base.Analytics,
	}
	if o.Analytics != nil && !s.cfg.Options.NoAnalytics {
		deps.Analytics = o.Analytics
	}
	if o.Cache != nil {
		deps.Cache = o.Cache
	}
	u := &Server{Deps: deps, Breaker: s.Breaker, Cache: s.Cache, cfg: s.cfg, logger: logger, scope: o.Scope}
	u.build(projects)
	return u, nil
}

// ToolDefs returns the definitions of the tools s offers, in registry order.
func (s *Server) ToolDefs() []mcp.Tool {
	ts := s.Tools()
	out := make([]mcp.Tool, len(ts))
	for i, t := range ts {
		out[i] = t.Def
	}
	return out
}
