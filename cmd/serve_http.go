package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
)

// addHTTPFlags binds the --http flags to o (server.Options.HTTP), whose values are their
// defaults.
func addHTTPFlags(f *pflag.FlagSet, o *server.HTTPOptions) {
	f.StringVar(&o.Addr, "http", o.Addr, "serve MCP over Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio, for a team (env R2R_MCP_HTTP)")
	f.StringVar(&o.AuthMode, "auth-mode", o.AuthMode, `with --http: "user" (each request carries its user's R2R API key) or "shared" (every request uses this server's own credential; needs --read-only)`)
	f.DurationVar(&o.KeyTTL, "key-ttl", o.KeyTTL, "with --http: how long an API key R2R accepted is trusted before it is checked again")
	f.StringSliceVar(&o.AllowedHosts, "allowed-hosts", nil, `with --http: Host header values accepted besides loopback names, comma-separated ("*" = any) (env R2R_MCP_ALLOWED_HOSTS)`)
	f.StringSliceVar(&o.AllowedOrigins, "allowed-origins", nil, `with --http: browser Origin values accepted, comma-separated ("*" = any)`)
	f.StringVar(&o.RedisURL, "redis-url", "", "with --http: Redis shared by the replicas (L2 cache, generations, rate limits, search history, sync jobs), e.g. redis://127.0.0.1:6379/0; "+
		"a URL with a password belongs in R2R_MCP_REDIS_URL, not in argv")
	f.StringVar(&o.Collection, "collection", "", "with --http: collection id of calls that name none (and send no X-R2R-Collection header); default: searches cover every collection the user may read")
}

// httpEnv fills the --http flags not given from their environment twins.
func httpEnv(fs *pflag.FlagSet, o *server.HTTPOptions, getenv func(string) string) {
	if !fs.Changed("http") {
		o.Addr = strings.TrimSpace(getenv("R2R_MCP_HTTP"))
	}
	if !fs.Changed("allowed-hosts") {
		if v := strings.TrimSpace(getenv("R2R_MCP_ALLOWED_HOSTS")); v != "" {
			o.AllowedHosts = strings.Split(v, ",")
		}
	}
	if !fs.Changed("redis-url") {
		o.RedisURL = strings.TrimSpace(getenv("R2R_MCP_REDIS_URL"))
	}
}

// checkHTTP validates the --http flags against the rest of serve's configuration.
func checkHTTP(o *server.HTTPOptions, fs *pflag.FlagSet, readOnly bool) error {
	if o.Addr == "" {
		for _, name := range []string{"auth-mode", "key-ttl", "allowed-hosts", "allowed-origins", "collection", "redis-url"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies only with --http", name)
			}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8080", o.Addr)
	}
	switch o.AuthMode {
	case server.AuthModeUser:
	case server.AuthModeShared:
		if !readOnly {
			return errors.New("--auth-mode shared serves every caller with this server's one credential, so it needs --read-only")
		}
	default:
		return fmt.Errorf("--auth-mode %q: want user or shared", o.AuthMode)
	}
	if fs.Changed("redis-url") {
		if u, err := url.Parse(o.RedisURL); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				return errors.New("--redis-url holds a password, which would show in the process list: set R2R_MCP_REDIS_URL instead")
			}
		}
	}
	if o.KeyTTL < time.Second || o.KeyTTL > time.Hour {
		return fmt.Errorf("--key-ttl %s: must be between 1s and 1h", o.KeyTTL)
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
	hopts := httpserve.Options{
		AuthMode:       o.AuthMode,
		KeyTTL:         o.KeyTTL,
		AllowedHosts:   append(o.AllowedHosts, listenHost(o.Addr)),
		AllowedOrigins: o.AllowedOrigins,
		Collection:     o.Collection,
		Logger:         logger.With("component", "http"),
		Metrics:        m,
	}
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
