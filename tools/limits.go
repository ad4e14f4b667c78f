package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/time/rate"

	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// RateLimit is a token bucket: Rate calls per second on average, with bursts of up to
// Burst calls.
type RateLimit struct {
	// Rate is the sustained number of calls per second; 0 or less = no limit.
	Rate float64
	// Burst is how many calls may come at once; values below 1 count as 1.
	Burst int
}

// RateLimits configure one token bucket per tool. The zero value limits nothing.
type RateLimits struct {
	// Default applies to every tool without an entry in PerTool.
	Default RateLimit
	// PerTool overrides Default by tool name.
	PerTool map[string]RateLimit
}

// For returns the limit of tool name.
func (r RateLimits) For(name string) RateLimit {
	if l, ok := r.PerTool[name]; ok {
		return l
	}
	return r.Default
}

// limiters hold one token bucket per tool, created on first use.
type limiters struct {
	cfg RateLimits
	mu  sync.Mutex
	m   map[string]*toolLimiter
}

type toolLimiter struct {
	cfg      RateLimit
	lim      *rate.Limiter // nil = unlimited
	rejected atomic.Uint64
}

func newLimiters(cfg RateLimits) *limiters {
	return &limiters{cfg: cfg, m: map[string]*toolLimiter{}}
}

func (l *limiters) get(name string) *toolLimiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tl, ok := l.m[name]; ok {
		return tl
	}
	c := l.cfg.For(name)
	tl := &toolLimiter{cfg: c}
	if c.Rate > 0 && !math.IsInf(c.Rate, 1) {
		tl.cfg.Burst = max(c.Burst, 1)
		tl.lim = rate.NewLimiter(rate.Limit(c.Rate), tl.cfg.Burst)
	}
	l.m[name] = tl
	return tl
}

// admit takes a token for one call at now. When the bucket is empty it takes nothing and
// returns how long until a token will be there.
func (t *toolLimiter) admit(now time.Time) (time.Duration, bool) {
	if t.lim == nil {
		return 0, true
	}
	r := t.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second, false
	}
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now) // hand the token back: this call is refused, not queued
		t.rejected.Add(1)
		return wait, false
	}
	return 0, true
}

// wrap applies tool name's rate limit in front of h. A refused call gets an isError result
// at once (code -32004, retry_after from the bucket); it never waits for a token, so a
// flood of calls cannot pile up behind the limit. With lazy (tools whose reads go through
// the result cache) a call takes its token only when it is about to ask R2R: cache hits
// are never refused.
func (l *limiters) wrap(d *Deps, name string, lazy bool, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	tl := l.get(name)
	if tl.lim == nil {
		return h
	}
	refuse := func(ctx context.Context, wait time.Duration) *mcp.CallToolResult {
		d.logger().DebugContext(ctx, "tool call refused by the rate limit", "tool", name, "retry_after", wait)
		return rateLimitedResult(name, tl.cfg, wait)
	}
	if !lazy {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if wait, ok := d.admit(ctx, name, tl); !ok {
				return refuse(ctx, wait), nil
			}
			return h(ctx, req)
		}
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		g := &rateGate{admit: func() (time.Duration, bool) { return d.admit(ctx, name, tl) }}
		res, err := h(context.WithValue(ctx, rateGateKey{}, g), req)
		if wait, refused := g.refusal(); refused {
			return refuse(ctx, wait), nil
		}
		return res, err
	}
}

// errRateLimited ends a load refused by the rate limit; wrap answers for it.
var errRateLimited = errors.New("tools: rate limited")

// rateGate admits one call to R2R on the first admit; later admits of the same call pass.
type rateGate struct {
	admit func() (time.Duration, bool) // takes a token from the call's bucket

	mu       sync.Mutex
	admitted bool
	refused  bool
	wait     time.Duration
}

type rateGateKey struct{}

// admitR2R takes the call's rate-limit token before it asks R2R; errRateLimited when the
// bucket is empty. Calls without a gate (resources, tools limited up front) pass.
func admitR2R(ctx context.Context) error {
	g, ok := ctx.Value(rateGateKey{}).(*rateGate)
	if !ok {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.admitted:
		return nil
	case g.refused:
		return errRateLimited
	}
	wait, ok := g.admit()
	if !ok {
		g.refused, g.wait = true, wait
		return errRateLimited
	}
	g.admitted = true
	return nil
}

func (g *rateGate) refusal() (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.wait, g.refused
}

// rateLimitedResult is the answer to a call over r2r-mcp's own rate limit.
func rateLimitedResult(name string, cfg RateLimit, wait time.Duration) *mcp.CallToolResult {
	secs := math.Ceil(wait.Seconds()*1000) / 1000 // whole milliseconds, rounded up
	return toolerr.Result(toolerr.Info{Type: "rate_limited", Code: toolerr.CodeRateLimited, Retryable: true, RetryAfter: &secs,
		Message: fmt.Sprintf("Too many %s calls: r2r-mcp allows %s per second (bursts of %d) to protect R2R. "+
			"Retry in %s s, or make fewer, broader calls.", name, strconv.FormatFloat(cfg.Rate, 'f', -1, 64), cfg.Burst,
			strconv.FormatFloat(secs, 'f', -1, 64))})
}

// rateLimitStats reports, per tool with a limit, its settings and how many calls it refused.
func (d *Deps) rateLimitStats() map[string]map[string]any {
	d.setup()
	d.limits.mu.Lock()
	defer d.limits.mu.Unlock()
	out := map[string]map[string]any{}
	for name, tl := range d.limits.m {
		if tl.lim != nil {
			out[name] = map[string]any{"rate": tl.cfg.Rate, "burst": tl.cfg.Burst, "rejected": tl.rejected.Load()}
		}
	}
	return out
}

// SharedLimiter is a rate limiter shared by several servers (replicas behind one load
// balancer): every server draws from the same bucket per key.
type SharedLimiter interface {
	// Admit takes one call from key's bucket. err means the limiter could not decide;
	// the server's own bucket then applies.
	Admit(ctx context.Context, key string, rate float64, burst int) (wait time.Duration, ok bool, err error)
}

// admit takes a token for one call of tool name: from the shared limiter, under the
// credential's identity, when there is one and it answers; else from the local bucket.
func (d *Deps) admit(ctx context.Context, name string, tl *toolLimiter) (time.Duration, bool) {
	if d.SharedLimits != nil {
		wait, ok, err := d.SharedLimits.Admit(ctx, d.Client.Identity()+"\x00"+name, tl.cfg.Rate, tl.cfg.Burst)
		if err == nil {
			if !ok {
				tl.rejected.Add(1)
			}
			return wait, ok
		}
	}
	return tl.admit(d.now())
}
