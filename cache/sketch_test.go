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
