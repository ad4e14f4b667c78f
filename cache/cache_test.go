package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func newTestCache(t testing.TB, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if c == nil {
		t.Fatal("New returned a nil cache for a positive MaxBytes")
	}
	t.Cleanup(c.Close)
	return c
}

func testKey(t testing.TB, c *Cache, tool string, args map[string]any) string {
	t.Helper()
	return mustKey(t, c, Key{R2RURL: "http://r2r:7272", Identity: "me", Tool: tool, Collection: "proj", Args: args})
}

// settled waits until every other goroutine of the synctest bubble is blocked, then fails
// unless cond holds.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("every goroutine is blocked, but not %s", what)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
		wantNil bool
		wantTTL map[Kind]time.Duration
	}{
		{name: "zero size disables", cfg: Config{}, wantNil: true},
		{name: "negative size", cfg: Config{MaxBytes: -1}, wantErr: "MaxBytes"},
		{name: "negative TTL", cfg: Config{MaxBytes: 1 << 20, TTL: map[Kind]time.Duration{KindRAG: -time.Second}}, wantErr: `"rag"`},
		{name: "defaults", cfg: Config{MaxBytes: 16 << 20}, wantTTL: map[Kind]time.Duration{
			KindSearch: 300 * time.Second, KindRAG: 120 * time.Second, KindList: 60 * time.Second,
			KindDocument: 60 * time.Second, "unknown": 0}},
		{name: "overrides merge with defaults", cfg: Config{MaxBytes: 1 << 20, TTL: map[Kind]time.Duration{
			KindSearch: time.Second, KindList: 0, "custom": time.Minute}}, wantTTL: map[Kind]time.Duration{
			KindSearch: time.Second, KindRAG: 120 * time.Second, KindList: 0, KindDocument: 60 * time.Second,
			"custom": time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error = %v, want one mentioning %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer c.Close()
			if (c == nil) != tt.wantNil {
				t.Fatalf("New returned nil = %v, want %v", c == nil, tt.wantNil)
			}
			for k, want := range tt.wantTTL {
				if got := c.TTL(k); got != want {
					t.Errorf("TTL(%s) = %s, want %s", k, got, want)
				}
			}
		})
	}
}

func TestSetGet(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	for i, kind := range []Kind{KindSearch, KindRAG, KindList, KindDocument} {
		key := testKey(t, c, "tool", map[string]any{"i": i})
		val := fmt.Appendf(nil, `{"kind":%q}`, kind)
		if _, ok := c.Get(key); ok {
			t.Fatalf("%s: hit before Set", kind)
		}
		if !c.Set(kind, key, val) {
			t.Fatalf("%s: Set of a %d-byte value into an empty cache was not stored", kind, len(val))
		}
		got, ok := c.Get(key)
		if !ok || !bytes.Equal(got.([]byte), val) {
			t.Fatalf("%s: Get right after Set = %q, %v; want %q, true", kind, got, ok, val)
		}
	}
}

func TestTTLPerKind(t *testing.T) {
	ttl := map[Kind]time.Duration{
		KindSearch:   time.Hour,
		KindRAG:      80 * time.Millisecond,
		KindList:     30 * time.Millisecond,
		KindDocument: 50 * time.Millisecond,
	}
	for _, kind := range []Kind{KindList, KindDocument, KindRAG} {
		t.Run(string(kind), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { // ristretto expires entries on the bubble's clock
				c := newTestCache(t, Config{MaxBytes: 1 << 20, TTL: ttl})
				long, key := testKey(t, c, "long", nil), testKey(t, c, string(kind), nil)
				if !c.Set(KindSearch, long, []byte("stays")) || !c.Set(kind, key, []byte("v")) {
					t.Fatal("Set not stored")
				}
				start := time.Now()
				for _, step := range []struct {
					wait   time.Duration
					cached bool
				}{
					{wait: ttl[kind] - time.Millisecond, cached: true}, // just before its TTL
					{wait: 2 * time.Millisecond, cached: false},        // just after
				} {
					time.Sleep(step.wait)
					if _, ok := c.Get(key); ok != step.cached {
						t.Fatalf("%s after Set (TTL %s): cached = %v, want %v", time.Since(start), ttl[kind], ok, step.cached)
					}
				}
				if _, ok := c.Get(long); !ok {
					t.Error("search entry (TTL 1h) expired together with the short-lived kind")
				}
			})
		})
	}
}

