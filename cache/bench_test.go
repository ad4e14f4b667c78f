package cache

import (
	"bytes"
	"strconv"
	"testing"
)

// searchArgs are the effective arguments of a typical r2r_search call.
func searchArgs(query string) map[string]any {
	return map[string]any{
		"query":         query,
		"limit":         float64(10),
		"search_mode":   "custom",
		"use_hybrid":    true,
		"filters":       map[string]any{"collection_ids": map[string]any{"$overlap": []any{"3f0c1a6e-6a4b-4f4e-9d7e-2c1b0e5a9f11"}}},
		"include_chunk": false,
	}
}

func benchKey(query string) Key {
	return Key{R2RURL: "https://r2r.example.com", Identity: "sha256:4f1c2a9b7e3d", Tool: "r2r_search",
		Collection: "3f0c1a6e-6a4b-4f4e-9d7e-2c1b0e5a9f11", Args: searchArgs(query)}
}

func BenchmarkKey(b *testing.B) {
	c := newTestCache(b, Config{MaxBytes: 16 << 20})
	k := benchKey("how does the retry policy work")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Key(k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyStruct covers the slower path for arguments that are not plain JSON data.
func BenchmarkKeyStruct(b *testing.B) {
	type args struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
		Mode  string `json:"search_mode"`
	}
	c := newTestCache(b, Config{MaxBytes: 16 << 20})
	k := Key{R2RURL: "https://r2r.example.com", Identity: "id", Tool: "r2r_search", Collection: "c",
		Args: args{"how does the retry policy work", 10, "custom"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Key(k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := newTestCache(b, Config{MaxBytes: 16 << 20})
	key := mustKey(b, c, benchKey("q"))
	if !c.Set(KindSearch, key, bytes.Repeat([]byte("r"), 4<<10)) {
		b.Fatal("Set not stored")
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := c.Get(key); !ok {
				b.Fatal("miss")
			}
		}
	})
}

// BenchmarkSetGet stores a 4 KiB result under a fresh key (Set waits until it is applied) and
// reads it back.
func BenchmarkSetGet(b *testing.B) {
	c := newTestCache(b, Config{MaxBytes: 16 << 20})
	val := bytes.Repeat([]byte("r"), 4<<10)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = mustKey(b, c, benchKey("query "+strconv.Itoa(i)))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		key := keys[i%len(keys)]
		i++
		if !c.Set(KindSearch, key, val) {
			b.Fatal("Set not stored")
		}
		if _, ok := c.Get(key); !ok {
			b.Fatal("miss after Set")
		}
	}
}
