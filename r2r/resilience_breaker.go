package r2r

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Breaker defaults.
const (
	DefaultBreakerFailures          = 5
	DefaultBreakerCooldown          = 60 * time.Second
	DefaultBreakerHalfOpenSuccesses = 2
	DefaultBreakerHangThreshold     = 10 * time.Second
)

// halfOpenRetryAfter is suggested to calls turned away while the half-open probes run.
const halfOpenRetryAfter = time.Second

// maxTransitions is how many state changes BreakerState keeps.
const maxTransitions = 10

// BreakerSettings configure a Breaker. Zero fields take the defaults above; the fields
// tagged knob are serve flags (see server/knob).
type BreakerSettings struct {
	// Failures is the number of consecutive failed calls (transport errors, 5xx, hangs;
	// with Resilient, each after its retries) that open the breaker.
	Failures uint32 `knob:"breaker-failures" default:"5" min:"1" max:"1000" help:"failed R2R calls in a row (after their retries) that open the circuit breaker"`
	// Cooldown is how long the breaker stays open before letting probes through (half-open).
	Cooldown time.Duration `knob:"breaker-cooldown" default:"60s" min:"1ms" max:"24h" help:"how long an open breaker fails calls fast (-32003 with retry_after) before probing R2R again"`
	// HalfOpenSuccesses is the number of probes let through while half-open; that many
	// successes close the breaker, one failure opens it again.
	HalfOpenSuccesses uint32 `knob:"breaker-successes" default:"2" min:"1" max:"100" help:"successful probes that close the breaker again"`
	// HangThreshold: a call that ran into its caller's deadline after waiting at least this
	// long for R2R counts as a failure (R2R hangs). A shorter wait is the caller's choice of
	// deadline and does not count, nor does a cancellation.
	HangThreshold time.Duration
}

func (s BreakerSettings) withDefaults() BreakerSettings {
	if s.Failures == 0 {
		s.Failures = DefaultBreakerFailures
	}
	if s.Cooldown <= 0 {
		s.Cooldown = DefaultBreakerCooldown
	}
	if s.HalfOpenSuccesses == 0 {
		s.HalfOpenSuccesses = DefaultBreakerHalfOpenSuccesses
	}
	if s.HangThreshold <= 0 {
		s.HangThreshold = DefaultBreakerHangThreshold
	}
	return s
}

// Transition is one change of a breaker's state.
type Transition struct {
	From string    `json:"from"`
	To   string    `json:"to"`
	At   time.Time `json:"at"`
}

// BreakerState is a snapshot of a Breaker for r2r_status.
type BreakerState struct {
	URL   string `json:"url"`
	State string `json:"state"` // "closed", "open" or "half-open"
	// ConsecutiveFailures counts the current run of failures while closed; while open, the
	// run that opened it (1 when a half-open probe failed).
	ConsecutiveFailures uint32 `json:"consecutive_failures"`
	// OpenedAt is when the breaker last opened; zero if it never did.
	OpenedAt time.Time `json:"opened_at,omitzero"`
	// RetryAfter is the time left until half-open while open; 0 otherwise.
	RetryAfter time.Duration `json:"retry_after,omitzero"`
	// Transitions are the last state changes, oldest first.
	Transitions []Transition `json:"transitions,omitempty"`
}

// String is a one-line summary, e.g. "open (5 consecutive failures; half-open in 42s)".
func (s BreakerState) String() string {
	switch {
	case s.State == "open":
		return "open (" + failuresText(s.ConsecutiveFailures) + "; half-open in " + secondsText(s.RetryAfter) + ")"
	case s.State == "half-open":
		return "half-open (probing R2R)"
	case s.ConsecutiveFailures > 0:
		return s.State + " (" + failuresText(s.ConsecutiveFailures) + ")"
	}
	return s.State
}

func failuresText(n uint32) string {
	if n == 1 {
		return "1 failure"
	}
	return strconv.FormatUint(uint64(n), 10) + " consecutive failures"
}

// secondsText rounds d up to whole seconds: "42s".
func secondsText(d time.Duration) string {
	return strconv.FormatInt(ceilSeconds(d), 10) + "s"
}

func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// Breaker is a circuit breaker for one R2R server (sony/gobreaker). It counts transport
// errors, 5xx answers and hangs as failures; 4xx answers prove R2R is up and count as
// successes; the caller's cancellations and short deadlines do not count. While open,
// calls fail at once with an *Error wrapping ErrCircuitOpen whose RetryAfter is the time
// left until half-open and whose Err is a *BreakerRejection. Safe for concurrent use.
type Breaker struct {
	url string
	set BreakerSettings
	// cb is replaced by a fresh, closed one when a health check succeeds (Healthy).
	cb  atomic.Pointer[gobreaker.CircuitBreaker[*Response]]
	gen atomic.Uint64 // generation of cb; state changes of a replaced one are ignored
	// healMu serialises Healthy.
	healMu sync.Mutex
	log    *slog.Logger

	probe     func(context.Context) error // see SetProbe
	lastProbe atomic.Int64                // unix nanos of the last probe started

	openedAt     atomic.Int64  // unix nanos of the last opening; 0 = never
	tripFailures atomic.Uint32 // the failure run that caused the last opening

	mu          sync.Mutex // guards transitions; taken inside gobreaker's lock, never around it
	transitions []Transition
}