func TestDisabledKinds(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20, TTL: map[Kind]time.Duration{KindRAG: 0}})
	for _, kind := range []Kind{KindRAG, "unknown"} {
		t.Run(string(kind), func(t *testing.T) {
			key := testKey(t, c, string(kind), nil)
			if c.Set(kind, key, []byte("v")) {
				t.Error("Set of a disabled kind reported stored")
			}
			if _, ok := c.Get(key); ok {
				t.Error("Get hit an entry of a disabled kind")
			}
			var loads int
			for range 2 {
				v, cached, err := c.GetOrLoad(t.Context(), kind, key, func(context.Context) (any, error) {
					loads++
					return []byte("fresh"), nil
				})
				if err != nil || cached || str(v) != "fresh" {
					t.Fatalf("GetOrLoad = %q, %v, %v; want fresh, false, nil", v, cached, err)
				}
			}
			if loads != 2 {
				t.Errorf("loads = %d, want 2 (nothing cached)", loads)
			}
		})
	}
}

func TestGetOrLoadCachesResult(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	key := testKey(t, c, "r2r_search", map[string]any{"query": "q"})
	var loads atomic.Int32
	load := func(context.Context) (any, error) {
		loads.Add(1)
		return []byte(`{"results":[]}`), nil
	}
	for i, wantCached := range []bool{false, true, true} {
		v, cached, err := c.GetOrLoad(t.Context(), KindSearch, key, load)
		if err != nil || cached != wantCached || str(v) != `{"results":[]}` {
			t.Fatalf("call %d: GetOrLoad = %q, %v, %v; want value, cached=%v, nil", i, v, cached, err, wantCached)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loads = %d, want 1: a repeated call must not reach R2R again", n)
	}
}

func TestErrorsNotCached(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	key := testKey(t, c, "r2r_search", map[string]any{"query": "q"})
	boom := errors.New("r2r: 503 service unavailable")
	results := []struct {
		val []byte
		err error
	}{{nil, boom}, {[]byte("partial"), boom}, {[]byte("ok"), nil}}
	var calls int
	for i, want := range results {
		v, cached, err := c.GetOrLoad(t.Context(), KindSearch, key, func(context.Context) (any, error) {
			calls++
			return results[i].val, results[i].err
		})
		if !errors.Is(err, want.err) || cached {
			t.Fatalf("call %d: err = %v, cached = %v; want %v, false", i, err, cached, want.err)
		}
		if want.err != nil {
			if v != nil {
				t.Errorf("call %d: value %q returned with an error", i, v)
			}
			if _, ok := c.Get(key); ok {
				t.Fatalf("call %d: a failed load left an entry", i)
			}
		}
	}
	if calls != len(results) {
		t.Errorf("load calls = %d, want %d (errors must not be cached)", calls, len(results))
	}
	if got, ok := c.Get(key); !ok || str(got) != "ok" {
		t.Errorf("after a successful load Get = %q, %v; want ok, true", got, ok)
	}
	if s := c.Stats(); s.Sets != 1 {
		t.Errorf("Stats.Sets = %d, want 1", s.Sets)
	}
}

func TestGetOrLoadPanic(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	key := testKey(t, c, "t", nil)
	_, _, err := c.GetOrLoad(t.Context(), KindList, key, func(context.Context) (any, error) {
		panic("kaput")
	})
	if err == nil || !strings.Contains(err.Error(), "kaput") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	if _, ok := c.Get(key); ok {
		t.Error("a panicking load left an entry")
	}
}

func TestGetOrLoadCoalesces(t *testing.T) { synctest.Test(t, testGetOrLoadCoalesces) }

func testGetOrLoadCoalesces(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	key := testKey(t, c, "r2r_rag", map[string]any{"query": "why"})
	const callers = 16
	release := make(chan struct{})
	var loads atomic.Int32
	load := func(ctx context.Context) (any, error) {
		loads.Add(1)
		select {
		case <-release:
			return []byte("answer"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	type res struct {
		v      any
		cached bool
		err    error
	}
	out := make(chan res, callers)
	for range callers {
		go func() {
			v, cached, err := c.GetOrLoad(t.Context(), KindRAG, key, load)
			out <- res{v, cached, err}
		}()
	}
	settled(t, "all callers waiting on one load", func() bool { return c.waiting.Load() == callers })
	close(release)
	for range callers {
		r := <-out
		if r.err != nil || r.cached || str(r.v) != "answer" {
			t.Errorf("GetOrLoad = %q, %v, %v; want answer, false, nil", r.v, r.cached, r.err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("loads = %d, want 1", n)
	}
	s := c.Stats()
	if s.Loads != 1 || s.Coalesced != callers-1 {
		t.Errorf("Stats loads=%d coalesced=%d, want 1 and %d", s.Loads, s.Coalesced, callers-1)
	}
}

func TestGetOrLoadCancellation(t *testing.T) {
	tests := []struct {
		name       string
		cancelLead bool // else the follower gives up
	}{
		{name: "starter cancelled, follower reloads", cancelLead: true},
		{name: "follower cancelled, starter finishes", cancelLead: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newTestCache(t, Config{MaxBytes: 1 << 20})
				key := testKey(t, c, "r2r_search", nil)
				release := make(chan struct{})
				var loads atomic.Int32
				load := func(ctx context.Context) (any, error) {
					if loads.Add(1) > 1 {
						return []byte("second"), nil
					}
					select {
					case <-release:
						return []byte("first"), nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				type res struct {
					v   any
					err error
				}
				leadCtx, cancelLead := context.WithCancel(t.Context())
				defer cancelLead()
				followCtx, cancelFollow := context.WithCancel(t.Context())
				defer cancelFollow()
				lead, follow := make(chan res, 1), make(chan res, 1)
				go func() {
					v, _, err := c.GetOrLoad(leadCtx, KindSearch, key, load)
					lead <- res{v, err}
				}()
				settled(t, "the first load started", func() bool { return loads.Load() == 1 })
				go func() {
					v, _, err := c.GetOrLoad(followCtx, KindSearch, key, load)
					follow <- res{v, err}
				}()
				settled(t, "both callers waiting", func() bool { return c.waiting.Load() == 2 })

				if tt.cancelLead {
					cancelLead()
					if r := <-lead; !errors.Is(r.err, context.Canceled) {
						t.Errorf("cancelled starter: err = %v, want context.Canceled", r.err)
					}
					if r := <-follow; r.err != nil || str(r.v) != "second" {
						t.Errorf("follower = %q, %v; want second, nil (it must reload, not inherit the cancellation)", r.v, r.err)
					}
					if n := loads.Load(); n != 2 {
						t.Errorf("loads = %d, want 2", n)
					}
					return
				}
				cancelFollow()
				if r := <-follow; !errors.Is(r.err, context.Canceled) {
					t.Errorf("cancelled follower: err = %v, want context.Canceled", r.err)
				}
				close(release)
				if r := <-lead; r.err != nil || str(r.v) != "first" {
					t.Errorf("starter = %q, %v; want first, nil", r.v, r.err)
				}
				if v, ok := c.Get(key); !ok || str(v) != "first" {
					t.Errorf("Get after the load = %q, %v; want first, true", v, ok)
				}
			})
		})
	}
}

func TestByteBound(t *testing.T) {
	const maxBytes, valSize, n = 10 << 10, 1 << 10, 40
	c := newTestCache(t, Config{MaxBytes: maxBytes})
	val := bytes.Repeat([]byte("x"), valSize)
	var stored uint64
	for i := range n {
		if c.Set(KindSearch, testKey(t, c, "t", map[string]any{"i": i}), val) {
			stored++
		}
	}
	big := testKey(t, c, "t", map[string]any{"big": true})
	if c.Set(KindSearch, big, make([]byte, maxBytes+1)) {
		t.Error("a value larger than MaxBytes was stored")
	}
	if _, ok := c.Get(big); ok {
		t.Error("Get hit the oversized value")
	}

	s := c.Stats()
	if s.CostBytes > maxBytes {
		t.Errorf("CostBytes = %d, above MaxBytes %d", s.CostBytes, maxBytes)
	}
	if s.MaxBytes != maxBytes {
		t.Errorf("MaxBytes = %d, want %d", s.MaxBytes, maxBytes)
	}
	if s.Evictions == 0 {
		t.Errorf("no evictions after storing %d bytes into %d", stored*valSize, maxBytes)
	}
	if s.Sets != stored || s.SetsRejected != n+1-stored {
		t.Errorf("Sets=%d SetsRejected=%d, want %d and %d", s.Sets, s.SetsRejected, stored, n+1-stored)
	}
	if s.Entries != stored-s.Evictions || s.CostBytes != int64(s.Entries)*(valSize+entryBytes) {
		t.Errorf("Entries=%d CostBytes=%d, want %d entries of %d bytes", s.Entries, s.CostBytes, stored-s.Evictions, valSize+entryBytes)
	}
	var present int64
	for i := range n {
		if _, ok := c.Get(testKey(t, c, "t", map[string]any{"i": i})); ok {
			present++
		}
	}
	if present*(valSize+entryBytes) != s.CostBytes {
		t.Errorf("%d values readable, but CostBytes = %d", present, s.CostBytes)
	}
}

func TestNilCache(t *testing.T) {
	var c *Cache
	key := mustKey(t, c, Key{Tool: "t"})
	if c.Set(KindSearch, key, []byte("v")) {
		t.Error("nil cache stored a value")
	}
	if _, ok := c.Get(key); ok {
		t.Error("nil cache hit")
	}
	var loads int
	for range 2 {
		v, cached, err := c.GetOrLoad(t.Context(), KindSearch, key, func(context.Context) (any, error) {
			loads++
			return []byte("v"), nil
		})
		if err != nil || cached || str(v) != "v" {
			t.Fatalf("GetOrLoad = %q, %v, %v", v, cached, err)
		}
	}
	if loads != 2 {
		t.Errorf("loads = %d, want 2", loads)
	}
	c.Bump("x")
	c.BumpAll()
	if g := c.Generation("x"); g != 0 {
		t.Errorf("Generation = %d, want 0", g)
	}
	if s := c.Stats(); !reflect.DeepEqual(s, Stats{}) {
		t.Errorf("Stats = %+v, want zero", s)
	}
	if c.TTL(KindSearch) != 0 {
		t.Error("nil cache reports a TTL")
	}
	c.Close()
}

func TestClosedCache(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	key := testKey(t, c, "t", nil)
	if !c.Set(KindList, key, []byte("v")) {
		t.Fatal("Set not stored")
	}
	c.Close()
	c.Close()
	if _, ok := c.Get(key); ok {
		t.Error("closed cache hit")
	}
	if c.Set(KindList, key, []byte("v")) {
		t.Error("closed cache stored a value")
	}
	v, cached, err := c.GetOrLoad(t.Context(), KindList, key, func(context.Context) (any, error) { return []byte("fresh"), nil })
	if err != nil || cached || str(v) != "fresh" {
		t.Errorf("GetOrLoad on closed cache = %q, %v, %v; want fresh, false, nil", v, cached, err)
	}
	if s := c.Stats(); s.Enabled {
		t.Error("closed cache reports enabled")
	}
}

func TestConcurrentUseAndClose(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 64 << 10})
	const workers, rounds = 6, 200
	var ops atomic.Int32
	third := make(chan struct{}) // closed once a third of all operations are done
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				key := testKey(t, c, "t", map[string]any{"i": i % 8, "w": w % 3})
				switch i % 4 {
				case 0:
					c.Set(KindSearch, key, []byte("value"))
				case 1:
					c.Get(key)
				case 2:
					_, _, err := c.GetOrLoad(t.Context(), KindRAG, key, func(context.Context) (any, error) { return []byte("v"), nil })
					if err != nil {
						t.Error(err)
					}
				case 3:
					c.Bump([]string{"proj", "other"}[i%2])
					c.Stats()
				}
				if ops.Add(1) == workers*rounds/3 {
					close(third)
				}
			}
		})
	}
	// Close midway: every call must stay safe, the cache then acts as disabled.
	wg.Go(func() {
		<-third
		c.Close()
	})
	wg.Wait()
	if c.Stats().Enabled {
		t.Error("cache still enabled after Close")
	}
}

