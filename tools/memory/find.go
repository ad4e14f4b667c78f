package memory

import (
	"context"
	"slices"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// List returns q's memories newest first, reading the collection's documents (q.Text is
// ignored) until limit of them (and one more, for More) are found. limit < 0 returns all.
// A memory another one supersedes is left out, whoever saved either: the superseding one
// is newer, so it is read first.
func (s *Store) List(ctx context.Context, q Query, limit int) (Listing, error) {
	var out Listing
	if ok, err := s.resolve(ctx, &q); err != nil || !ok {
		return out, err
	}
	var found []Memory
	gone := map[string]bool{}
	shown := func() int {
		n := 0
		for _, m := range found {
			if !gone[m.ID] {
				n++
			}
		}
		return n
	}
	page := scanPage
	if limit >= 0 {
		page = listPage
	}
	err := s.scanPages(ctx, page, func(doc r2r.Document) bool {
		m, ok := FromDocument(doc)
		if !ok {
			return true
		}
		if m.Supersedes != "" {
			gone[m.Supersedes] = true
		}
		if q.Match(m) {
			found = append(found, m)
		}
		return limit < 0 || shown() <= limit
	}, &out.Truncated)
	if err != nil {
		return Listing{}, err
	}
	found = slices.DeleteFunc(found, func(m Memory) bool { return gone[m.ID] })
	newestFirst(found)
	if limit >= 0 && len(found) > limit {
		found, out.More = found[:limit], true
	}
	s.withAuthors(ctx, found)
	out.Memories = found
	return out, nil
}

// Search finds q's memories by q.Text: a hybrid search restricted to the collection and
// to memories, best first, one entry per memory, none that another memory supersedes.
func (s *Store) Search(ctx context.Context, q Query) ([]Memory, error) {
	if ok, err := s.resolve(ctx, &q); err != nil || !ok {
		return nil, err
	}
	limit := q.limit()
	res, err := s.API.Search(ctx, r2r.SearchRequest{Query: q.Text, SearchMode: r2r.SearchModeCustom,
		SearchSettings: r2r.ModeSettings(r2r.SearchModeAdvanced, r2r.ScopedFilters(s.CollectionID, q.Filter()), min(3*limit, 100))})
	if err != nil {
		return nil, err
	}
	var ms []Memory
	seen := map[string]bool{}
	for _, c := range res.ChunkSearchResults {
		if seen[c.DocumentID] {
			continue
		}
		seen[c.DocumentID] = true
		if m, ok := FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && q.Match(m) {
			ms = append(ms, m)
		}
	}
	ms, err = s.current(ctx, ms)
	if err != nil {
		return nil, err
	}
	if len(ms) > limit {
		ms = ms[:limit]
	}
	s.withAuthors(ctx, ms)
	return ms, nil
}

// findOwn returns the id of user's memory of content sha in the collection, found by a
// full-text search (see fullText); "" when there is none (or it is not searchable yet).
func (s *Store) findOwn(ctx context.Context, userID, sha string) (string, error) {
	res, err := fullText(ctx, s.API, s.CollectionID, 1, map[string]any{"$and": []any{
		map[string]any{"owner_id": map[string]any{"$eq": userID}},
		map[string]any{MetaSHA: map[string]any{"$eq": sha}},
	}})
	if err != nil {
		return "", err
	}
	for _, c := range res.ChunkSearchResults {
		if m, ok := FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && m.OwnerID == userID && m.SHA == sha {
			return m.ID, nil
		}
	}
	return "", nil
}

// Searcher is the part of R2R's API Superseded uses.
type Searcher interface {
	Search(ctx context.Context, req r2r.SearchRequest) (*r2r.SearchResult, error)
}

// supersededLimit bounds the chunks one Superseded search returns.
const supersededLimit = 1000

// Superseded returns which of ids (documents of collection collectionID) a memory of the
// collection supersedes, whoever saved it: one search (see fullText) among the memories
// whose supersedes is one of ids. No request for no ids.
func Superseded(ctx context.Context, api Searcher, collectionID string, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	res, err := fullText(ctx, api, collectionID, supersededLimit,
		map[string]any{MetaSupersedes: map[string]any{"$in": anyList(ids)}})
	if err != nil {
		return nil, err
	}
	gone := map[string]bool{}
	for _, c := range res.ChunkSearchResults {
		if m, ok := FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && slices.Contains(ids, m.Supersedes) {
			gone[m.Supersedes] = true
		}
	}
	return gone, nil
}

// ExcludeSuperseded returns the filter that leaves out of a search the memories of
// collection collectionID another memory supersedes, nil when there are none: for a
// search R2R answers itself (RAG), whose hits cannot be filtered afterwards. The ids come
// from one search (see fullText) for the memories that name one, up to supersededLimit
// chunks.
func ExcludeSuperseded(ctx context.Context, api Searcher, collectionID string) (map[string]any, error) {
	res, err := fullText(ctx, api, collectionID, supersededLimit,
		map[string]any{MetaSupersedes: map[string]any{"$like": "%"}})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range res.ChunkSearchResults {
		if m, ok := FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && m.Supersedes != "" && !slices.Contains(ids, m.Supersedes) {
			ids = append(ids, m.Supersedes)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	return map[string]any{"document_id": map[string]any{"$nin": anyList(ids)}}, nil
}

// fullText searches the memories of collection collectionID that filter selects, up to
// limit chunks: a full-text search for the word every memory's label starts with, which
// applies the filter exactly (a vector index applies it after choosing its candidates).
func fullText(ctx context.Context, api Searcher, collectionID string, limit int, filter map[string]any) (*r2r.SearchResult, error) {
	filter = map[string]any{"$and": []any{map[string]any{MetaKind: map[string]any{"$in": anyList(Kinds)}}, filter}}
	return api.Search(ctx, r2r.SearchRequest{Query: "memory", SearchMode: r2r.SearchModeCustom,
		SearchSettings: r2r.FullTextSettings(r2r.ScopedFilters(collectionID, filter), limit)})
}

// current leaves out of ms the memories a later one superseded.
func (s *Store) current(ctx context.Context, ms []Memory) ([]Memory, error) {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	gone, err := Superseded(ctx, s.API, s.CollectionID, ids)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ms, func(m Memory) bool { return gone[m.ID] }), nil
}
