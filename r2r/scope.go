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
// custom leaves R2R's default kinds. R2R's own "advanced" preset is not used because it adds
// HyDE, which costs LLM calls. Hybrid keeps R2R's own weights and rrf_k: the quality
// benchmark found other weights and rrf_k 60 no better (README, Quality). R2R's graph
// search is off (noGraph).
func ModeSettings(mode string, filters map[string]any, limit int) *SearchSettings {
	t, f := true, false
	s := &SearchSettings{Filters: filters, Limit: &limit, GraphSettings: noGraph()}
	switch mode {
	case SearchModeBasic:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &f, &f
	case SearchModeAdvanced:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &t, &t
	}
	return s
}

// noGraph turns off the knowledge-graph search R2R 3.6.6 runs beside every chunk search
// (three queries, and an embedding of the query when no semantic leg shares one): r2r-mcp
// reads chunks only, and a RAG request it narrows to chosen chunk ids leaves the graph no
// match. Measured on the prose set's collection (real R2R + MiniLM, paired): a hybrid
// search 67 → 59 ms, a full-text one 68 → 15 ms (median).
func noGraph() *GraphSettings {
	f := false
	return &GraphSettings{Enabled: &f}
}

// FullTextSettings are search settings for R2R's full-text search alone (Postgres
// websearch_to_tsquery over the chunks' English stems), to be sent under search_mode "custom",
// without the graph search (noGraph).
func FullTextSettings(filters map[string]any, limit int) *SearchSettings {
	t, f := true, false
	return &SearchSettings{Filters: filters, Limit: &limit, UseSemanticSearch: &f, UseFulltextSearch: &t, UseHybridSearch: &f,
		GraphSettings: noGraph()}
}

// ChunkFilters narrows filters to the chunks whose ids are given: R2R 3.6.6 reads "id" as
// the chunk's own column (conformance test filter_chunk_id_in), so a RAG request retrieves
// exactly chunks its caller chose.
func ChunkFilters(filters map[string]any, ids []string) map[string]any {
	in := make([]any, len(ids))
	for i, id := range ids {
		in[i] = id
	}
	parts := []any{map[string]any{"id": map[string]any{"$in": in}}}
	if len(filters) > 0 {
		parts = append(parts, filters)
	}
	return map[string]any{"$and": parts}
}

// View is what one user of a team project reads: the team collection, where the team's
// version of each file is, and their private collection (Private, "" = none), whose files
// (Shadow, their paths) replace the team's version of the same path in their results only.
type View struct {
	Team    string
	Private string
	Shadow  []string
}

// ViewFilters restricts a search to a View: the private collection's documents, and the team
// collection's except those of a path in Shadow (documents without a source path, such as
// memories, stay). Like ScopedFilters, the condition is wrapped in $and with the caller's
// filters. R2R 3.6.6 ands the whole of it with the user's access (owner or member), and
// reads a metadata key a document lacks as NULL, which $nin does not match: hence the
// explicit "no source path" alternative (conformance test team/member_view).
func ViewFilters(v View, caller map[string]any) map[string]any {
	if v.Private == "" && len(v.Shadow) == 0 {
		return ScopedFilters(v.Team, caller)
	}
	var team any = map[string]any{"collection_ids": map[string]any{"$overlap": []any{v.Team}}}
	if len(v.Shadow) > 0 {
		shadow := make([]any, len(v.Shadow))
		for i, p := range v.Shadow {
			shadow[i] = p
		}
		team = map[string]any{"$and": []any{team, map[string]any{"$or": []any{
			map[string]any{"metadata.source_path": map[string]any{"$nin": shadow}},
			map[string]any{"metadata.source_path": map[string]any{"$eq": nil}},
		}}}}
	}
	either := team
	if v.Private != "" {
		either = map[string]any{"$or": []any{map[string]any{"collection_ids": map[string]any{"$overlap": []any{v.Private}}}, team}}
	}
	parts := []any{either}
	if len(caller) > 0 {
		parts = append(parts, caller)
	}
	return map[string]any{"$and": parts}
}
