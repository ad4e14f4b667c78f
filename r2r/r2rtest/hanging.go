package r2rtest

import (
	"net"
	"sync"
	"testing"
)

// NewHangingServer starts a listener on a loopback port that accepts connections and never
// answers: an R2R that is up at the TCP level but hung, for deadline and breaker tests. It
// returns the base URL; the listener and every accepted connection close at test cleanup.
func NewHangingServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String()
}
