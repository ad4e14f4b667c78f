package tools

import (
	"context"
	"sync"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/rank"
)

// defaultSearchLimit is r2r_search's default limit (documents).
const defaultSearchLimit = 10

// fuseWeights weigh the ranked lists retrieve fuses: R2R's hybrid search, the identifier
// search, the lexical ordering. The identifier search counts half: it is there to bring in
// the chunks that hold a question's names, and its order (a full-text match of a few names,
// capitalised words of prose among them) is word evidence the lexical ordering already counts.
var fuseWeights = []float64{1, 0.5, 1}

// retrieve is the chunks of one search, best first, at most limit. In advanced mode
// (semantic + full-text) R2R's hybrid search runs beside a full-text search for the
// question's identifiers (rank.Keywords; R2R's own full-text leg needs every word of the
// question in one chunk), and the two lists and a lexical ordering of their chunks
// (rank.Lexical) are fused by rank (fuseWeights), with the chunks of tests and change logs weighed down
// unless the question asks about them (rank.Demote). The identifier search is best-effort: its
// failure, other than the caller's cancellation, leaves the hybrid search alone, and the
// result is then not complete (not to be cached: the next call may have both searches).
// Other modes are R2R's search as it is.
func (d *Deps) retrieve(ctx context.Context, query, mode string, filters map[string]any, limit int) (chunks []r2r.ChunkSearchResult, complete bool, err error) {
	search := func(ctx context.Context, q string, settings *r2r.SearchSettings) ([]r2r.ChunkSearchResult, error) {
		res, err := d.Client.Search(ctx, r2r.SearchRequest{Query: q, SearchMode: r2r.SearchModeCustom, SearchSettings: settings})
		if err != nil {
			return nil, err
		}
		return res.ChunkSearchResults, nil
	}
	if mode != r2r.SearchModeAdvanced {
		chunks, err := search(ctx, query, r2r.ModeSettings(mode, filters, limit))
		return chunks, err == nil, err
	}
	var keyword []r2r.ChunkSearchResult
	var kerr error
	var wg sync.WaitGroup
	if kw := rank.Keywords(query); kw != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keyword, kerr = search(ctx, kw, r2r.FullTextSettings(filters, limit))
		}()
	}
	hybrid, err := search(ctx, query, r2r.ModeSettings(mode, filters, limit))
	wg.Wait()
	if err != nil {
		return nil, false, err
	}
	if kerr != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		// The identifier leg only adds to the hybrid search: without it the answer is R2R's
		// own search, which is better than none.
		d.logger().Warn("identifier search failed; answering from the hybrid search alone", "error", Sanitize(kerr.Error()))
		keyword = nil
	}
	lexical := rank.Lexical(query, rank.Fuse(hybrid, keyword))
	out := rank.Demote(query, rank.FuseWeighted(fuseWeights, hybrid, keyword, lexical))
	return out[:min(len(out), limit)], kerr == nil, nil
}

// ragSettings are the search settings of a RAG request: R2R's search narrowed to the
// ragSearchLimit chunks r2r_search's retrieval ranks best for the question among the
// candidates a default r2r_search weighs, so the answer draws on what r2r_search finds; R2R's
// own search when that finds nothing. complete is retrieve's.
func (d *Deps) ragSettings(ctx context.Context, question string, filters map[string]any) (settings *r2r.SearchSettings, complete bool, err error) {
	chunks, complete, err := d.retrieve(ctx, question, ragSearchMode, filters, fetchLimit(defaultSearchLimit))
	if err != nil {
		return nil, false, err
	}
	settings = r2r.ModeSettings(ragSearchMode, filters, ragSearchLimit)
	if len(chunks) == 0 {
		return settings, complete, nil
	}
	ids := make([]string, 0, ragSearchLimit)
	for _, c := range chunks[:min(len(chunks), ragSearchLimit)] {
		ids = append(ids, c.ID)
	}
	settings.Filters = r2r.ChunkFilters(filters, ids)
	return settings, complete, nil
}
