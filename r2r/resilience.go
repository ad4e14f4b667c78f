package r2r

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// ErrCircuitOpen is wrapped by the *Error a Breaker returns instead of sending a request
// while R2R is considered down. Its RetryAfter says when the breaker lets a probe through.
var ErrCircuitOpen = errors.New("r2r: circuit breaker open")

// Retry defaults. The number of retries has none: serve's default is its knob's.
const (
	DefaultInitialInterval     = 200 * time.Millisecond
	DefaultMaxInterval         = 5 * time.Second
	DefaultMultiplier          = 2.0
	DefaultRandomizationFactor = 0.5
	DefaultMaxRetryAfter       = 30 * time.Second
)

// RetryPolicy configures the Retry middleware. Zero fields but MaxRetries take the
// defaults above; the fields tagged knob are serve flags (see server/knob).
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt; 0 = never retry.
	MaxRetries int `knob:"retry-max" default:"3" min:"0" max:"10" help:"retries of a read (search, RAG, GET) after a network error, 429, 502, 503 or 504; writes are never retried; 0 = none"`
	// InitialInterval, MaxInterval, Multiplier and RandomizationFactor shape the exponential
	// backoff with jitter (cenkalti/backoff semantics: wait i is
	// InitialInterval·Multiplier^i ± RandomizationFactor, capped at MaxInterval).
	InitialInterval     time.Duration `knob:"retry-wait" default:"200ms" min:"1ms" max:"10s" help:"first wait before a retry, doubling with jitter; a Retry-After from R2R wins"`
	MaxInterval         time.Duration
	Multiplier          float64
	RandomizationFactor float64
	// MaxRetryAfter caps how long a Retry-After from R2R is waited for; a longer one ends
	// the retries (the caller gets the error with its RetryAfter). 0 = DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration

	// sleep waits d or until ctx ends; nil = a timer. Tests replace it to observe waits.
	sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.InitialInterval <= 0 {
		p.InitialInterval = DefaultInitialInterval
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = DefaultMaxInterval
	}
	if p.Multiplier < 1 {
		p.Multiplier = DefaultMultiplier
	}
	if p.RandomizationFactor <= 0 || p.RandomizationFactor >= 1 {
		p.RandomizationFactor = DefaultRandomizationFactor
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.sleep == nil {
		p.sleep = sleepCtx
	}
	return p
}

func (p RetryPolicy) newBackOff() *backoff.ExponentialBackOff {
	return backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(p.InitialInterval),
		backoff.WithMaxInterval(p.MaxInterval),
		backoff.WithMultiplier(p.Multiplier),
		backoff.WithRandomizationFactor(p.RandomizationFactor),
		backoff.WithMaxElapsedTime(0), // the attempt count and the ctx deadline bound the retries
	)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Retry returns a middleware that resends idempotent calls (Call.Idempotent: GET, search,
// rag) after transport errors, 429, 502, 503 and 504, at most p.MaxRetries times, with
// exponential backoff and jitter. A Retry-After from R2R replaces the backoff wait. It never
// waits past the call's deadline: when the next wait would end after it, the last error is
// returned at once. It stops at once when the caller's context ends, and it never resends
// an error that is not Retryable (a rejection by an open circuit breaker included, should
// one sit inside it). Non-idempotent calls pass through untouched.
func Retry(p RetryPolicy, logger *slog.Logger) Middleware {
	p = p.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(next Handler) Handler {
		if p.MaxRetries <= 0 {
			return next
		}
		return func(ctx context.Context, call *Call) (*Response, error) {
			resp, err := next(ctx, call)
			if err == nil || !call.Idempotent {
				return resp, err
			}
			var bo *backoff.ExponentialBackOff // built on the first retry: no cost on success
			for retry := 1; retry <= p.MaxRetries; retry++ {
				e, ok := retryableError(ctx, err)
				if !ok {
					return resp, err
				}
				if bo == nil {
					bo = p.newBackOff()
				}
				wait := bo.NextBackOff()
				if e.RetryAfter > 0 {
					if e.RetryAfter > p.MaxRetryAfter {
						logger.LogAttrs(ctx, slog.LevelInfo, "r2r retry abandoned: Retry-After too long",
							slog.String("op", call.Op), slog.Int("status", e.StatusCode),
							slog.Duration("retry_after", e.RetryAfter))
						return resp, err
					}
					wait = e.RetryAfter
				}
				if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
					logger.LogAttrs(ctx, slog.LevelInfo, "r2r retry abandoned: wait would pass the deadline",
						slog.String("op", call.Op), slog.Int("status", e.StatusCode),
						slog.Duration("wait", wait), slog.Duration("remaining", time.Until(dl)))
					return resp, err
				}
				logger.LogAttrs(ctx, slog.LevelInfo, "r2r call failed, retrying",
					slog.String("op", call.Op), slog.Int("status", e.StatusCode),
					slog.Int("retry", retry), slog.Duration("wait", wait), slog.String("error", e.Error()))
				if serr := p.sleep(ctx, wait); serr != nil {
					return nil, &Error{Op: call.Op, Method: call.Method, Path: call.Path, Err: serr}
				}
				resp, err = next(ctx, call)
				if err == nil {
					return resp, nil
				}
			}
			return resp, err
		}
	}
}

// retryableError reports whether err may go away on a resend: an *Error that is
// Retryable, while the caller's context is still alive.
func retryableError(ctx context.Context, err error) (*Error, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	e, ok := errors.AsType[*Error](err)
	if !ok || !e.Retryable() {
		return nil, false
	}
	return e, true
}

// ResilienceOptions configure Resilient.
type ResilienceOptions struct {
	// URL is R2R's base URL; it selects the process-wide breaker (BreakerFor) when Breaker
	// is nil.
	URL string
	// Retry configures the retries; the zero value takes the defaults.
	Retry RetryPolicy
	// Breaker is the circuit breaker to use; nil = BreakerFor(URL, BreakerSettings, Logger).
	Breaker *Breaker
	// BreakerSettings configure the breaker BreakerFor creates; ignored when Breaker is set
	// or a breaker for URL already exists.
	BreakerSettings BreakerSettings
	// Logger receives retry and breaker state-change lines; nil = discard.
	Logger *slog.Logger
}

// Resilient returns the middleware chain for Options.Middleware: the circuit breaker
// outermost, Retry inside it. The breaker therefore counts CALLS, each after its retries:
// against an R2R that is up but flaky, a call fails only when every attempt failed, so the
// breaker opens only when several calls in a row found R2R unusable, not after a handful
// of unlucky attempts. An R2R that is down fails every call and still opens it after
// BreakerSettings.Failures calls. While open, calls are rejected before any attempt, so
// nothing is retried either.
func Resilient(o ResilienceOptions) []Middleware {
	b := o.Breaker
	if b == nil {
		b = BreakerFor(o.URL, o.BreakerSettings, o.Logger)
	}
	return []Middleware{b.Middleware(), Retry(o.Retry, o.Logger)}
}
