package cache

import (
	"runtime"
	"testing"
)

// TestEmptyCacheHeap: a cache's own structures (ristretto's frequency sketch, its bloom
// filter, its buffers), built on the first Set, are sized for the entries the cache holds
// when full (about 10 KiB each for a ten-hit search answer), and take a small part of
// what the cache may hold: under 3% of MaxBytes (ristretto's set buffer alone is 256 KiB).
func TestEmptyCacheHeap(t *testing.T) {
	const maxBytes = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := New(Config{MaxBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	c.Set(KindSearch, "k", "v")
	runtime.GC()
	runtime.ReadMemStats(&after)
	defer c.Close()
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > maxBytes*3/100 {
		t.Errorf("an empty %d-byte cache holds %d bytes of heap, more than 3%%", maxBytes, held)
	}
}

// TestEntryBytes: what the cache holds for an entry besides its value is what entryBytes
// counts, within the spread of its maps' growth.
func TestEntryBytes(t *testing.T) {
	const n = 4000
	c, err := New(Config{MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Set(KindSearch, "first", "x") // builds the store
	keys := make([]string, n)
	for i := range keys {
		keys[i] = mustKey(t, c, Key{Tool: "t", Args: map[string]any{"i": i}})
	}
	value := "v"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		if !c.Set(KindSearch, k, value) {
			t.Fatal("Set refused")
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	if perEntry < 0.6*entryBytes || perEntry > 1.4*entryBytes {
		t.Errorf("an entry holds %.0f bytes besides its value; entryBytes is %d", perEntry, entryBytes)
	}
	runtime.KeepAlive(keys)
}
