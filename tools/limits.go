package tools

import (
	"context"
	"fmt"
	"log/slog"
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

// RateClass groups tools by what a call costs R2R; each class has its own limit
// (RateLimits.PerClass). The zero class is every tool's.
type RateClass string

// RateLLM is the class of tools whose every call costs R2R a language model's answer.
const RateLLM RateClass = "llm"

// RateLimits configure one token bucket per tool. The zero value limits nothing.
type RateLimits struct {
	// Default applies to every tool whose class has no entry in PerClass.
	Default RateLimit
	// PerClass overrides Default by the tools' rate class (Tool.Rate).
	PerClass map[RateClass]RateLimit
}

// For returns the limit of the tools of class c.
func (r RateLimits) For(c RateClass) RateLimit {
	if l, ok := r.PerClass[c]; ok {
		return l
	}
	return r.Default
}

// rateLimiter applies the tools' rate limits: the call chain's last layer (limit), the
// gate a cached tool's load passes (admitR2R) and the figures r2r_status reports (stats).
type rateLimiter struct {
	local    *limiters
	shared   SharedLimiter    // nil = the local buckets only
	identity func() string    // the credential's, keying the shared buckets
	now      func() time.Time // of the local buckets
	logger   *slog.Logger
}

func newRateLimiter(cfg RateLimits, shared SharedLimiter, identity func() string, now func() time.Time, logger *slog.Logger) *rateLimiter {
	return &rateLimiter{local: newLimiters(cfg), shared: shared, identity: identity, now: now, logger: logger}
}

// limiters hold one token bucket per tool, created on first use.
type limiters struct {
	cfg RateLimits
	mu  sync.Mutex
	m   map[string]*toolLimiter
}

type toolLimiter struct {
	name     string // the tool's
	cfg      RateLimit
	lim      *rate.Limiter // nil = unlimited
	rejected atomic.Uint64
}

func newLimiters(cfg RateLimits) *limiters {
	return &limiters{cfg: cfg, m: map[string]*toolLimiter{}}
}

// get returns the bucket of tool name, of rate class class.
func (l *limiters) get(name string, class RateClass) *toolLimiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if tl, ok := l.m[name]; ok {
		return tl
	}
	c := l.cfg.For(class)
	tl := &toolLimiter{name: name, cfg: c}
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

// limit is the last layer of t's call chain: it applies t's rate limit and calls t's own
// handler with the call's value. A refused call gets an isError result at once (code -32004,
// retry_after from the bucket); it never waits for a token, so a flood of calls cannot pile
// up behind the limit. A Cached tool's call takes its token only when it is about to ask R2R
// (its call value carries the gate, which cachedLoad passes): cache hits are never refused,
// and a refused load comes back as the handler's own error result (a *rateRefusal).
func (r *rateLimiter) limit(t *Tool) server.ToolHandlerFunc {
	tl := r.local.get(t.Def.Name, t.Rate)
	run, spansAll := t.run, t.RemoteSpansAll
	if run == nil { // a tool built without its own handler (tests)
		h := t.Handler
		run = func(ctx context.Context, _ *call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return h(ctx, req)
		}
	}
	static := &call{spansAll: spansAll} // no gate: shared by every call
	switch {
	case tl.lim == nil:
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return run(ctx, static, req)
		}
	case t.Cached:
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return run(ctx, &call{spansAll: spansAll, gate: rateGate{r: r, tl: tl}}, req)
		}
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if wait, ok := r.admit(ctx, tl); !ok {
			return r.refused(ctx, tl, wait).result(), nil
		}
		return run(ctx, static, req)
	}
}

// rateGate admits one call to R2R on the first admit; later admits of the same call pass. A
// gate without a limiter (tl nil) admits everything.
type rateGate struct {
	r  *rateLimiter
	tl *toolLimiter

	mu       sync.Mutex
	admitted bool
	refusal  *rateRefusal
}

// admitR2R takes the call's rate-limit token before it asks R2R: a *rateRefusal when the
// bucket is empty. Calls without a limit at R2R (c nil: resources; tools limited up front)
// pass.
func admitR2R(ctx context.Context, c *call) error {
	if c == nil || c.gate.tl == nil {
		return nil
	}
	g := &c.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.admitted:
		return nil
	case g.refusal != nil:
		return g.refusal
	}
	wait, ok := g.r.admit(ctx, g.tl)
	if !ok {
		g.refusal = g.r.refused(ctx, g.tl, wait)
		return g.refusal
	}
	g.admitted = true
	return nil
}

// rateRefusal is a call refused by r2r-mcp's own rate limit; r2rErrorResult answers it with
// rateLimitedResult.
type rateRefusal struct {
	tool string
	cfg  RateLimit
	wait time.Duration
}

func (r *rateRefusal) Error() string { return "tools: " + r.tool + " rate limited" }

func (r *rateRefusal) result() *mcp.CallToolResult { return rateLimitedResult(r.tool, r.cfg, r.wait) }

// refused records that a call of tl's tool was refused for wait.
func (r *rateLimiter) refused(ctx context.Context, tl *toolLimiter, wait time.Duration) *rateRefusal {
	r.logger.DebugContext(ctx, "tool call refused by the rate limit", "tool", tl.name, "retry_after", wait)
	return &rateRefusal{tool: tl.name, cfg: tl.cfg, wait: wait}
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
func (r *rateLimiter) stats() map[string]map[string]any {
	r.local.mu.Lock()
	defer r.local.mu.Unlock()
	out := map[string]map[string]any{}
	for name, tl := range r.local.m {
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

// admit takes a token for one call of tl's tool: from the shared limiter, under the
// credential's identity, when there is one and it answers; else from the local bucket.
func (r *rateLimiter) admit(ctx context.Context, tl *toolLimiter) (time.Duration, bool) {
	if r.shared != nil {
		wait, ok, err := r.shared.Admit(ctx, r.identity()+"\x00"+tl.name, tl.cfg.Rate, tl.cfg.Burst)
		if err == nil {
			if !ok {
				tl.rejected.Add(1)
			}
			return wait, ok
		}
	}
	return tl.admit(r.now())
}
