package r2r

// ScopedFilters restricts a search to one collection. The condition is always wrapped in
// $and, even without caller filters: R2R rewrites a top-level collection_ids key for
// non-superusers into "mine OR in these collections", which would let the caller's documents
// from other collections into collection-scoped results (r2r/conformance:
// the *_collection_filter_* checks of TestLive). Without a collection it restricts nothing
// beyond what R2R lets the user read: the caller's filters alone, or none.
func ScopedFilters(collectionID string, caller map[string]any) map[string]any {
	if collectionID == "" { // no collection: everything the user may read (serve --http's default)
		if len(caller) == 0 {
			return nil
		}
		return map[string]any{"$and": []any{caller}}
	}
	parts := []any{map[string]any{"collection_ids": map[string]any{"$overlap": []any{collectionID}}}}
	if len(caller) > 0 {
		parts = append(parts, caller)
	}
	return map[string]any{"$and": parts}
}

// ModeSettings are explicit search settings for one of r2r-mcp's modes, to be sent under
// search_mode "custom": basic is semantic only, advanced is hybrid (semantic + full-text),
// custom leaves R2R's defaults. R2R's own "advanced" preset is not used because it adds
// HyDE, which costs LLM calls. Hybrid keeps R2R's own weights and rrf_k: the quality
// benchmark found other weights and rrf_k 60 no better (README, Quality).
func ModeSettings(mode string, filters map[string]any, limit int) *SearchSettings {
	t, f := true, false
	s := &SearchSettings{Filters: filters, Limit: &limit}
	switch mode {
	case SearchModeBasic:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &f, &f
	case SearchModeAdvanced:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &t, &t
	}
	return s
}
