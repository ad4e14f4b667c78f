package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeFilters(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // normalised JSON; "" = same as in
		wantErr string
	}{
		{name: "empty", in: `{}`},
		{name: "eq", in: `{"document_type": {"$eq": "md"}}`},
		{name: "bare value", in: `{"document_type": "md"}`},
		{name: "neq rewritten", in: `{"title": {"$neq": "x"}}`, want: `{"title": {"$ne": "x"}}`},
		{name: "nested neq rewritten", in: `{"$or": [{"a": {"$neq": 1}}, {"b": {"$gt": 2}}]}`,
			want: `{"$or": [{"a": {"$ne": 1}}, {"b": {"$gt": 2}}]}`},
		{name: "every operator", in: `{"a": {"$eq": 1, "$ne": 2, "$lt": 3, "$lte": 4, "$gt": 0, "$gte": 0}, "b": {"$like": "%x%", "$ilike": "y%"}, "c": {"$in": ["x"], "$nin": ["y"]}, "collection_ids": {"$overlap": ["id"]}, "tags": {"$contains": ["t"]}, "m": {"$json_contains": {"k": "v"}}}`},
		{name: "nested metadata path", in: `{"metadata": {"title": {"$eq": "x"}}}`},
		{name: "null comparison", in: `{"summary": {"$eq": null}}`},
		{name: "and of ors", in: `{"$and": [{"$or": [{"a": 1}, {"b": 2}]}, {"c": {"$in": ["x", "y"]}}]}`},
		{name: "unknown operator", in: `{"title": {"$regex": "x"}}`, wantErr: "unknown operator $regex at filters.title; allowed operators: $eq $ne"},
		{name: "unknown top-level operator", in: `{"$not": [{"a": 1}]}`, wantErr: "unknown operator $not"},
		{name: "operator without field", in: `{"$eq": "x"}`, wantErr: "uses $eq at filters without a field"},
		{name: "operator without $", in: `{"document_type": {"eq": "md"}}`,
			wantErr: `uses "eq" at filters.document_type, which R2R would read as a metadata field and match nothing; operators start with $: write {"$eq": …}`},
		{name: "alias without $", in: `{"a": {"NEQ": 1}}`, wantErr: `operators start with $: write {"$neq": …}`},
		{name: "and needs list", in: `{"$and": {"a": 1}}`, wantErr: "needs a list of filter objects for $and"},
		{name: "or needs objects", in: `{"$or": ["a"]}`, wantErr: "needs filter objects inside $or"},
		{name: "in needs list", in: `{"a": {"$in": "x"}}`, wantErr: "needs a list for $in"},
		{name: "nin needs list", in: `{"a": {"$nin": 3}}`, wantErr: "needs a list for $nin"},
		{name: "in list of objects", in: `{"a": {"$in": [{"x": 1}]}}`, wantErr: "needs strings, numbers or booleans in $in"},
		{name: "like needs string", in: `{"a": {"$like": 3}}`, wantErr: "needs a string pattern for $like"},
		{name: "gt needs scalar", in: `{"a": {"$gt": [1]}}`, wantErr: "needs a number or string for $gt"},
		{name: "mixed keys", in: `{"a": {"$eq": 1, "b": 2}}`, wantErr: "mixes operators and field names"},
		{name: "and inside field", in: `{"a": {"$and": [{"b": 1}]}}`, wantErr: "uses $and inside a field condition"},
		{name: "duplicate after alias", in: `{"a": {"$ne": 1, "$neq": 2}}`, wantErr: "gives $ne twice"},
		{name: "eq object", in: `{"a": {"$eq": {"x": 1}}}`, wantErr: "use $json_contains"},
		{name: "empty field name", in: `{"": 1}`, wantErr: "empty field name"},
		{name: "too deep", in: strings.Repeat(`{"$and":[`, 8) + `{"a":1}` + strings.Repeat(`]}`, 8), wantErr: "nested too deeply"},
		{name: "deep but allowed", in: strings.Repeat(`{"$and":[`, 6) + `{"a":1}` + strings.Repeat(`]}`, 6)},
		{name: "json_contains too deep", in: `{"m": {"$json_contains": ` + strings.Repeat(`[`, 2000) + strings.Repeat(`]`, 2000) + `}}`, wantErr: "nested too deeply at filters.m.$json_contains"},
		{name: "json_contains too many nodes", in: `{"m": {"$json_contains": [` + strings.TrimSuffix(strings.Repeat(`[1,2,3,4,5,6,7,8,9,10],`, 20), ",") + `]}}`, wantErr: "is too large"},
		{name: "json_contains list too long", in: `{"m": {"$json_contains": [` + strings.Repeat(`1,`, 100) + `1]}}`, wantErr: "the limit is 100"},
		{name: "json_contains nested allowed", in: `{"m": {"$json_contains": {"a": [{"b": [1, "x", true, null]}]}}}`},
		{name: "list too long", in: `{"a": {"$in": [` + strings.Repeat(`"x",`, 100) + `"y"]}}`, wantErr: "the limit is 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in map[string]any
			if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
				t.Fatal(err)
			}
			got, err := normalizeFilters(in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), `argument "filters"`) {
					t.Fatalf("error does not name the argument: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			wantJSON := tt.want
			if wantJSON == "" {
				wantJSON = tt.in
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Fatalf("got %s, want %s", g, wantJSON)
			}
		})
	}
}

func TestNormalizeFiltersNodeLimit(t *testing.T) {
	var parts []string
	for i := 0; i < 60; i++ {
		parts = append(parts, `{"a":{"$in":["x","y","z"]}}`)
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(`{"$or":[`+strings.Join(parts, ",")+`]}`), &in); err != nil {
		t.Fatal(err)
	}
	if _, err := normalizeFilters(in); err == nil || !strings.Contains(err.Error(), "is too large") {
		t.Fatalf("error = %v, want a size error", err)
	}
}
