package httpserve

import (
	"fmt"
	"testing"
	"time"
)

// The throttle remembers at most its bound of addresses, whatever they do, and none whose
// checks all succeeded; an address that failed stays throttled while it is remembered.
func TestThrottleMemoryIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		addrs     int
		failures  int // refused checks per address; the rest succeed
		checks    int
		wantAtEnd int
	}{
		{"clean addresses leave nothing behind", 5000, 0, 3, 0},
		{"one failure each from many addresses", 5000, 1, 1, 100},
		{"addresses guessing until throttled", 5000, failAddrBurst + 5, failAddrBurst + 5, 100},
		{"a few guessing addresses", 20, failAddrBurst, failAddrBurst, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
			th := newCheckThrottle(func() time.Time { return now })
			th.max = 100
			for i := range tc.addrs {
				addr := fmt.Sprintf("10.%d.%d.%d", i>>16, (i>>8)&255, i&255)
				for j := range tc.checks {
					if _, _, ok := th.begin(addr); ok && j >= tc.failures {
						th.refund(addr)
					}
				}
				if n := th.remembered(); n > th.max {
					t.Fatalf("%d addresses remembered, bound %d", n, th.max)
				}
			}
			if n := th.remembered(); n != tc.wantAtEnd {
				t.Errorf("%d addresses remembered at the end, want %d", n, tc.wantAtEnd)
			}
			if tc.failures > failAddrBurst {
				last := fmt.Sprintf("10.%d.%d.%d", (tc.addrs-1)>>16, ((tc.addrs-1)>>8)&255, (tc.addrs-1)&255)
				if _, _, ok := th.begin(last); ok {
					t.Error("the last guessing address is no longer throttled")
				}
			}
		})
	}
}
