package redisl2_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
)

type counts struct {
	mu     sync.Mutex
	lookup map[string]int
	errs   map[string]int
}

func (c *counts) CacheLookup(layer string, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := layer + "-miss"
	if hit {
		k = layer + "-hit"
	}
	c.lookup[k]++
}

func (c *counts) RedisError(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs[op]++
}

func (c *counts) get(m map[string]int, k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m[k]
}

// replica is one process's view: its own L1 in front of the shared Redis.
type replica struct {
	store *redisl2.Store
	c     *redisl2.Cache
	obs   *counts
}

func newReplica(t *testing.T, url string, now func() time.Time) replica {
	t.Helper()
	obs := &counts{lookup: map[string]int{}, errs: map[string]int{}}
	s, err := redisl2.Open(url, redisl2.Options{Observer: obs, Now: now, Backoff: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	l1, err := cache.New(cache.Config{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l1.Close)
	return replica{store: s, c: s.Cache(l1), obs: obs}
}

var key = cache.Key{R2RURL: "http://r2r", Identity: "r2r-user:alice", Tool: "r2r_search", Args: map[string]any{"query": "q"}, Collection: "c1"}

func get(t *testing.T, r replica, k cache.Key, value string) (string, bool, int) {
	t.Helper()
	id, err := r.c.Key(k)
	if err != nil {
		t.Fatal(err)
	}
	loads := 0
	v, hit, err := r.c.GetOrLoadShared(context.Background(), cache.KindSearch, id, func(context.Context) (any, error) {
		loads++
		return value, nil
	}, decodeString)
	if err != nil {
		t.Fatal(err)
	}
	return v.(string), hit, loads
}

func decodeString(b []byte) (any, error) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// A result loaded by one replica is served to another from Redis; a write through either
// invalidates both at once; another identity never shares an entry.
func TestSharedCacheAndGenerations(t *testing.T) {
	mr := miniredis.RunT(t)
	a, b := newReplica(t, "redis://"+mr.Addr(), nil), newReplica(t, "redis://"+mr.Addr(), nil)

	if v, hit, loads := get(t, a, key, "v1"); v != "v1" || hit || loads != 1 {
		t.Fatalf("first load on A: %q %v %d", v, hit, loads)
	}
	if v, hit, loads := get(t, b, key, "other"); v != "v1" || !hit || loads != 0 {
		t.Fatalf("B: %q hit=%v loads=%d, want A's value from Redis", v, hit, loads)
	}
	if b.obs.get(b.obs.lookup, "l2-hit") != 1 {
		t.Errorf("B's lookups %v", b.obs.lookup)
	}
	bob := key
	bob.Identity = "r2r-user:bob"
	if v, _, loads := get(t, b, bob, "bob's"); v != "bob's" || loads != 1 {
		t.Fatalf("another identity got %q (loads %d)", v, loads)
	}

	if _, hit, _ := get(t, a, key, "x"); !hit {
		t.Fatal("A's own L1 lost the entry")
	}
	b.c.Bump("c1") // a write through B
	if v, hit, loads := get(t, a, key, "v2"); v != "v2" || hit || loads != 1 {
		t.Fatalf("after B's write A served %q hit=%v loads=%d", v, hit, loads)
	}
	other := key
	other.Collection = "c2"
	get(t, a, other, "c2v1")
	a.c.BumpAll()
	if v, _, _ := get(t, b, other, "c2v2"); v != "c2v2" {
		t.Fatalf("BumpAll on A left B's %q", v)
	}
}

// Without Redis every call is still answered (from L1 and loads), failures are counted, and
// a bump made meanwhile reaches the other replicas once Redis is back.
func TestRedisDownServesFromMemory(t *testing.T) {
	mr := miniredis.RunT(t)
	a, b := newReplica(t, "redis://"+mr.Addr(), nil), newReplica(t, "redis://"+mr.Addr(), nil)
	get(t, a, key, "v1")
	get(t, b, key, "v1")

	mr.Close()
	if v, _, _ := get(t, a, key, "fresh"); v != "fresh" {
		t.Fatalf("without Redis: %q", v)
	}
	if a.obs.get(a.obs.errs, "generations") == 0 {
		t.Errorf("no Redis failure counted: %v", a.obs.errs)
	}
	a.c.Bump("c1") // a write through A while Redis is away
	if err := mr.Restart(); err != nil {
		t.Fatal(err)
	}
	get(t, a, cache.Key{Tool: "any"}, "x") // A's next call replays its bump
	if v, hit, _ := get(t, b, key, "after"); v != "after" || hit {
		t.Fatalf("B still serves %q (hit %v) after A's write", v, hit)
	}
}

// Errors are never stored in either layer.
func TestErrorsAreNotShared(t *testing.T) {
	mr := miniredis.RunT(t)
	a, b := newReplica(t, "redis://"+mr.Addr(), nil), newReplica(t, "redis://"+mr.Addr(), nil)
	id, _ := a.c.Key(key)
	boom := errors.New("boom")
	if _, _, err := a.c.GetOrLoadShared(context.Background(), cache.KindSearch, id, func(context.Context) (any, error) { return nil, boom }, decodeString); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if v, hit, loads := get(t, b, key, "ok"); v != "ok" || hit || loads != 1 {
		t.Fatalf("B: %q %v %d", v, hit, loads)
	}
}

// The GCRA bucket is shared by every replica and refills with time.
func TestSharedRateLimit(t *testing.T) {
	mr := miniredis.RunT(t)
	var nowNS atomic.Int64
	nowNS.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, nowNS.Load()) }
	a, b := newReplica(t, "redis://"+mr.Addr(), now), newReplica(t, "redis://"+mr.Addr(), now)
	ctx := context.Background()
	admit := func(s *redisl2.Store, k string) (time.Duration, bool) {
		t.Helper()
		w, ok, err := s.Admit(ctx, k, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		return w, ok
	}
	if _, ok := admit(a.store, "alice:search"); !ok {
		t.Fatal("first call refused")
	}
	if _, ok := admit(b.store, "alice:search"); !ok {
		t.Fatal("second call (burst 2) refused")
	}
	w, ok := admit(a.store, "alice:search")
	if ok || w <= 0 || w > time.Second {
		t.Fatalf("third call: ok=%v wait=%s, want a refusal with a wait up to 1s", ok, w)
	}
	if _, ok := admit(b.store, "bob:search"); !ok {
		t.Fatal("bob shares alice's bucket")
	}
	nowNS.Add(int64(time.Second))
	if _, ok := admit(b.store, "alice:search"); !ok {
		t.Fatal("no refill after a second")
	}
	mr.Close()
	if _, _, err := a.store.Admit(ctx, "alice:search", 1, 2); err == nil {
		t.Fatal("Admit without Redis reported no error (the caller must fall back)")
	}
}

// A user's search history is shared by the replicas, newest first, bounded, and separate
// from another user's; without Redis the caller gets an error (and uses its memory).
func TestSharedHistory(t *testing.T) {
	mr := miniredis.RunT(t)
	a, b := newReplica(t, "redis://"+mr.Addr(), nil), newReplica(t, "redis://"+mr.Addr(), nil)
	for i := range 5 {
		if err := a.store.PushHistory("user:alice", []byte{'0' + byte(i)}, 3); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.store.PushHistory("user:bob", []byte("b"), 3)
	got, err := b.store.History("user:alice", 3)
	if err != nil || len(got) != 3 || string(got[0]) != "4" || string(got[2]) != "2" {
		t.Fatalf("alice's history through B: %q %v", got, err)
	}
	if got, _ := a.store.History("user:bob", 3); len(got) != 1 || string(got[0]) != "b" {
		t.Fatalf("bob's history: %q", got)
	}
	mr.Close()
	if _, err := a.store.History("user:alice", 3); err == nil {
		t.Fatal("no error without Redis")
	}
}

// A sync job's state is shared by the replicas under its key, kept for its TTL after the
// last write; an unknown key has none, and without Redis the caller gets an error (and
// answers from its memory).
func TestSharedSyncJobs(t *testing.T) {
	mr := miniredis.RunT(t)
	a, b := newReplica(t, "redis://"+mr.Addr(), nil), newReplica(t, "redis://"+mr.Addr(), nil)
	for _, state := range []string{`{"state":"running"}`, `{"state":"done"}`} {
		if err := a.store.PutSyncJob("r2r-user:alice\x00job-1", []byte(state), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		key, want string
	}{
		{"r2r-user:alice\x00job-1", `{"state":"done"}`},
		{"r2r-user:bob\x00job-1", ""},
		{"r2r-user:alice\x00job-2", ""},
	} {
		got, err := b.store.SyncJob(tc.key)
		if err != nil || string(got) != tc.want {
			t.Errorf("%q through B: %q %v, want %q", tc.key, got, err, tc.want)
		}
	}
	mr.FastForward(time.Hour + time.Second)
	if got, err := b.store.SyncJob("r2r-user:alice\x00job-1"); err != nil || got != nil {
		t.Errorf("after the TTL: %q %v", got, err)
	}
	mr.Close()
	if err := a.store.PutSyncJob("r2r-user:alice\x00job-3", []byte(`{}`), time.Hour); err == nil {
		t.Error("no error storing without Redis")
	}
	if _, err := b.store.SyncJob("r2r-user:alice\x00job-1"); err == nil {
		t.Error("no error reading without Redis")
	}
	if b.obs.get(b.obs.errs, "sync_job") == 0 {
		t.Error("the failure was not counted")
	}
}
