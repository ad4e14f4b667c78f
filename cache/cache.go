// Package cache is r2r-mcp's in-process result cache: a byte-bounded ristretto cache of
// finished tool results with a TTL per kind of result, keys that bind R2R URL, credential
// identity, tool, effective arguments and collection generation, per-collection invalidation,
// request coalescing and stats.
//
// Errors are never cached. A nil *Cache is valid and behaves as a disabled cache: every lookup
// misses, nothing is stored and GetOrLoad always calls load.
//
// Admission: ristretto (TinyLFU) admits every entry while the cache has room. When it is full,
// a new entry competes with a few sampled residents by access frequency and may be rejected;
// an entry larger than MaxBytes is always rejected. A rejected Set only means a later miss
// (and a fresh request to R2R), never a wrong or stale value. Set reports whether the entry
// was stored and Stats counts rejections.
package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
	"golang.org/x/sync/singleflight"
)

// Kind classifies a cached result; each kind has its own TTL.
type Kind string

// Kinds of cached results.
const (
	KindSearch   Kind = "search"   // r2r_search results
	KindRAG      Kind = "rag"      // RAG answers
	KindList     Kind = "list"     // listings: documents, collections, chunks
	KindDocument Kind = "document" // one document's metadata or content
)

// DefaultTTL returns the default time-to-live per kind: search 300 s, rag 120 s, list 60 s,
// document 60 s.
func DefaultTTL() map[Kind]time.Duration {
	return map[Kind]time.Duration{
		KindSearch:   300 * time.Second,
		KindRAG:      120 * time.Second,
		KindList:     60 * time.Second,
		KindDocument: 60 * time.Second,
	}
}

// Config configures New.
type Config struct {
	// MaxBytes bounds the summed size of the stored values. 0 disables caching (New returns a
	// nil *Cache, which is valid); serve's default is Settings'.
	MaxBytes int64
	// TTL per kind. Kinds missing from the map use DefaultTTL; a TTL of 0 disables caching of
	// that kind. Kinds unknown to both maps are never cached.
	TTL map[Kind]time.Duration
}

// Cache is a concurrency-safe result cache. Create it with New; the zero value is not usable,
// but a nil *Cache is (as a disabled cache).
type Cache struct {
	rcConfig *ristretto.Config[string, any]
	rcOnce   sync.Once
	rc       atomic.Pointer[ristretto.Cache[string, any]] // nil until first use
	maxBytes int64
	ttl      map[Kind]time.Duration // read-only after New
	gens     generations
	flights  singleflight.Group

	// mu guards closed; ristretto must not be used concurrently with its Close.
	mu     sync.RWMutex
	closed bool

	hits, misses, loads, coalesced atomic.Uint64
	stored, rejected               atomic.Uint64
	evicted, expired               atomic.Uint64
	waiting                        atomic.Int64 // callers blocked on a load (tests observe it)
}

// Sized is a cached value that knows its cost in bytes: the heap it holds (HeapBytes adds up
// its allocations). []byte and string values cost their length; any other value that is
// not Sized costs 1. Every entry also costs entryBytes.
type Sized interface {
	CacheSize() int
}

// entryBytes is what the cache keeps for an entry besides its value: ristretto's store,
// expiration and policy records of its key (TestEntryBytes measures it).
const entryBytes = 272

// costOf is the number of bytes value counts against MaxBytes: its own and entryBytes.
func costOf(value any) int64 {
	var n int
	switch v := value.(type) {
	case Sized:
		n = v.CacheSize()
	case []byte:
		n = len(v)
	case string:
		n = len(v)
	}
	return max(int64(n), 1) + entryBytes
}

// Expected mean cost of one cached result (a ten-hit search answer holds about 10 KiB);
// only sizes ristretto's frequency sketch and bloom filter.
const typicalValueBytes = 8 << 10

