package server

import (
	"time"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Options are serve's tunable settings as effective values. Each package owns the
// settings it uses; a field tagged knob is one row (flag, environment twin, default,
// bounds, help: see server/knob), from which serve's flags and variables, r2r_status's
// settings and the README's configuration tables are produced. DefaultOptions holds the
// defaults.
type Options struct {
	// Cache sizes the result cache.
	Cache cache.Settings
	// Retry is how reads of R2R are retried; Breaker when the circuit breaker opens.
	Retry   r2r.RetryPolicy
	Breaker r2r.BreakerSettings
	// Tools are the deadlines and rate limits of the tools.
	Tools tools.Config

	// MaxInflight bounds the requests (every one but ping) served at once; one more is
	// answered "busy" (-32004, retry_after) at once. Its bound is mcp-go's largest
	// tool-call queue.
	MaxInflight int `knob:"max-inflight" default:"64" min:"1" max:"10000" help:"requests (tool calls, resource reads, completions...) served at once; one more gets \"busy, retry in 1 s\" (code -32004, retry_after) at once; pings, cancellations and the end of input are read at any load"`
	// MaxRequestBytes bounds one JSON-RPC message from the client; a larger one gets an
	// error and is skipped. Tool arguments are far smaller (metadata is at most 16 KiB,
	// filters and queries are bounded); the bound keeps a runaway or hostile client from
	// making r2r-mcp hold a message of any size in memory.
	MaxRequestBytes int64 `knob:"max-request-bytes" unit:"bytes" default:"4MiB" min:"64KiB" max:"1GiB" help:"largest JSON-RPC message read from the client, e.g. 4MiB; a larger one gets a JSON-RPC error and the server keeps serving"`

	// NoAnalytics turns off the record of searches, RAG questions and recalls that
	// r2r-mcp analytics and the r2r://analytics resource report.
	NoAnalytics bool `knob:"no-analytics" default:"false" help:"keep no analytics: the queries, hit counts and documents of searches, RAG questions and recalls that r2r-mcp analytics reports (see Analytics)"`

	// SkillPoll is how often a session asks R2R whether the team's skills changed. R2R tells
	// no one when a document is added, so a teammate's skill reaches a running session
	// within this interval (one saved in the session itself at once), for two small
	// searches per poll.
	SkillPoll time.Duration `knob:"skill-poll" default:"1m" min:"5s" max:"24h" help:"how often a session reads the team's skills again, so a teammate's new or changed skill reaches it as a prompt (list_changed); one saved in the session is read at once"`

	// HTTP are the settings of serve --http.
	HTTP HTTPOptions
}

// DefaultOptions are the settings serve uses unless told otherwise.
func DefaultOptions() Options {
	var o Options
	knob.Defaults(&o)
	return o
}

// Knobs are the rows of o's settings, bound to o's fields, in the order of the README.
func (o *Options) Knobs() []knob.Row { return knob.Rows(o) }

// stdioLimits are o's bounds of the stdio transport.
func (o Options) stdioLimits() stdioLimits {
	return stdioLimits{maxInflight: o.MaxInflight, maxRequestBytes: int(o.MaxRequestBytes)}
}
