package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"

	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// checkHTTP validates the --http settings against the rest of serve's configuration: a
// knob that applies only with --http is an error without it.
func checkHTTP(o *server.HTTPOptions, knobs []knob.Row, fs *pflag.FlagSet, readOnly bool) error {
	if o.Addr == "" {
		for _, k := range knobs {
			if k.With == "http" && fs.Changed(k.Name) {
				return fmt.Errorf("--%s applies only with --http", k.Name)
			}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8080", o.Addr)
	}
	if o.AuthMode == server.AuthModeShared && !readOnly {
		return errors.New("--auth-mode shared serves every caller with this server's one credential, so it needs --read-only")
	}
	if fs.Changed("redis-url") {
		if u, err := url.Parse(o.RedisURL); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				return errors.New("--redis-url holds a password, which would show in the process list: set R2R_MCP_REDIS_URL instead")
			}
		}
	}
	return nil
}

// runHTTP serves cfg over HTTP on cfg.Options.HTTP.Addr until ctx ends.
func runHTTP(ctx context.Context, cfg server.Config, logger *slog.Logger) error {
	o := cfg.Options.HTTP
	m := metrics.New()
	cfg.Remote = true
	cfg.Metrics = m
	base, err := server.New(cfg, logger)
	if err != nil {
		return err
	}
	defer base.Close()
	m.WatchBreaker(base.Breaker.State)
	hopts := httpserve.Options{HTTPOptions: o, Logger: logger.With("component", "http"), Metrics: m}
	hopts.AllowedHosts = append(slices.Clone(o.AllowedHosts), listenHost(o.Addr))
	if base.Cache != nil {
		hopts.Cache = m.Cache(base.Cache)
	}
	if o.RedisURL != "" {
		store, err := redisl2.Open(o.RedisURL, redisl2.Options{Observer: m, Logger: logger.With("component", "redis")})
		if err != nil {
			return fmt.Errorf("--redis-url: %w", err)
		}
		defer store.Close()
		if base.Cache != nil {
			hopts.Cache = store.Cache(base.Cache)
		}
		hopts.SharedLimits, hopts.History, hopts.SyncJobs = store, store, store
		if !cfg.Options.NoAnalytics {
			rec := analytics.NewRecorder(&analytics.TeamStore{List: store}, logger.With("component", "analytics"))
			defer rec.Close(context.Background())
			hopts.Analytics = rec
		}
		hopts.Ready = map[string]func(context.Context) error{"redis": store.Ping}
	}
	h, err := httpserve.New(base, hopts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", o.Addr, err)
	}
	logger.Info("r2r-mcp serving MCP over HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "version", cfg.Version,
		"r2r_url", base.Deps.Client.BaseURL(), "auth_mode", o.AuthMode, "read_only", cfg.ReadOnly,
		"tools", len(base.Tools()))
	if o.AuthMode == server.AuthModeShared {
		logger.Warn("--auth-mode shared: every caller reads with this server's credential and sends no key; " +
			"let only the proxy reach this address")
	}
	return httpserve.Serve(ctx, ln, h, logger)
}

// listenHost is the host of --http when it names one (not 0.0.0.0 or ::), so requests
// addressed to it pass the Host check.
func listenHost(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "localhost"
	}
	return host
}

var _ http.Handler = (*httpserve.Handler)(nil)
