package server

import (
	"net/url"
	"strings"
	"time"
)

// Auth modes of serve --http (HTTPOptions.AuthMode).
const (
	// AuthModeUser: each request carries its user's own R2R API key.
	AuthModeUser = "user"
	// AuthModeShared: every request acts with the server's own credential (read-only).
	AuthModeShared = "shared"
)

// HTTPOptions are the team-deployment settings of serve --http (Options.HTTP); over stdio
// they are unused.
type HTTPOptions struct {
	// Addr is the listen address (HOST:PORT); "" = serve over stdio.
	Addr string
	// AuthMode is AuthModeUser or AuthModeShared.
	AuthMode string
	// KeyTTL is how long an API key R2R accepted is trusted before it is checked again.
	KeyTTL time.Duration
	// AllowedHosts and AllowedOrigins are the Host and browser Origin values accepted
	// besides loopback names and the same host ("*" = any).
	AllowedHosts   []string
	AllowedOrigins []string
	// Collection is the collection of calls that name none; "" = searches cover every
	// collection the user may read.
	Collection string
	// RedisURL is the Redis the replicas share; "" = none. It may hold a password: it is
	// never printed.
	RedisURL string
}

// DefaultHTTPOptions are the --http settings serve uses unless told otherwise.
func DefaultHTTPOptions() HTTPOptions {
	return HTTPOptions{AuthMode: AuthModeUser, KeyTTL: 60 * time.Second}
}

// settings describes h for r2r_status; nothing over stdio. The Redis URL shows as its
// address only.
func (h HTTPOptions) settings() map[string]string {
	if h.Addr == "" {
		return nil
	}
	out := map[string]string{"http": h.Addr, "auth_mode": h.AuthMode, "key_ttl": h.KeyTTL.String()}
	if len(h.AllowedHosts) > 0 {
		out["allowed_hosts"] = strings.Join(h.AllowedHosts, ",")
	}
	if len(h.AllowedOrigins) > 0 {
		out["allowed_origins"] = strings.Join(h.AllowedOrigins, ",")
	}
	if h.Collection != "" {
		out["collection"] = h.Collection
	}
	if h.RedisURL != "" {
		out["redis"] = "configured"
		if u, err := url.Parse(h.RedisURL); err == nil && u.Host != "" {
			out["redis"] = u.Host
		}
	}
	return out
}
