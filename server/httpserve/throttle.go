package httpserve

import (
	"sync"
	"time"
)

// Failed credential checks allowed: per client address, a burst of failAddrBurst and then
// one per failAddrEvery; from all addresses together failAllBurst, then one per
// failAllEvery. Checks that succeed or that R2R could not answer cost nothing.
const (
	failAddrBurst = 10
	failAddrEvery = 6 * time.Second
	failAllBurst  = 100
	failAllEvery  = 600 * time.Millisecond
	// failAddrsMax bounds the addresses remembered.
	failAddrsMax = 10000
)

// bucket is a token bucket on an injectable clock.
type bucket struct {
	tokens float64
	at     time.Time
	warned bool // the address was told to wait and the warning is logged
}

func (b *bucket) fill(now time.Time, burst float64, every time.Duration) {
	if b.at.IsZero() {
		b.tokens = burst
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(burst, b.tokens+float64(d)/float64(every))
	}
	b.at = now
}

// wait is how long until b holds one token.
func (b *bucket) wait(every time.Duration) time.Duration {
	return time.Duration((1 - b.tokens) * float64(every))
}

// checkThrottle bounds failed credential checks (a key R2R rejected, a token that does not
// verify), so that guessing credentials costs the guesser time and R2R nothing. A check
// takes a token before it is made and gives it back unless the credential was refused.
type checkThrottle struct {
	now func() time.Time

	mu   sync.Mutex
	addr map[string]*bucket
	all  bucket
}

func newCheckThrottle(now func() time.Time) *checkThrottle {
	return &checkThrottle{now: now, addr: map[string]*bucket{}}
}

// begin takes a token for one check of a credential from addr. When the address (or every
// address together) has failed too often, ok is false, wait says when to try again and
// first is true the first time in a row addr is refused (to log it once).
func (t *checkThrottle) begin(addr string) (wait time.Duration, first, ok bool) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.addr[addr]
	if b == nil {
		t.makeRoomLocked(now)
		b = &bucket{}
		t.addr[addr] = b
	}
	b.fill(now, failAddrBurst, failAddrEvery)
	t.all.fill(now, failAllBurst, failAllEvery)
	switch {
	case b.tokens < 1:
		wait = b.wait(failAddrEvery)
	case t.all.tokens < 1:
		wait = t.all.wait(failAllEvery)
	default:
		b.tokens--
		t.all.tokens--
		b.warned = false
		return 0, false, true
	}
	first = !b.warned
	b.warned = true
	return wait, first, false
}

// refund gives back the token of a check whose credential was not refused.
func (t *checkThrottle) refund(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.addr[addr]; b != nil {
		b.tokens = min(failAddrBurst, b.tokens+1)
	}
	t.all.tokens = min(failAllBurst, t.all.tokens+1)
}

// makeRoomLocked keeps at most failAddrsMax addresses: first those whose buckets are full
// again (the same as unknown) go, then any.
func (t *checkThrottle) makeRoomLocked(now time.Time) {
	if len(t.addr) < failAddrsMax {
		return
	}
	for k, b := range t.addr {
		if b.fill(now, failAddrBurst, failAddrEvery); b.tokens >= failAddrBurst {
			delete(t.addr, k)
		}
	}
	for k := range t.addr {
		if len(t.addr) < failAddrsMax {
			break
		}
		delete(t.addr, k)
	}
}
