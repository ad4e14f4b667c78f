package server

import "time"

// Auth modes of serve --http (HTTPOptions.AuthMode).
const (
	// AuthModeUser: each request carries its user's own R2R API key.
	AuthModeUser = "user"
	// AuthModeShared: every request acts with the server's own credential (read-only).
	AuthModeShared = "shared"
)

// HTTPOptions are the team-deployment settings of serve --http (Options.HTTP); over stdio
// they are unused. Each is a knob (see server/knob) that applies only with --http.
type HTTPOptions struct {
	// Addr is the listen address (HOST:PORT); "" = serve over stdio.
	Addr string `knob:"http" meta:"ADDR" zero:"off (stdio)" help:"serve MCP over Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio, for a team"`
	// AuthMode is AuthModeUser or AuthModeShared.
	AuthMode string `knob:"auth-mode" with:"http" meta:"MODE" default:"user" enum:"user,shared" help:"user: each request carries its user's R2R API key or access token; shared: every request uses this server's own credential (needs --read-only)"`
	// KeyTTL is how long an API key R2R accepted is trusted before it is checked again.
	KeyTTL time.Duration `knob:"key-ttl" with:"http" default:"60s" min:"1s" max:"1h" help:"how long an API key R2R accepted is trusted before it is checked again"`
	// AllowedHosts and AllowedOrigins are the Host and browser Origin values accepted
	// besides loopback names and the same host ("*" = any).
	AllowedHosts   []string `knob:"allowed-hosts" with:"http" meta:"H,..." zero:"loopback" help:"Host header values accepted besides loopback names, comma-separated (* = any)"`
	AllowedOrigins []string `knob:"allowed-origins" with:"http" meta:"O,..." zero:"same host" help:"browser Origin values accepted, comma-separated (* = any)"`
	// Collection is the collection of calls that name none; "" = searches cover every
	// collection the user may read.
	Collection string `knob:"collection" with:"http" meta:"ID" help:"collection id of calls that name none (and send no X-R2R-Collection header); none: searches cover every collection the user may read"`
	// MaxKeys bounds the credentials remembered, and so the users holding a copy of the
	// tools (each user is built on its first credential and dropped with its last).
	MaxKeys int `knob:"max-keys" with:"http" default:"1000" min:"1" max:"100000" help:"R2R credentials (API keys, access tokens) remembered, about 150 bytes each; each R2R user among them holds one copy of the tools, about 110 KiB of heap; the least recently used credential goes first"`
	// RedisURL is the Redis the replicas share; "" = none. It may hold a password: only
	// its host is ever shown.
	RedisURL string `knob:"redis-url" with:"http" meta:"URL" show:"host" help:"Redis shared by the replicas (L2 cache, generations, rate limits, search history, sync jobs), e.g. redis://127.0.0.1:6379/0; a URL with a password belongs in the environment variable, not in argv"`
}
