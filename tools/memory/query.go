package memory

import (
	"slices"
	"strings"
	"time"
)

// Query selects memories: by search text (hybrid search), or newest first without one.
type Query struct {
	Text   string   // "" = newest first
	Kinds  []string // nil = every kind
	Path   string   // a project file the memory names
	Tag    string   // one of its tags
	Author string   // who saved it: an email, or a name, as R2R knows the user
	// OwnerIDs are the R2R users Author names (Store resolves them); with Author set and
	// none of them, nothing matches.
	OwnerIDs []string
	Since    time.Time // zero = any age
	Limit    int       // results wanted; 0 = 10
}

func (q Query) limit() int {
	if q.Limit <= 0 {
		return 10
	}
	return q.Limit
}

// Filter is the R2R filter that selects q's memories (collection aside: see
// r2r.ScopedFilters). Every key is one of the namespaced metadata keys but the author's,
// which is R2R's owner_id column.
func (q Query) Filter() map[string]any {
	kinds := q.Kinds
	if len(kinds) == 0 {
		kinds = Kinds
	}
	parts := []any{map[string]any{MetaKind: map[string]any{"$in": anyList(kinds)}}}
	if q.Path != "" {
		parts = append(parts, map[string]any{MetaPaths: map[string]any{"$contains": []any{q.Path}}})
	}
	if q.Tag != "" {
		parts = append(parts, map[string]any{MetaTags: map[string]any{"$contains": []any{q.Tag}}})
	}
	if q.Author != "" {
		parts = append(parts, map[string]any{"owner_id": map[string]any{"$in": anyList(q.OwnerIDs)}})
	}
	if !q.Since.IsZero() {
		parts = append(parts, map[string]any{MetaCreatedSec: map[string]any{"$gte": q.Since.Unix()}})
	}
	return map[string]any{"$and": parts}
}

// Match reports whether m is one of q's memories (what Filter asks R2R, checked here too:
// a listing has no filter, and a search hit's metadata is only a claim).
func (q Query) Match(m Memory) bool {
	switch {
	case len(q.Kinds) > 0 && !slices.Contains(q.Kinds, m.Kind):
		return false
	case q.Path != "" && !slices.Contains(m.Paths, q.Path):
		return false
	case q.Tag != "" && !slices.Contains(m.Tags, q.Tag):
		return false
	case q.Author != "" && !slices.Contains(q.OwnerIDs, m.OwnerID):
		return false
	case !q.Since.IsZero() && m.Created.Before(q.Since.Truncate(time.Second)):
		return false
	}
	return true
}

// newestFirst orders memories by creation time, newest first (ties by id).
func newestFirst(ms []Memory) {
	slices.SortStableFunc(ms, func(a, b Memory) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
