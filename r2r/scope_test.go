package r2r

import (
	"reflect"
	"testing"
)

func TestScopedFiltersAlwaysWrapInAnd(t *testing.T) {
	got := ScopedFilters("c1", nil)
	want := map[string]any{"$and": []any{map[string]any{"collection_ids": map[string]any{"$overlap": []any{"c1"}}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	caller := map[string]any{"document_type": map[string]any{"$eq": "md"}}
	got = ScopedFilters("c1", caller)
	and := got["$and"].([]any)
	if len(and) != 2 || !reflect.DeepEqual(and[1], caller) {
		t.Fatalf("caller filters not combined with $and: %v", got)
	}
}

func TestModeSettings(t *testing.T) {
	for _, tc := range []struct {
		mode                       string
		semantic, fulltext, hybrid bool
		set                        bool
	}{
		{SearchModeBasic, true, false, false, true},
		{SearchModeAdvanced, true, true, true, true},
		{SearchModeCustom, false, false, false, false},
	} {
		s := ModeSettings(tc.mode, map[string]any{"a": 1}, 7)
		if *s.Limit != 7 || s.Filters["a"] != 1 || s.GraphSettings == nil || s.GraphSettings.Enabled == nil || *s.GraphSettings.Enabled {
			t.Errorf("%s: %+v", tc.mode, s)
		}
		if !tc.set {
			if s.UseSemanticSearch != nil || s.UseFulltextSearch != nil || s.UseHybridSearch != nil {
				t.Errorf("%s sets search kinds: %+v", tc.mode, s)
			}
			continue
		}
		if *s.UseSemanticSearch != tc.semantic || *s.UseFulltextSearch != tc.fulltext || *s.UseHybridSearch != tc.hybrid {
			t.Errorf("%s: semantic %v fulltext %v hybrid %v", tc.mode, *s.UseSemanticSearch, *s.UseFulltextSearch, *s.UseHybridSearch)
		}
	}
}

func TestFullTextSettings(t *testing.T) {
	s := FullTextSettings(map[string]any{"a": 1}, 30)
	if *s.Limit != 30 || s.Filters["a"] != 1 || *s.UseSemanticSearch || !*s.UseFulltextSearch || *s.UseHybridSearch ||
		s.GraphSettings == nil || s.GraphSettings.Enabled == nil || *s.GraphSettings.Enabled {
		t.Errorf("%+v", s)
	}
}

func TestChunkFilters(t *testing.T) {
	in := map[string]any{"id": map[string]any{"$in": []any{"c1", "c2"}}}
	scope := ScopedFilters("col", nil)
	for _, tc := range []struct {
		name    string
		filters map[string]any
		want    map[string]any
	}{
		{"alone", nil, map[string]any{"$and": []any{in}}},
		{"with the scope", scope, map[string]any{"$and": []any{in, scope}}},
	} {
		if got := ChunkFilters(tc.filters, []string{"c1", "c2"}); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
