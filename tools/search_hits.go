package tools

import (
	"fmt"
	"math"
	"slices"

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
	// minWindowChars is the shortest window of the best document before hits are left out
	// instead.
	minWindowChars = 60
	// minPassageChars is the shortest window worth its bytes, about two sentences: a document
	// whose window would be shorter is listed without one (title, relevance and id), and
	// the bytes go to the best documents' windows. Measured on make bench-quality (real R2R
	// + MiniLM, section chunks): fragments of 60-100 characters for ranks 4-10 held no answer,
	// and giving their bytes to ranks 1-3 lifted answer in view from 66% to 76%.
	minPassageChars = 200
)

// windowChars are the window lengths by rank before scaling to the budget (the last entry
// holds for every later rank): the best-ranked documents hold the answer most often, so they
// get the room for a few sentences.
var windowChars = []int{1800, 800, 400, 200, 150, 100}

// The scale of windowChars that fits the budget is found between minScale and 1 by
// halving the interval maxScaleSteps times.
const (
	minScale      = 0.1
	maxScaleSteps = 7
)

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
// The chunk's metadata (R2R copies the document's into it) names the file the context line
// starts with.
func chunkContext(text string, md map[string]any) (section string, part int, body string) {
	if !madeHere(md) {
		return "", 0, text
	}
	file, _ := md[kbsync.MetaSourcePath].(string)
	return chunking.Context(text, file)
}

// fitHits turns the documents of set into hits whose JSON (with o around them) and text
// (size measures it) both fit budget bytes: windows of windowChars scaled by the largest
// factor that fits (found to within maxScaleSteps halvings), a document whose window would
// be shorter than minPassageChars listed without one, and when even the shortest windows do
// not fit, hits left out from the end (o.Note says so).
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
	at := func(scale float64) []SearchHit {
		out := slices.Clone(hits)
		for i, d := range set.Docs {
			n := int(scale * float64(windowChars[min(i, len(windowChars)-1)]))
			switch {
			case i == 0:
				n = max(n, minWindowChars)
			case n < minPassageChars:
				continue
			}
			text, section := set.Window(d, n)
			out[i].Text, out[i].Section = text, snippet(section, maxSectionChars)
		}
		return out
	}
	if h := at(1); fits(h) {
		return h
	}
	lo, hi := minScale, 1.0
	low := at(lo) // the shortest windows: the search's start when they fit, else what is cut
	if fits(low) {
		best := low
		for range maxScaleSteps {
			mid := (lo + hi) / 2
			if h := at(mid); fits(h) {
				best, lo = h, mid
			} else {
				hi = mid
			}
		}
		return best
	}
	hits = low
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
