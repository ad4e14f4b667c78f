package rank

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/passage"
)

// BM25's usual parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Lexical orders chunks by BM25 of the question's terms over each chunk's text and its
// document's title, with the statistics of the chunks themselves (the candidates a search
// retrieved): a rare word of the question that a chunk holds counts most. Words are split
// the way code names things, so arrayFormat also counts as "array" and "format" and
// ttl_cache as "ttl" and "cache". Chunks holding no term keep their order after the others.
// The input is not changed.
func Lexical(query string, chunks []r2r.ChunkSearchResult) []r2r.ChunkSearchResult {
	memo := map[string][]string{}
	q := slices.Compact(slices.Sorted(slices.Values(terms(query, memo))))
	if len(q) == 0 || len(chunks) < 2 {
		return chunks
	}
	tfs := make([]map[string]int, len(chunks))
	df := map[string]int{}
	total := 0
	lens := make([]int, len(chunks))
	for i, c := range chunks {
		title, _ := c.Metadata["title"].(string)
		ts := terms(title+" "+c.Text, memo)
		lens[i] = len(ts)
		total += len(ts)
		tfs[i] = map[string]int{}
		for _, t := range ts {
			tfs[i][t]++
		}
		for _, t := range q {
			if tfs[i][t] > 0 {
				df[t]++
			}
		}
	}
	avg := float64(total) / float64(len(chunks))
	n := float64(len(chunks))
	scores := make([]float64, len(chunks))
	for i := range chunks {
		for _, t := range q {
			tf := float64(tfs[i][t])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			scores[i] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(lens[i])/max(avg, 1)))
		}
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	out := make([]r2r.ChunkSearchResult, len(chunks))
	for i, j := range order {
		out[i] = chunks[j]
	}
	return out
}

// terms are the stems of text's topic words (stop words dropped, as passage.Terms does),
// each word also counted by the parts of its name: camelCase, PascalCase and snake_case
// split where the case or an underscore changes. memo keeps each distinct word's terms.
func terms(text string, memo map[string][]string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		t, ok := memo[w]
		if !ok {
			t = passage.Terms(w)
			if parts := nameParts(w); len(parts) > 1 {
				for _, p := range parts {
					t = append(t, passage.Terms(p)...)
				}
			}
			memo[w] = t
		}
		out = append(out, t...)
	}
	return out
}

// nameParts splits an identifier at underscores and case changes: parseArrayValue → parse,
// Array, Value; LRUCache → LRU, Cache; ttl_cache → ttl, cache.
func nameParts(w string) []string {
	var parts []string
	r := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(r[start:end]))
		}
	}
	for i := 0; i < len(r); i++ {
		switch {
		case r[i] == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r[i]) &&
			(unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1]))):
			flush(i)
			start = i
		}
	}
	flush(len(r))
	return parts
}