// New builds a cache. It returns (nil, nil) when cfg.MaxBytes is 0: caching off.
func New(cfg Config) (*Cache, error) {
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("cache: MaxBytes must not be negative, got %d", cfg.MaxBytes)
	}
	if cfg.MaxBytes == 0 {
		return nil, nil
	}
	ttl := DefaultTTL()
	for k, d := range cfg.TTL {
		if d < 0 {
			return nil, fmt.Errorf("cache: TTL of kind %q must not be negative, got %s", k, d)
		}
		ttl[k] = d
	}
	// ristretto recommends ~10 counters per item the full cache holds.
	counters := min(max(10*(cfg.MaxBytes/typicalValueBytes), 1000), 10_000_000)
	c := &Cache{maxBytes: cfg.MaxBytes, ttl: ttl}
	c.rcConfig = &ristretto.Config[string, any]{
		NumCounters: counters,
		MaxCost:     cfg.MaxBytes,
		BufferItems: 64,
		Metrics:     true,
		// Cost is costOf(value), which counts ristretto's records of an entry.
		IgnoreInternalCost: true,
		KeyToHash:          keyToHash,
		OnEvict:            c.onEvict,
	}
	return c, nil
}

// store returns the ristretto cache, built on first use (its counters and goroutines are
// not worth having before a result is cached); nil if it cannot be built, which the
// configuration New checks rules out.
func (c *Cache) store() *ristretto.Cache[string, any] {
	c.rcOnce.Do(func() {
		if rc, err := ristretto.NewCache(c.rcConfig); err == nil {
			c.rc.Store(rc)
		}
	})
	return c.rc.Load()
}

// onEvict runs on ristretto's goroutines for entries removed to make room (no expiration
// recorded on the victim) and for entries removed by the periodic TTL cleanup.
func (c *Cache) onEvict(it *ristretto.Item[any]) {
	if !it.Expiration.IsZero() && !time.Now().Before(it.Expiration) {
		c.expired.Add(1)
		return
	}
	c.evicted.Add(1)
}

// TTL returns the time-to-live of kind; 0 means the kind is not cached (or c is nil).
func (c *Cache) TTL(kind Kind) time.Duration {
	if c == nil {
		return 0
	}
	return c.ttl[kind]
}

// Get returns the value stored under key, if present and not expired. The value is shared
// with the cache and every other caller: it must not be modified.
func (c *Cache) Get(key string) (any, bool) {
	if c == nil {
		return nil, false
	}
	return c.get(key, true)
}

// get looks key up, counting a hit or miss when count is set (a closed cache counts
// neither).
func (c *Cache) get(key string, count bool) (any, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, false
	}
	rc := c.store()
	if rc == nil {
		return nil, false
	}
	v, ok := rc.Get(key)
	switch {
	case !count:
	case ok:
		c.hits.Add(1)
	default:
		c.misses.Add(1)
	}
	return v, ok
}

// Set stores value under key for the TTL of kind, at a cost of costOf(value) bytes, and waits
// until ristretto has applied it, so a Get right after Set sees it. It reports whether the
// value is now stored: false when c is nil or closed, the kind is not cached, or the entry
// was rejected (larger than MaxBytes, refused by the admission policy, or dropped under
// contention). The cache keeps value; the caller must not modify it afterwards.
func (c *Cache) Set(kind Kind, key string, value any) bool {
	ttl := c.TTL(kind)
	if ttl <= 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return false
	}
	cost := costOf(value)
	rc := c.store()
	if rc == nil || cost > c.maxBytes || !rc.SetWithTTL(key, value, cost, ttl) {
		c.rejected.Add(1)
		return false
	}
	rc.Wait()
	if _, ok := rc.GetTTL(key); !ok {
		c.rejected.Add(1)
		return false
	}
	c.stored.Add(1)
	return true
}

type loaded struct {
	value  any
	cached bool
}

// GetOrLoad returns the value under key, or calls load, stores its result for the TTL of kind
// and returns it. cached reports whether the value came from the cache. Concurrent calls with
// the same key share one load (singleflight); the load runs with the context of the caller
// that started it, and each caller stops waiting when its own ctx is done. If the load failed
// only because its starter's context ended, the other waiters run it again. Errors are
// returned, never stored. When c is nil or closed or kind is not cached, load is simply called.
// A panic in load is returned as an error.
func (c *Cache) GetOrLoad(ctx context.Context, kind Kind, key string, load func(context.Context) (any, error)) (value any, cached bool, err error) {
	if c.TTL(kind) <= 0 || c.isClosed() {
		v, err := load(ctx)
		return v, false, err
	}
	if v, ok := c.Get(key); ok {
		return v, true, nil
	}
	c.waiting.Add(1)
	l, shared, err := Flight(ctx, &c.flights, key, func(ctx context.Context) (loaded, error) {
		return c.loadAndStore(ctx, kind, key, load)
	})
	c.waiting.Add(-1)
	if err != nil {
		return nil, false, err
	}
	if shared {
		c.coalesced.Add(1)
	}
	return l.value, l.cached, nil
}

