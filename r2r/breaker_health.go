package r2r

import (
	"context"
	"time"

	"github.com/sony/gobreaker/v2"
)

// probeInterval is the least time between two probes an open breaker starts itself.
const probeInterval = time.Second

// probeTimeout bounds one of those probes.
const probeTimeout = 5 * time.Second

// Healthy records that a health check of R2R succeeded: an open or half-open breaker
// closes at once, so the first call after R2R is back goes through instead of failing
// fast for the rest of the cooldown, and a status never shows R2R healthy while calls are
// paused. A closed breaker is left as it is.
func (b *Breaker) Healthy() {
	b.healMu.Lock()
	defer b.healMu.Unlock()
	st := b.cb.Load().State()
	if st == gobreaker.StateClosed {
		return
	}
	// The generation first: from now on the old state machine's changes are ignored.
	gen := b.gen.Add(1)
	b.cb.Store(b.newCB(gen))
	b.transition(st.String(), gobreaker.StateClosed, "r2r circuit breaker closed: a health check of R2R succeeded")
}

// HealthProbe is middleware for a client that checks R2R's health without the breaker in
// its way (r2r_status's): every successful answer ends an open breaker (Healthy).
func (b *Breaker) HealthProbe() Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, call *Call) (*Response, error) {
			resp, err := next(ctx, call)
			if err == nil {
				b.Healthy()
			}
			return resp, err
		}
	}
}

// SetProbe gives the breaker its own health probe (usually a Health call on a client
// without the breaker): while open, a call turned away starts it in the background, at
// most once per probeInterval, and a success closes the breaker. Set it before use.
func (b *Breaker) SetProbe(probe func(context.Context) error) { b.probe = probe }

// probeSoon starts the probe unless one started less than probeInterval ago.
func (b *Breaker) probeSoon() {
	if b.probe == nil {
		return
	}
	now := time.Now().UnixNano()
	last := b.lastProbe.Load()
	if now-last < int64(probeInterval) || !b.lastProbe.CompareAndSwap(last, now) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		if b.probe(ctx) == nil {
			b.Healthy()
		}
	}()
}
