package redisl2

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/r2r-mcp/r2r-mcp/cache"
)

// Cache is a two-level results cache: l1 (in-process) in front of Redis, keyed under the
// collection generations kept in Redis. It has the method set of tools.Cache.
type Cache struct {
	l1 *cache.Cache
	s  *Store
}

// Cache returns the two-level cache with l1 in front; l1 must not be nil.
func (s *Store) Cache(l1 *cache.Cache) *Cache { return &Cache{l1: l1, s: s} }

const globalGen = "*" // the generation bumped by BumpAll (no collection id contains '*')

func (c *Cache) genKey(collection string) string { return c.s.key("gen", collection) }

// Key returns l1's key (which holds the R2R URL, the credential's identity, the tool, the
// arguments and the local generations) extended with the Redis generations of k's
// collection and the global one. Without Redis the key is marked local, so that results
// cached while Redis was away are never mistaken for results under a Redis generation.
func (c *Cache) Key(k cache.Key) (string, error) {
	base, err := c.l1.Key(k)
	if err != nil {
		return "", err
	}
	c.replay()
	var gens []any
	err = c.s.do(context.Background(), "generations", func(ctx context.Context) error {
		var err error
		gens, err = c.s.rdb.MGet(ctx, c.genKey(k.Collection), c.genKey(globalGen)).Result()
		return err
	})
	if err != nil {
		return base + "local", nil
	}
	buf := []byte(base)
	for _, g := range gens {
		n, _ := g.(string) // nil = never bumped = 0
		v, _ := strconv.ParseUint(n, 10, 64)
		buf = binary.AppendUvarint(buf, v)
	}
	return string(buf), nil
}

// GetOrLoad is l1's GetOrLoad: values that cannot be encoded stay in this process.
func (c *Cache) GetOrLoad(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error)) (any, bool, error) {
	v, hit, err := c.l1.GetOrLoad(ctx, kind, key, load)
	if o := c.s.obs; o != nil && (err == nil || hit) {
		o.CacheLookup("l1", hit)
	}
	return v, hit, err
}

// GetOrLoadShared looks in l1, then in Redis (decoding with decode), then runs load and
// stores its result in both for the TTL of kind, in Redis as JSON. Errors of load are
// returned and never stored; a Redis failure, or a value Redis holds that does not decode,
// is only a miss (tools.SharedCache).
func (c *Cache) GetOrLoadShared(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error),
	decode func([]byte) (any, error)) (any, bool, error) {
	ttl := c.l1.TTL(kind)
	if ttl <= 0 {
		v, err := load(ctx)
		return v, false, err
	}
	fromL2 := false
	l2 := c.s.key("r", hexKey(key))
	v, hit, err := c.l1.GetOrLoad(ctx, kind, key, func(ctx context.Context) (any, error) {
		var b []byte
		gerr := c.s.do(ctx, "get", func(rctx context.Context) error {
			var err error
			b, err = c.s.rdb.Get(rctx, l2).Bytes()
			return err
		})
		if gerr == nil {
			if v, err := decode(b); err == nil {
				fromL2 = true
				return v, nil
			}
		}
		v, err := load(ctx)
		if err != nil {
			return nil, err
		}
		if gerr != ErrUnavailable {
			if b, err := json.Marshal(v); err == nil {
				_ = c.s.do(ctx, "set", func(rctx context.Context) error { return c.s.rdb.Set(rctx, l2, b, ttl).Err() })
			}
		}
		return v, nil
	})
	if o := c.s.obs; o != nil && (err == nil || hit) {
		o.CacheLookup("l1", hit)
		if !hit {
			o.CacheLookup("l2", fromL2)
		}
	}
	return v, hit || fromL2, err
}

// Bump invalidates collection's results on every replica: the local generation at once,
// the shared one in Redis (replayed later if Redis is away).
func (c *Cache) Bump(collection string) {
	c.l1.Bump(collection)
	c.bumpShared(collection)
}

// BumpAll invalidates every result on every replica.
func (c *Cache) BumpAll() {
	c.l1.BumpAll()
	c.bumpShared(globalGen)
}

func (c *Cache) bumpShared(gen string) {
	err := c.s.do(context.Background(), "bump", func(ctx context.Context) error {
		return c.s.rdb.Incr(ctx, c.genKey(gen)).Err()
	})
	if err != nil {
		c.s.mu.Lock()
		c.s.pending[gen] = true
		c.s.mu.Unlock()
	}
}

// replay sends the bumps Redis missed while it was away.
func (c *Cache) replay() {
	c.s.mu.Lock()
	if len(c.s.pending) == 0 {
		c.s.mu.Unlock()
		return
	}
	gens := make([]string, 0, len(c.s.pending))
	for g := range c.s.pending {
		gens = append(gens, g)
	}
	clear(c.s.pending)
	c.s.mu.Unlock()
	err := c.s.do(context.Background(), "bump", func(ctx context.Context) error {
		_, err := c.s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, g := range gens {
				p.Incr(ctx, c.genKey(g))
			}
			return nil
		})
		return err
	})
	if err != nil {
		c.s.mu.Lock()
		for _, g := range gens {
			c.s.pending[g] = true
		}
		c.s.mu.Unlock()
	}
}

// Stats reports l1's counters.
func (c *Cache) Stats() cache.Stats { return c.l1.Stats() }
