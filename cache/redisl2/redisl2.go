// Package redisl2 is the state serve --http replicas share through Redis: a second-level
// results cache behind the in-process ristretto cache, collection generations (a write
// through one replica invalidates the cached results of every replica at once), per-user
// rate limits (GCRA), search histories and the state of sync jobs.
//
// Redis is an optimisation, never a dependency of a call: when it fails or is slow, the
// replica answers from its own memory (L1, local generations, local token buckets), counts
// the failure and skips Redis for a second before trying again. Generation bumps made while
// Redis was away are replayed when it is back.
package redisl2

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Observer counts what the Redis layer does; *metrics.Metrics implements it.
type Observer interface {
	CacheLookup(layer string, hit bool)
	RedisError(op string)
}

// Options configure Open. Zero values take the defaults.
type Options struct {
	// Prefix starts every key; "" = "r2r-mcp:".
	Prefix string
	// Timeout bounds one Redis operation; 0 = 100 ms. Redis on the same network answers
	// in well under a millisecond; a slower answer costs the call more than a miss.
	Timeout time.Duration
	// Backoff is how long Redis is skipped after a failure; 0 = 1 s.
	Backoff time.Duration
	// Observer counts lookups and failures; nil = none.
	Observer Observer
	// Logger receives one line when Redis goes away and when it is back; nil = discard.
	Logger *slog.Logger
	// Now is the clock of the rate limiter; nil = time.Now.
	Now func() time.Time
}

// Store is a connection to Redis with the fallback rules above. It is safe for concurrent
// use.
type Store struct {
	rdb     *redis.Client
	prefix  string
	timeout time.Duration
	backoff time.Duration
	obs     Observer
	log     *slog.Logger
	now     func() time.Time

	downUntil atomic.Int64 // unix nanoseconds; Redis is skipped before it
	down      atomic.Bool  // for logging the transitions once

	mu      sync.Mutex
	pending map[string]bool // generation bumps to replay ("" key = global)
}

// ErrUnavailable is returned while Redis is skipped after a failure.
var ErrUnavailable = errors.New("redisl2: Redis unavailable")

// Open parses url (redis://[user:password@]host:port/db, rediss:// for TLS) and returns a
// Store. It does no network I/O: connections are made on first use.
func Open(url string, o Options) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: never repeat it.
		return nil, errors.New("the Redis URL does not parse; want redis://host:port/db or rediss://…")
	}
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Millisecond
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Prefix == "" {
		o.Prefix = "r2r-mcp:"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	// Fail fast and let the caller fall back: no retries, short dial and I/O timeouts.
	opt.MaxRetries = -1
	opt.DialerRetries = 1
	opt.DialTimeout = 2 * o.Timeout
	opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = o.Timeout, o.Timeout, o.Timeout
	opt.ContextTimeoutEnabled = true
	// go-redis reports dial failures through a process-wide logger that writes to stderr;
	// they are counted and logged by do instead.
	setLogger.Do(func() { redis.SetLogger(quietLogger{}) })
	return &Store{rdb: redis.NewClient(opt), prefix: o.Prefix, timeout: o.Timeout, backoff: o.Backoff,
		obs: o.Observer, log: o.Logger, now: o.Now, pending: map[string]bool{}}, nil
}

// Close closes the connections.
func (s *Store) Close() error { return s.rdb.Close() }

// Ping checks that Redis answers (for /readyz); it ignores the backoff.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*s.timeout)
	defer cancel()
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("Redis does not answer: %v", redactErr(err))
	}
	return nil
}

// do runs one Redis operation under the timeout and the backoff. A failure is counted
// under op, starts the backoff and is returned; while backing off, ErrUnavailable is
// returned at once.
func (s *Store) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	if s.now().UnixNano() < s.downUntil.Load() {
		return ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	err := f(ctx)
	if err == nil || errors.Is(err, redis.Nil) {
		if s.down.CompareAndSwap(true, false) {
			s.log.Info("Redis is back; using it again")
		}
		return err
	}
	if s.obs != nil {
		s.obs.RedisError(op)
	}
	s.downUntil.Store(s.now().Add(s.backoff).UnixNano())
	if s.down.CompareAndSwap(false, true) {
		s.log.Warn("Redis failed; serving from memory only", "op", op, "error", redactErr(err), "retry_in", s.backoff)
	}
	return err
}

// redactErr describes a Redis error without anything from the URL but the address.
func redactErr(err error) string {
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		return "timeout"
	}
	return err.Error()
}

func (s *Store) key(parts ...string) string {
	k := s.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

func hexKey(b string) string { return hex.EncodeToString([]byte(b)) }

var setLogger sync.Once

// quietLogger drops go-redis's own log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