// errExcluded tells gobreaker to count a call neither as success nor as failure; the
// middleware keeps the real error.
var errExcluded = errors.New("r2r: not counted by the breaker")

// NewBreaker returns a breaker for the R2R server at url (used in logs and State; it must
// not carry credentials). Zero settings take the defaults.
func NewBreaker(url string, s BreakerSettings, logger *slog.Logger) *Breaker {
	s = s.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	b := &Breaker{url: url, set: s, log: logger}
	b.cb.Store(b.newCB(0))
	return b
}

// newCB builds the gobreaker state machine of generation gen.
func (b *Breaker) newCB(gen uint64) *gobreaker.CircuitBreaker[*Response] {
	s := b.set
	return gobreaker.NewCircuitBreaker[*Response](gobreaker.Settings{
		Name:        strconv.FormatUint(gen, 10),
		MaxRequests: s.HalfOpenSuccesses,
		Timeout:     s.Cooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			if c.ConsecutiveFailures >= s.Failures {
				b.tripFailures.Store(c.ConsecutiveFailures)
				return true
			}
			return false
		},
		OnStateChange: b.onStateChange,
		IsExcluded:    func(err error) bool { return err == errExcluded },
	})
}

var breakers sync.Map // normalised base URL → *Breaker

// BreakerFor returns the process-wide breaker for the R2R server at baseURL, creating it
// with s and logger on first use (later settings are ignored). Every Client talking to the
// same R2R then shares one view of its health, whichever code path built the Client.
func BreakerFor(baseURL string, s BreakerSettings, logger *slog.Logger) *Breaker {
	key, err := NormalizeBaseURL(baseURL)
	if err != nil {
		key = "invalid R2R URL" // never echo an unparsable URL: it might hold a secret
	}
	if b, ok := breakers.Load(key); ok {
		return b.(*Breaker)
	}
	b, _ := breakers.LoadOrStore(key, NewBreaker(key, s, logger))
	return b.(*Breaker)
}

// Settings returns the effective settings (defaults applied).
func (b *Breaker) Settings() BreakerSettings { return b.set }

// Middleware returns the breaker as a Middleware. Put it outside Retry (see Resilient), so
// that it judges each call by its outcome after the retries.
func (b *Breaker) Middleware() Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, call *Call) (*Response, error) {
			start := time.Now()
			var callErr error
			resp, err := b.cb.Load().Execute(func() (*Response, error) {
				resp, err := next(ctx, call)
				if err == nil {
					return resp, nil
				}
				callErr = err
				switch b.classify(ctx, err, start) {
				case outcomeSuccess:
					return resp, nil
				case outcomeExcluded:
					return resp, errExcluded
				}
				return resp, err
			})
			switch {
			case callErr != nil:
				return resp, callErr
			case err == nil:
				return resp, nil
			case err == gobreaker.ErrOpenState:
				b.probeSoon()
				return nil, b.rejection(call, false)
			case err == gobreaker.ErrTooManyRequests:
				return nil, b.rejection(call, true)
			}
			return resp, err
		}
	}
}

type outcome int

const (
	outcomeFailure  outcome = iota // R2R is unwell
	outcomeSuccess                 // R2R answered (a 4xx is the caller's fault)
	outcomeExcluded                // says nothing about R2R
)

func (b *Breaker) classify(ctx context.Context, err error, start time.Time) outcome {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return outcomeExcluded // failed before reaching R2R, e.g. credentials could not be applied
	}
	switch {
	case e.StatusCode == http.StatusInternalServerError && e.ErrorType != "":
		// R2R's own error body: R2R is up and answered. R2R reports many caller mistakes
		// (an invalid filter, an unknown model for RAG) as 500, and five of those in a row
		// must not pause every tool.
		return outcomeSuccess
	case e.StatusCode >= http.StatusInternalServerError:
		return outcomeFailure
	case e.StatusCode != 0:
		return outcomeSuccess
	case errors.Is(e.Err, ErrCircuitOpen):
		return outcomeExcluded
	case errors.Is(e.Err, context.Canceled):
		return outcomeExcluded
	case errors.Is(e.Err, context.DeadlineExceeded):
		if ctx.Err() != nil && time.Since(start) < b.set.HangThreshold {
			return outcomeExcluded
		}
	}
	return outcomeFailure
}

