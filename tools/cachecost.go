package tools

import (
	"unsafe"

	"github.com/r2r-mcp/r2r-mcp/cache"
)

// heapSizer is a cached value that knows the heap it holds: the allocations it reaches
// that nothing else keeps alive, each as the allocator rounds it (cache.HeapBytes).
type heapSizer interface{ heapSize() int }

// heapSize counts the answer's own allocations besides a's struct, which holds it (the
// cached value counts that): the hit's copy of the output, the texts and the hit's JSON
// when it keeps one. Out and the hit share their results, counted once in Out.
func (a answer[T]) heapSize() int {
	n := a.Out.heapSize() + cache.HeapBytes(cap(a.HitJSON))
	if a.hit != nil {
		n += cache.HeapBytes(int(unsafe.Sizeof(*a.hit)))
	}
	if a.hitText != "" { // Text is its tail
		return n + cache.HeapBytes(len(a.hitText))
	}
	return n + cache.HeapBytes(len(a.Text))
}

// heapSize counts the hits and the strings o holds, not o's own struct. A hit's ShortID is
// the head of its DocumentID.
func (o SearchOutput) heapSize() int {
	n := cache.HeapBytes(cap(o.Results)*int(unsafe.Sizeof(SearchHit{}))) + cache.HeapBytes(len(o.Query)) +
		cache.HeapBytes(len(o.SearchMode)) + cache.HeapBytes(len(o.CollectionID)) + cache.HeapBytes(len(o.CollectionName)) +
		cache.HeapBytes(len(o.Note)) + cache.HeapBytes(cap(o.filterFields)*int(unsafe.Sizeof("")))
	for _, f := range o.filterFields {
		n += cache.HeapBytes(len(f))
	}
	for i := range o.Results {
		h := &o.Results[i]
		n += cache.HeapBytes(len(h.Title)) + cache.HeapBytes(len(h.Section)) + cache.HeapBytes(len(h.DocumentID)) +
			cache.HeapBytes(len(h.Text))
	}
	return n
}

// heapSize counts the sources and the strings o holds, not o's own struct.
func (o RAGOutput) heapSize() int {
	n := cache.HeapBytes(cap(o.Sources)*int(unsafe.Sizeof(RAGSource{}))) + cache.HeapBytes(len(o.Answer)) +
		cache.HeapBytes(len(o.ModelUsed)) + cache.HeapBytes(len(o.Question)) + cache.HeapBytes(len(o.CollectionID)) +
		cache.HeapBytes(len(o.CollectionName)) + cache.HeapBytes(len(o.Note))
	for i := range o.Sources {
		s := &o.Sources[i]
		n += cache.HeapBytes(len(s.ID)) + cache.HeapBytes(len(s.Title)) + cache.HeapBytes(len(s.DocumentID)) +
			cache.HeapBytes(len(s.URI))
	}
	return n
}
