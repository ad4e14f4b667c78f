package rank

import (
	"slices"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func TestKeywords(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"how do I deploy the worker?", ""},
		{"What is the default maxsize?", ""}, // a capital opening the question is not a name
		{"ledger double-entry and time-to-live", ""},
		{"what KeyError text do I get from popitem on an empty LRUCache?", "KeyError or LRUCache"},
		{"which exception does Cache.__setitem__ raise?", "Cache or __setitem__"},
		{"what cache object backs ttl_cache(maxsize=None)?", "ttl_cache or maxsize or None"},
		{"when X-Forwarded-For lists several addresses, which one does RealIP take?", "X-Forwarded-For or RealIP"},
		{"which utf8 value does parse treat as the iso-8859-1 sentinel?", "utf8 or iso-8859-1"},
		{"what does --dry-run or -v print?", "dry-run"},
		{`where is the error "connection refused by upstream" raised?`, `"connection refused by upstream"`},
		{"what does `make test` run?", `"make test"`},
		{"is And or OR or NOT special in MyOr.and?", "MyOr"}, // websearch_to_tsquery's operator words are left out
		{"how do I read a {userID} path segment under /admin/*?", "userID or admin"},
	} {
		if got := Keywords(tc.query); got != tc.want {
			t.Errorf("Keywords(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestKeywordsBounded(t *testing.T) {
	q := "A1 B2 C3 D4 E5 F6 G7 H8 I9 J10 K11 L12 M13 N14"
	if got := Keywords(q); got != "A1 or B2 or C3 or D4 or E5 or F6 or G7 or H8 or I9 or J10 or K11 or L12" {
		t.Errorf("Keywords(%q) = %q", q, got)
	}
}

func TestNameParts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"parseArrayValue", []string{"parse", "Array", "Value"}},
		{"LRUCache", []string{"LRU", "Cache"}},
		{"ttl_cache", []string{"ttl", "cache"}},
		{"__setitem__", []string{"setitem"}},
		{"utf8Sentinel", []string{"utf8", "Sentinel"}},
		{"HTTP", []string{"HTTP"}},
		{"plain", []string{"plain"}},
	} {
		if got := nameParts(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("nameParts(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func chunks(ids ...string) []r2r.ChunkSearchResult {
	out := make([]r2r.ChunkSearchResult, len(ids))
	for i, id := range ids {
		out[i] = r2r.ChunkSearchResult{ID: id, Text: "text of " + id, Score: 0.9}
	}
	return out
}

func ids(cs []r2r.ChunkSearchResult) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestFuse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights []float64
		lists   [][]r2r.ChunkSearchResult
		want    []string
	}{
		{"none", []float64{}, nil, []string{}},
		{"one list kept as is", []float64{1, 1}, [][]r2r.ChunkSearchResult{chunks("a", "b"), nil}, []string{"a", "b"}},
		{"in both lists first", []float64{1, 1}, [][]r2r.ChunkSearchResult{chunks("a", "b", "c"), chunks("c", "d")}, []string{"c", "a", "b", "d"}},
		{"ties keep the first list's order", []float64{1, 1}, [][]r2r.ChunkSearchResult{chunks("a", "b"), chunks("c", "d")}, []string{"a", "c", "b", "d"}},
		{"weight", []float64{1, 0.5}, [][]r2r.ChunkSearchResult{chunks("a", "b"), chunks("c", "d")}, []string{"a", "b", "c", "d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := FuseWeighted(tc.weights, tc.lists...)
			if g := ids(got); !slices.Equal(g, tc.want) {
				t.Errorf("order %v, want %v", g, tc.want)
			}
			for i := 1; i < len(got) && len(tc.lists[1]) > 0; i++ {
				if got[i].Score > got[i-1].Score || got[i].Score >= 0.9 {
					t.Errorf("scores %v are not the fused, decreasing ones", got)
				}
			}
		})
	}
	if g := ids(Fuse(chunks("a", "b"), chunks("b"))); !slices.Equal(g, []string{"b", "a"}) {
		t.Errorf("Fuse = %v", g)
	}
}

func TestLexical(t *testing.T) {
	c := func(id, title, text string) r2r.ChunkSearchResult {
		return r2r.ChunkSearchResult{ID: id, Text: text, Metadata: map[string]any{"title": title}}
	}
	in := []r2r.ChunkSearchResult{
		c("prose", "docs/intro.md", "The library parses query strings into objects and back."),
		c("other", "docs/faq.md", "Questions people ask about the project."),
		c("code", "lib/parse.js", "var parseArrayValue = function (val, options) { return val.split(options.delimiter); };"),
		c("title", "lib/stringify.js", "module.exports = function (object, opts) {};"),
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"how is an array value parsed?", []string{"code", "prose", "other", "title"}}, // parseArrayValue counts as parse, array, value
		{"what does stringify export?", []string{"title", "prose", "other", "code"}},   // the file's path counts
		{"the", []string{"prose", "other", "code", "title"}},                           // no terms: order kept
	} {
		if got := ids(Lexical(tc.query, in)); !slices.Equal(got, tc.want) {
			t.Errorf("Lexical(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
	if got := ids(in); !slices.Equal(got, []string{"prose", "other", "code", "title"}) {
		t.Errorf("input changed: %v", got)
	}
}
