package httpserve

import (
	"sync"
	"time"
)

// Failed credential checks allowed per client address: a burst of failAddrBurst, then one
// per failAddrEvery. Checks that succeed or that R2R could not answer cost nothing. There
// is no bound over all addresses together: it would let a few guessing addresses turn away
// everybody else's new credentials.
const (
	failAddrBurst = 10
	failAddrEvery = 6 * time.Second
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
// verify) per client address, so that guessing credentials costs the guesser time and R2R
// nothing. A check takes a token before it is made (so checks made at once cannot exceed
// the burst) and gives it back unless the credential was refused. Only addresses with a
// token missing are remembered: a full bucket is the same as none.
type checkThrottle struct {
	now func() time.Time
	max int // addresses remembered at most

	mu   sync.Mutex
	addr map[string]*bucket
}

func newCheckThrottle(now func() time.Time) *checkThrottle {
	return &checkThrottle{now: now, max: failAddrsMax, addr: map[string]*bucket{}}
}

// begin takes a token for one check of a credential from addr. When the address has
// failed too often, ok is false, wait says when to try again and first is true the first
// time in a row addr is refused (to log it once).
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
	if b.tokens >= 1 {
		b.tokens--
		b.warned = false
		return 0, false, true
	}
	first = !b.warned
	b.warned = true
	return b.wait(failAddrEvery), first, false
}

// refund gives back the token of a check whose credential was not refused.
func (t *checkThrottle) refund(addr string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.addr[addr]
	if b == nil {
		return
	}
	b.fill(now, failAddrBurst, failAddrEvery)
	if b.tokens = min(failAddrBurst, b.tokens+1); b.tokens >= failAddrBurst {
		delete(t.addr, addr)
	}
}

// remembered is how many addresses are remembered.
func (t *checkThrottle) remembered() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.addr)
}

// makeRoomLocked keeps fewer than max addresses so that one more fits: those whose buckets
// are full again (the same as unknown) go first, then the one holding the most tokens,
// which forgetting favours least.
func (t *checkThrottle) makeRoomLocked(now time.Time) {
	if len(t.addr) < t.max {
		return
	}
	var most string
	mostTokens := -1.0
	for k, b := range t.addr {
		if b.fill(now, failAddrBurst, failAddrEvery); b.tokens >= failAddrBurst {
			delete(t.addr, k)
		} else if b.tokens > mostTokens {
			most, mostTokens = k, b.tokens
		}
	}
	if len(t.addr) >= t.max {
		delete(t.addr, most)
	}
}
