package tools

import (
	"fmt"
	"math"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/chunking"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/passage"
)

// What a search hit shows.
const (
	// fetchPerDoc is how many chunks r2r_search asks R2R for per document wanted, up to
	// maxFetch: a document's neighbouring chunks are near-duplicates (R2R's default chunking
	// repeats half of each chunk in the next), so limit chunks cover fewer documents.
	fetchPerDoc = 3
	maxFetch    = 200
	// maxTitleChars and maxSectionChars bound the metadata-derived strings of a hit.
	maxTitleChars   = 160
	maxSectionChars = 120
	// minWindowChars is the shortest window shown before hits are left out instead.
	minWindowChars = 60
)

// windowChars are the window lengths by rank before scaling to the budget (the last entry
// holds for every later rank): the best-ranked documents hold the answer most often, so they
// get the room for a few sentences.
var windowChars = []int{1800, 800, 400, 200, 150, 100}

// windowScales are the factors tried on windowChars, largest first, until a result fits.
var windowScales = []float64{1, 0.85, 0.72, 0.6, 0.5, 0.42, 0.34, 0.27, 0.2, 0.14, 0.1}

// fetchLimit is how many chunks to ask R2R for to fill limit documents.
func fetchLimit(limit int) int { return min(max(limit, min(limit*fetchPerDoc, maxFetch)), 1000) }

// passageChunks are a search's chunks as the passage package reads them: cleaned, without
// R2R's title header, and the heading path and part number of a chunk r2r-mcp made apart
// from its text.
func passageChunks(chunks []r2r.ChunkSearchResult) []passage.Chunk {
	out := make([]passage.Chunk, len(chunks))
	for i, c := range chunks {
		section, part, text := chunkContext(stripTitlePrefix(c.Text), c.Metadata)
		out[i] = passage.Chunk{DocumentID: c.DocumentID, Text: Sanitize(text), Section: Sanitize(section), Part: part, Score: c.Score}
	}
	return out
}

// madeHere says whether a document's metadata names the chunking r2r-mcp made its chunks with.
func madeHere(md map[string]any) bool {
	v, _ := md[kbsync.MetaChunking].(string)
	return v == chunking.Version
}

// chunkContext splits a chunk r2r-mcp made (its metadata names the chunking) into the
// heading path and part number of its context line and its text; other chunks are all text.
func chunkContext(text string, md map[string]any) (section string, part int, body string) {
	if !madeHere(md) {
		return "", 0, text
	}
	return chunking.Context(text)
}

// fitHits turns the documents of set into hits whose JSON (with o around them) and text
// (size measures it) both fit budget bytes: the longest windows of windowScales that fit,
// and when even the shortest do not, hits left out from the end (o.Note says so).
func fitHits(o *SearchOutput, set *passage.Set, titles []string, budget int, size func([]SearchHit) int) []SearchHit {
	top := 0.0
	if len(set.Docs) > 0 {
		top = set.Docs[0].Score
	}
	hits := make([]SearchHit, len(set.Docs))
	for i, d := range set.Docs {
		hits[i] = SearchHit{Rank: i + 1, Relevance: relevance(d.Score, top), Title: snippet(titles[i], maxTitleChars),
			ShortID: shortID(d.DocumentID), DocumentID: d.DocumentID}
	}
	fits := func(h []SearchHit) bool { return o.jsonSizeWith(h) <= budget && size(h) <= budget }
	for _, scale := range windowScales {
		for i, d := range set.Docs {
			n := max(minWindowChars, int(scale*float64(windowChars[min(i, len(windowChars)-1)])))
			text, section := set.Window(d, n)
			hits[i].Text, hits[i].Section = text, snippet(section, maxSectionChars)
		}
		if fits(hits) {
			return hits
		}
	}
	kept := len(hits)
	for kept > 1 {
		o.Note = fmt.Sprintf("%d more documents were left out to keep the result small; ask for a smaller limit or a narrower query.",
			len(hits)-kept)
		if fits(hits[:kept]) {
			break
		}
		kept--
	}
	return hits[:kept]
}

// relevance is a document's score relative to the best one's, 0..1 in two decimals: R2R's
// hybrid scores are reciprocal-rank sums (about 0.02 for every hit), which say nothing by
// themselves.
func relevance(score, top float64) float64 {
	if top <= 0 || score <= 0 {
		return 0
	}
	return math.Round(min(score/top, 1)*100) / 100
}