// BreakerRejection is the cause (Error.Err) of a call a breaker turned away without
// sending it. errors.Is(r, ErrCircuitOpen) is true.
type BreakerRejection struct {
	URL string // the breaker's R2R URL
	// Failures is the run of failed calls that opened the breaker: 1 when a half-open
	// probe failed, 0 while half-open.
	Failures uint32
	// HalfOpen: the breaker is probing R2R with a few calls and turned this one away.
	HalfOpen bool
	// RetryAfter is the time until the breaker lets calls through again.
	RetryAfter time.Duration
}

func (r *BreakerRejection) Error() string { return ErrCircuitOpen.Error() }

// Is makes errors.Is(err, ErrCircuitOpen) true.
func (r *BreakerRejection) Is(target error) bool { return target == ErrCircuitOpen }

// rejection builds the error for a call the breaker turned away without sending it.
func (b *Breaker) rejection(call *Call, halfOpen bool) *Error {
	var buf [128]byte
	msg := buf[:0]
	wait := halfOpenRetryAfter
	var n uint32
	if halfOpen {
		msg = append(msg, "circuit breaker half-open: R2R is being probed; try again in "...)
	} else {
		wait = max(b.remaining(time.Now()), time.Millisecond)
		msg = append(msg, "circuit breaker open after "...)
		if n = b.tripFailures.Load(); n == 1 {
			msg = append(msg, "a failed probe"...)
		} else {
			msg = strconv.AppendUint(msg, uint64(n), 10)
			msg = append(msg, " consecutive failures"...)
		}
		msg = append(msg, "; R2R calls are paused for "...)
	}
	msg = strconv.AppendInt(msg, ceilSeconds(wait), 10)
	msg = append(msg, 's')
	return &Error{Op: call.Op, Method: call.Method, Path: call.Path, Message: string(msg),
		RetryAfter: wait, Err: &BreakerRejection{URL: b.url, Failures: n, HalfOpen: halfOpen, RetryAfter: wait}}
}

// remaining is the time left until half-open, measured from the last opening.
func (b *Breaker) remaining(now time.Time) time.Duration {
	at := b.openedAt.Load()
	if at == 0 {
		return 0
	}
	return max(time.Unix(0, at).Add(b.set.Cooldown).Sub(now), 0)
}

// onStateChange runs under gobreaker's lock: it must not call back into b.cb.
func (b *Breaker) onStateChange(name string, from, to gobreaker.State) {
	if name != strconv.FormatUint(b.gen.Load(), 10) {
		return // a breaker replaced by Healthy: its late calls say nothing now
	}
	b.transition(from.String(), to, "")
}

// transition records and logs a change of state; why, when set, replaces the usual log
// message of a closing.
func (b *Breaker) transition(from string, to gobreaker.State, why string) {
	now := time.Now()
	if to == gobreaker.StateOpen {
		if from == gobreaker.StateHalfOpen.String() {
			b.tripFailures.Store(1)
		}
		b.openedAt.Store(now.UnixNano())
	}
	b.mu.Lock()
	b.transitions = append(b.transitions, Transition{From: from, To: to.String(), At: now})
	if n := len(b.transitions); n > maxTransitions {
		b.transitions = slices.Delete(b.transitions, 0, n-maxTransitions)
	}
	b.mu.Unlock()

	attrs := []slog.Attr{slog.String("url", b.url), slog.String("from", from), slog.String("to", to.String())}
	switch to {
	case gobreaker.StateOpen:
		attrs = append(attrs, slog.Int("consecutive_failures", int(b.tripFailures.Load())),
			slog.Duration("cooldown", b.set.Cooldown))
		b.log.LogAttrs(context.Background(), slog.LevelWarn,
			"r2r circuit breaker opened: R2R calls fail fast until the cooldown ends", attrs...)
	case gobreaker.StateHalfOpen:
		b.log.LogAttrs(context.Background(), slog.LevelInfo, "r2r circuit breaker half-open: probing R2R", attrs...)
	default:
		if why == "" {
			why = "r2r circuit breaker closed: R2R is back"
		}
		b.log.LogAttrs(context.Background(), slog.LevelInfo, why, attrs...)
	}
}

// State returns a snapshot. Reading it also moves an open breaker whose cooldown ended to
// half-open, as the next call would.
func (b *Breaker) State() BreakerState {
	cb := b.cb.Load()
	st := cb.State()
	out := BreakerState{URL: b.url, State: st.String()}
	if at := b.openedAt.Load(); at != 0 {
		out.OpenedAt = time.Unix(0, at)
	}
	switch st {
	case gobreaker.StateOpen:
		out.ConsecutiveFailures = b.tripFailures.Load()
		out.RetryAfter = b.remaining(time.Now())
	default:
		out.ConsecutiveFailures = cb.Counts().ConsecutiveFailures
	}
	b.mu.Lock()
	out.Transitions = slices.Clone(b.transitions)
	b.mu.Unlock()
	return out
}

// Summary is State().String(), shaped for tools.Deps.Breaker.
func (b *Breaker) Summary() string { return b.State().String() }
