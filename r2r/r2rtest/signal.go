package r2rtest

import (
	"testing"
	"time"
)

// signal tells waiters that something changed: its channel is closed at each event and a
// new one made at the next wait. The owner guards it with its own mutex.
type signal struct{ ch chan struct{} }

// wait returns the channel the next event closes.
func (s *signal) wait() <-chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// fire closes the channel of the waiters so far.
func (s *signal) fire() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// AwaitTimeout bounds Await: far above any wait of a passing test, so only a broken one
// reaches it.
const AwaitTimeout = 20 * time.Second

// Await waits until cond holds, checking it at once and again each time the channel
// changed returns is closed (Emulator.Changed, SyncBuffer.Changed); it fails the test
// after AwaitTimeout.
func Await(t testing.TB, changed func() <-chan struct{}, cond func() bool, what string) {
	t.Helper()
	timeout := time.After(AwaitTimeout)
	for {
		next := changed() // before cond, so a change in between is not missed
		if cond() {
			return
		}
		select {
		case <-next:
		case <-timeout:
			t.Fatalf("timed out after %s waiting for %s", AwaitTimeout, what)
		}
	}
}