func (c *Cache) loadAndStore(ctx context.Context, kind Kind, key string, load func(context.Context) (any, error)) (_ loaded, err error) {
	// A previous flight may have stored the value after this caller's miss.
	if v, ok := c.get(key, false); ok {
		return loaded{value: v, cached: true}, nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cache: load of a %s result panicked: %v", kind, p)
		}
	}()
	c.loads.Add(1)
	v, err := load(ctx)
	if err != nil {
		return loaded{}, err
	}
	c.Set(kind, key, v)
	return loaded{value: v}, nil
}

// Bump invalidates every entry that depends on collection: keys built after Bump differ from
// those built before, so old entries are never read again and age out. Call it after any write
// to the collection (ingest, update, delete).
func (c *Cache) Bump(collection string) {
	if c != nil {
		c.gens.bump(collection)
	}
}

// BumpAll invalidates every entry, for writes whose collection is unknown.
func (c *Cache) BumpAll() {
	if c != nil {
		c.gens.global.Add(1)
	}
}

// Generation returns how often collection has been bumped (BumpAll not included).
func (c *Cache) Generation(collection string) uint64 {
	if c == nil {
		return 0
	}
	return c.gens.get(collection)
}

// Stats is a snapshot of the cache's counters, shown by r2r_status.
type Stats struct {
	Enabled bool `json:"enabled"`
	// Hits and Misses count Get lookups, including those made by GetOrLoad.
	Hits     uint64  `json:"hits"`
	Misses   uint64  `json:"misses"`
	HitRatio float64 `json:"hit_ratio"`
	// Loads counts calls of a GetOrLoad load function; Coalesced counts callers that shared
	// another caller's load instead of running their own.
	Loads     uint64 `json:"loads"`
	Coalesced uint64 `json:"coalesced"`
	// Sets counts values stored; SetsRejected counts values not stored (too large, refused
	// by the admission policy, dropped under contention).
	Sets         uint64 `json:"sets"`
	SetsRejected uint64 `json:"sets_rejected"`
	// Evictions counts entries removed to make room; Expirations entries removed by the
	// periodic TTL cleanup (an expired entry is never returned, even before cleanup).
	Evictions   uint64 `json:"evictions"`
	Expirations uint64 `json:"expirations"`
	// Entries and CostBytes describe what is held now, including expired entries awaiting
	// cleanup; CostBytes is the summed cost of the values.
	Entries    uint64             `json:"entries"`
	CostBytes  int64              `json:"cost_bytes"`
	MaxBytes   int64              `json:"max_bytes"`
	TTLSeconds map[string]float64 `json:"ttl_seconds,omitempty"`
}

// Stats returns the current counters. A nil or closed cache reports Enabled false.
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return Stats{}
	}
	s := Stats{
		Enabled:      true,
		Hits:         c.hits.Load(),
		Misses:       c.misses.Load(),
		Loads:        c.loads.Load(),
		Coalesced:    c.coalesced.Load(),
		Sets:         c.stored.Load(),
		SetsRejected: c.rejected.Load(),
		Evictions:    c.evicted.Load(),
		Expirations:  c.expired.Load(),
		MaxBytes:     c.maxBytes,
		TTLSeconds:   make(map[string]float64, len(c.ttl)),
	}
	if rc := c.rc.Load(); rc != nil {
		s.CostBytes = c.maxBytes - rc.RemainingCost()
		if added, gone := rc.Metrics.KeysAdded(), rc.Metrics.KeysEvicted(); added > gone {
			s.Entries = added - gone
		}
	}
	if n := s.Hits + s.Misses; n > 0 {
		s.HitRatio = float64(s.Hits) / float64(n)
	}
	for k, d := range c.ttl {
		s.TTLSeconds[string(k)] = d.Seconds()
	}
	return s
}

func (c *Cache) isClosed() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.closed
}

// Close releases the cache's goroutines and memory. Afterwards the cache behaves as disabled.
// Close is idempotent and safe to call concurrently with other methods.
func (c *Cache) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	if rc := c.rc.Load(); rc != nil {
		rc.Close()
	}
}
