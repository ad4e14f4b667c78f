package tools

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestCachedAnswerCostIsItsHeap builds answers as search and RAG build them, each from
// strings of its own, and compares the heap they hold (runtime.MemStats, after collections)
// with the cost the cache counts for them: a cost below the heap lets a full cache hold
// more than its bound.
func TestCachedAnswerCostIsItsHeap(t *testing.T) {
	const n = 400
	word := func(i, j, size int) string {
		return strings.Clone(strings.Repeat(fmt.Sprintf("w%d.%d ", i, j), size/4+1)[:size])
	}
	tests := []struct {
		name  string
		build func(i int) interface{ CacheSize() int }
	}{
		{"search, 10 hits", func(i int) interface{ CacheSize() int } {
			o := SearchOutput{Count: 10, Query: word(i, 99, 24), SearchMode: "hybrid", Limit: 10, CollectionID: word(i, 98, 36)}
			for j := range 10 {
				id := word(i, j, 36)
				o.Results = append(o.Results, SearchHit{Rank: j + 1, Relevance: 0.5, Title: word(i, j, 30), Section: word(i, j, 20),
					ShortID: id[:7], DocumentID: id, Text: word(i, j, 300)})
			}
			hit := o
			hit.Cached = true
			a, err := finish(o, hit, word(i, 97, 3500))
			if err != nil {
				t.Fatal(err)
			}
			return newCachedValue(a)
		}},
		{"rag, 5 sources", func(i int) interface{ CacheSize() int } {
			o := RAGOutput{Answer: word(i, 99, 1500), ModelUsed: "m", Question: word(i, 98, 40)}
			for j := range 5 {
				id := word(i, j, 36)
				o.Sources = append(o.Sources, RAGSource{ID: id[:7], Title: word(i, j, 30), DocumentID: id,
					URI: documentURI(id), Score: 0.5, Cited: j < 2})
			}
			hit := o
			hit.Cached = true
			a, err := finish(o, hit, word(i, 97, 1800))
			if err != nil {
				t.Fatal(err)
			}
			return newCachedValue(a)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := make([]interface{ CacheSize() int }, n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i := range held {
				held[i] = tt.build(i)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(after.HeapAlloc-before.HeapAlloc) / n
			cost := 0
			for _, v := range held {
				cost += v.CacheSize()
			}
			perEntry := float64(cost) / n
			if perEntry < 0.95*heap || perEntry > 1.1*heap {
				t.Errorf("an entry costs %.0f bytes and holds %.0f bytes of heap", perEntry, heap)
			}
			runtime.KeepAlive(held)
		})
	}
}
