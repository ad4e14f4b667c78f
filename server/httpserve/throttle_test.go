package httpserve_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// listFrom sends r2r_list_collections with key as if from the client at addr.
func listFrom(h http.Handler, addr, key string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp/invoke", strings.NewReader(`{"tool":"r2r_list_collections","arguments":{}}`))
	req.RemoteAddr = addr + ":40000"
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func randomKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "pk_" + hex.EncodeToString(b)
}

// Guessing keys over HTTP is throttled per client address and logged without the keys:
// after 10 refused keys an address gets 429 with Retry-After and R2R is not asked again
// until the address has waited; a known key, and another address's key, are not affected.
func TestKeyGuessingIsThrottled(t *testing.T) {
	tm := newTeam(t)
	clock := &fakeClock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	logs := &syncBuffer{}
	rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) {
		o.Now = clock.Now
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	h := rep.Handler
	const attacker, colleague = "198.51.100.7", "203.0.113.9"
	if rec := listFrom(h, attacker, tm.Alice.Key); rec.Code != http.StatusOK { // alice works from the attacker's network too
		t.Fatalf("alice: %d %s", rec.Code, rec.Body)
	}
	before := tm.Emu.Count("GET /v3/users/me")
	var guesses []string
	statuses := map[int]int{}
	for range 300 {
		k := randomKey()
		guesses = append(guesses, k)
		rec := listFrom(h, attacker, k)
		statuses[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if statuses[http.StatusUnauthorized] != 10 || statuses[http.StatusTooManyRequests] != 290 {
		t.Errorf("300 guessed keys from one address: %v, want 10×401 and 290×429", statuses)
	}
	if n := tm.Emu.Count("GET /v3/users/me") - before; n != 10 {
		t.Errorf("300 guessed keys cost R2R %d key checks, want 10", n)
	}
	if rec := listFrom(h, attacker, tm.Alice.Key); rec.Code != http.StatusOK {
		t.Errorf("alice's known key from the throttled address: %d", rec.Code)
	}
	if rec := listFrom(h, colleague, tm.Bob.Key); rec.Code != http.StatusOK {
		t.Errorf("bob's new key from another address: %d %s", rec.Code, rec.Body)
	}
	// The address gets one more guess per 6 s.
	clock.Add(6 * time.Second)
	if rec := listFrom(h, attacker, randomKey()); rec.Code != http.StatusUnauthorized {
		t.Errorf("a guess after waiting: %d, want 401", rec.Code)
	}
	if rec := listFrom(h, attacker, randomKey()); rec.Code != http.StatusTooManyRequests {
		t.Errorf("the next guess at once: %d, want 429", rec.Code)
	}

	// One guess from each of many addresses: each is checked, none locked out by the others.
	clock.Add(time.Hour)
	before = tm.Emu.Count("GET /v3/users/me")
	for i := range 150 {
		if rec := listFrom(h, fmt.Sprintf("10.1.%d.%d", i/100, i%100), randomKey()); rec.Code != http.StatusUnauthorized {
			t.Fatalf("the first guess of address %d: %d, want 401", i, rec.Code)
		}
	}
	if n := tm.Emu.Count("GET /v3/users/me") - before; n != 150 {
		t.Errorf("150 guesses from 150 addresses cost R2R %d key checks, want 150", n)
	}

	out := logs.String()
	if !strings.Contains(out, "R2R rejected a credential") || !strings.Contains(out, "too many refused credentials") ||
		!strings.Contains(out, attacker) {
		t.Errorf("no warning names the guessing address (%d bytes of log)", len(out))
	}
	if n := strings.Count(out, "too many refused credentials"); n > 200 {
		t.Errorf("the throttle warning was logged %d times; once per address and episode is enough", n)
	}
	for _, k := range append(guesses, tm.Alice.Key, tm.Bob.Key) {
		if strings.Contains(out, k) || strings.Contains(out, k[3:]) {
			t.Fatalf("a key reached the log")
		}
	}
}

// Failed checks are limited per client address only: addresses that used up their own
// allowance (14 loopback addresses × 11 bad keys) lock out no other address, whose new
// valid credential is checked and accepted and whose bad key is refused as such (401, not
// 429); a known key works from anywhere.
func TestOneAddressDoesNotLockOutAnother(t *testing.T) {
	tm := newTeam(t)
	for _, tc := range []struct {
		name string
		from string // the client after the guessing
		cred func(tm *team) string
		want int
	}{
		{"a new access token from a clean address", "127.0.0.99", func(tm *team) string { return accessToken(t, tm, tm.Bob) }, http.StatusOK},
		{"a new API key from a clean address", "127.0.0.99", func(tm *team) string { return tm.Bob.Key }, http.StatusOK},
		{"a bad key from a clean address", "::1", func(*team) string { return randomKey() }, http.StatusUnauthorized},
		{"a known key from a guessing address", "127.0.0.2", func(tm *team) string { return tm.Alice.Key }, http.StatusOK},
		{"a new key from a guessing address", "127.0.0.3", func(tm *team) string { return tm.Bob.Key }, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
			rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) { o.Now = clock.Now })
			if rec := listFrom(rep.Handler, "127.0.0.2", tm.Alice.Key); rec.Code != http.StatusOK {
				t.Fatalf("alice: %d %s", rec.Code, rec.Body)
			}
			refused := map[int]int{}
			for i := range 14 {
				for range 11 {
					refused[listFrom(rep.Handler, fmt.Sprintf("127.0.0.%d", 2+i), randomKey()).Code]++
				}
			}
			if refused[http.StatusUnauthorized] != 140 || refused[http.StatusTooManyRequests] != 14 {
				t.Errorf("14 addresses × 11 bad keys: %v, want 140×401 and 14×429", refused)
			}
			if rec := listFrom(rep.Handler, tc.from, tc.cred(tm)); rec.Code != tc.want {
				t.Errorf("got %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}