func TestStats(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20, TTL: map[Kind]time.Duration{KindList: 1500 * time.Millisecond}})
	k1, k2 := testKey(t, c, "a", nil), testKey(t, c, "b", nil)
	c.Get(k1) // miss
	c.Set(KindSearch, k1, []byte("12345"))
	c.Set(KindList, k2, []byte("123"))
	c.Get(k1) // hit
	c.Get(k1) // hit
	c.Get(k2) // hit

	s := c.Stats()
	want := Stats{Enabled: true, Hits: 3, Misses: 1, HitRatio: 0.75, Sets: 2, Entries: 2, CostBytes: 8 + 2*entryBytes, MaxBytes: 1 << 20}
	got := s
	got.TTLSeconds = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats = %+v\nwant   %+v", got, want)
	}
	if s.TTLSeconds["search"] != 300 || s.TTLSeconds["list"] != 1.5 {
		t.Errorf("TTLSeconds = %v", s.TTLSeconds)
	}

	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"enabled", "hits", "misses", "hit_ratio", "loads", "coalesced", "sets",
		"sets_rejected", "evictions", "expirations", "entries", "cost_bytes", "max_bytes", "ttl_seconds"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("Stats JSON lacks %q: %s", f, raw)
		}
	}
}

// str shows a cached test value as a string.
func str(v any) string {
	b, _ := v.([]byte)
	return string(b)
}
