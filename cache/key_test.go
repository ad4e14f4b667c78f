package cache

import (
	"encoding/json"
	"sync"
	"testing"
)

func TestKeyNormalisation(t *testing.T) {
	type searchArgs struct {
		Query  string         `json:"query"`
		Limit  int            `json:"limit"`
		Filter map[string]any `json:"filter,omitempty"`
	}
	base := Key{R2RURL: "http://r2r:7272", Identity: "id-1", Tool: "r2r_search", Collection: "c1",
		Args: map[string]any{"query": "x", "limit": float64(10)}}
	with := func(f func(k *Key)) Key { k := base; f(&k); return k }

	tests := []struct {
		name string
		k    Key
		same bool
	}{
		{"identical", base, true},
		{"int versus float64 number", with(func(k *Key) { k.Args = map[string]any{"limit": 10, "query": "x"} }), true},
		{"struct with the same content", with(func(k *Key) { k.Args = searchArgs{Query: "x", Limit: 10} }), true},
		{"pointer to struct", with(func(k *Key) { k.Args = &searchArgs{Query: "x", Limit: 10} }), true},
		{"raw JSON, other order and spacing", with(func(k *Key) { k.Args = json.RawMessage(` {"limit": 10.0, "query":"x"}`) }), true},
		{"json.Number value", with(func(k *Key) { k.Args = map[string]any{"limit": json.Number("10"), "query": "x"} }), true},
		{"typed map", with(func(k *Key) { k.Args = map[string]string{"limit": "10", "query": "x"} }), false},
		{"trailing slash on URL", with(func(k *Key) { k.R2RURL += "/" }), true},
		{"other URL", with(func(k *Key) { k.R2RURL = "http://other:7272" }), false},
		{"other identity", with(func(k *Key) { k.Identity = "id-2" }), false},
		{"anonymous identity", with(func(k *Key) { k.Identity = "" }), false},
		{"other tool", with(func(k *Key) { k.Tool = "r2r_rag" }), false},
		{"other collection", with(func(k *Key) { k.Collection = "c2" }), false},
		{"other argument value", with(func(k *Key) { k.Args = map[string]any{"query": "y", "limit": 10} }), false},
		{"string instead of number", with(func(k *Key) { k.Args = map[string]any{"query": "x", "limit": "10"} }), false},
		{"extra argument", with(func(k *Key) { k.Args = map[string]any{"query": "x", "limit": 10, "mode": "basic"} }), false},
		{"missing argument", with(func(k *Key) { k.Args = map[string]any{"query": "x"} }), false},
		{"field boundary moved", with(func(k *Key) { k.Tool = "r2r_searchc"; k.Collection = "1" }), false},
	}
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	want := mustKey(t, c, base)
	if len(want) != keyLen {
		t.Fatalf("key length %d, want %d", len(want), keyLen)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustKey(t, c, tt.k)
			if (got == want) != tt.same {
				t.Errorf("same key = %v, want %v", got == want, tt.same)
			}
		})
	}
}

func TestKeyArgsEquivalence(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		same bool
	}{
		{"nil and empty map", nil, map[string]any{}, true},
		{"nil and raw empty object", nil, json.RawMessage(`{}`), true},
		{"nested maps in any order", map[string]any{"f": map[string]any{"a": 1, "b": []any{"x", true, nil}}},
			json.RawMessage(`{"f":{"b":["x",true,null],"a":1}}`), true},
		{"string slice and any slice", map[string]any{"ids": []string{"a", "b"}}, map[string]any{"ids": []any{"a", "b"}}, true},
		{"slice order matters", map[string]any{"ids": []string{"a", "b"}}, map[string]any{"ids": []string{"b", "a"}}, false},
		{"fraction", map[string]any{"t": 0.5}, json.RawMessage(`{"t":5e-1}`), true},
		{"fraction differs", map[string]any{"t": 0.5}, map[string]any{"t": 0.25}, false},
		{"bool differs", map[string]any{"b": true}, map[string]any{"b": false}, false},
		{"null differs from missing", map[string]any{"b": nil}, map[string]any{}, false},
		{"empty string differs from null", map[string]any{"b": ""}, map[string]any{"b": nil}, false},
		{"key and value not ambiguous", map[string]any{"ab": "c"}, map[string]any{"a": "bc"}, false},
		{"many keys beyond the stack buffer", manyKeys(40, false), manyKeys(40, true), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c *Cache // keys need no cache
			a := mustKey(t, c, Key{Tool: "t", Args: tt.a})
			b := mustKey(t, c, Key{Tool: "t", Args: tt.b})
			if (a == b) != tt.same {
				t.Errorf("same key = %v, want %v", a == b, tt.same)
			}
		})
	}
}

func manyKeys(n int, raw bool) any {
	m := map[string]any{}
	for i := range n {
		m[string(rune('A'+i))] = i
	}
	if raw {
		b, _ := json.Marshal(m)
		return json.RawMessage(b)
	}
	return m
}

func TestKeyUnencodableArgs(t *testing.T) {
	var c *Cache
	if _, err := c.Key(Key{Tool: "t", Args: map[string]any{"ch": make(chan int)}}); err == nil {
		t.Fatal("Key with a channel argument: want an error")
	}
}

func TestGenerations(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	keyOf := func(coll string) string {
		return mustKey(t, c, Key{R2RURL: "http://r2r", Tool: "r2r_search", Collection: coll, Args: map[string]any{"query": "q"}})
	}
	a0, b0, u0 := keyOf("a"), keyOf("b"), keyOf("")
	for _, k := range []string{a0, b0, u0} {
		if !c.Set(KindSearch, k, []byte("v")) {
			t.Fatal("Set of a small value was not stored")
		}
	}

	c.Bump("a")
	a1 := keyOf("a")
	if a1 == a0 {
		t.Fatal("Bump(a) did not change the key of collection a")
	}
	if _, ok := c.Get(a1); ok {
		t.Error("after Bump(a), lookup for collection a hit a stale entry")
	}
	if got := keyOf("b"); got != b0 {
		t.Error("Bump(a) changed the key of collection b")
	}
	if _, ok := c.Get(b0); !ok {
		t.Error("Bump(a) invalidated collection b")
	}
	if got := keyOf(""); got != u0 {
		t.Error("Bump(a) changed the key of collection-less entries")
	}

	c.BumpAll()
	for name, k := range map[string]string{"a": a1, "b": b0, "": u0} {
		if keyOf(name) == k {
			t.Errorf("BumpAll did not change the key of collection %q", name)
		}
	}
	if g := c.Generation("a"); g != 1 {
		t.Errorf("Generation(a) = %d, want 1", g)
	}
}

func TestBumpConcurrent(t *testing.T) {
	c := newTestCache(t, Config{MaxBytes: 1 << 20})
	const workers, bumps = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			coll := []string{"x", "y"}[w%2]
			for range bumps {
				c.Bump(coll)
				if _, err := c.Key(Key{Tool: "t", Collection: coll}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, coll := range []string{"x", "y"} {
		if g := c.Generation(coll); g != workers/2*bumps {
			t.Errorf("Generation(%s) = %d, want %d", coll, g, workers/2*bumps)
		}
	}
}

func mustKey(t testing.TB, c *Cache, k Key) string {
	t.Helper()
	s, err := c.Key(k)
	if err != nil {
		t.Fatalf("Key(%+v): %v", k, err)
	}
	return s
}
