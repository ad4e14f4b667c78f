package rank

import (
	"slices"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// rrfK is reciprocal rank fusion's constant: the usual 60, which R2R's hybrid search uses
// too, so that a chunk ranked well by several lists beats one ranked first by one list.
const rrfK = 60

// Fuse merges ranked chunk lists into one by reciprocal rank fusion: a chunk scores the sum
// of 1/(rrfK+rank) over the lists that hold it, and the result is ordered by that score
// (ties: the earlier list's order) with Score set to it. A chunk keeps the text and metadata
// of the first list that holds it. Empty lists are ignored; one list is returned as it is.
func Fuse(lists ...[]r2r.ChunkSearchResult) []r2r.ChunkSearchResult {
	w := make([]float64, len(lists))
	for i := range w {
		w[i] = 1
	}
	return FuseWeighted(w, lists...)
}

// FuseWeighted is Fuse with a weight per list multiplying its 1/(rrfK+rank) terms.
func FuseWeighted(weights []float64, lists ...[]r2r.ChunkSearchResult) []r2r.ChunkSearchResult {
	n := 0
	for _, l := range lists {
		if len(l) > 0 {
			n++
		}
	}
	if n <= 1 {
		for _, l := range lists {
			if len(l) > 0 {
				return l
			}
		}
		return nil
	}
	var out []r2r.ChunkSearchResult
	at := map[string]int{}
	for li, l := range lists {
		for rank, c := range l {
			i, ok := at[c.ID]
			if !ok {
				i = len(out)
				at[c.ID] = i
				c.Score = 0
				out = append(out, c)
			}
			out[i].Score += weights[li] / float64(rrfK+rank+1)
		}
	}
	sortByScore(out)
	return out
}

// sortByScore orders chunks by Score, highest first, keeping the order of equal ones.
func sortByScore(chunks []r2r.ChunkSearchResult) {
	slices.SortStableFunc(chunks, func(a, b r2r.ChunkSearchResult) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
}
