package rank

import (
	"slices"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func TestTestPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"chi/mux_test.go", true},
		{"cachetools/tests/test_lru.py", true},
		{"pkg/test_util.py", true},
		{"pkg/util_test.py", true},
		{"qs/test/parse.js", true},
		{"web/src/__tests__/App.jsx", true},
		{"web/src/app.test.tsx", true},
		{"web/src/app.spec.ts", true},
		{"lib/parser_spec.rb", true},
		{"src/main/java/FooTest.java", true},
		{"src/FooTests.cs", true},
		{"chi/mux.go", false},
		{"cachetools/src/cachetools/__init__.py", false},
		{"qs/lib/parse.js", false},
		{"flask/docs/testing.rst", false}, // documentation about testing
		{"pkg/attest.go", false},          // a word ending in "test"
		{"src/Contest.java", false},       // the same, capitalised
		{"src/latest/main.go", false},     // a directory ending in "test"
		{"docs/Test.md", false},           // nothing before the suffix
		{"r2r/testdata/corpus.md", false}, // fixtures, not tests
		{"internal/testing/helpers.go", false},
	} {
		if got := TestPath(tc.path); got != tc.want {
			t.Errorf("TestPath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestAsksAboutTests(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"is there a test of the throttle backlog behaviour?", true},
		{"how is TTLCache tested?", true},
		{"what does TestMuxBasic check?", true},
		{"which spec covers stringify?", true},
		{"what is the default arrayLimit in qs.parse?", false},
		{"which middleware limits concurrent requests?", false},
		{"what is the latest release?", false},
	} {
		if got := AsksAboutTests(tc.query); got != tc.want {
			t.Errorf("AsksAboutTests(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

func TestDemoteTests(t *testing.T) {
	chunk := func(id, path string, score float64) r2r.ChunkSearchResult {
		return r2r.ChunkSearchResult{ID: id, Score: score, Metadata: map[string]any{"source_path": path}}
	}
	fused := []r2r.ChunkSearchResult{
		chunk("t1", "qs/test/parse.js", 0.049),
		chunk("c1", "qs/lib/parse.js", 0.040),
		{ID: "t2", Score: 0.030, Metadata: map[string]any{"title": "chi/mux_test.go"}}, // no source_path: the title
		chunk("d1", "qs/README.md", 0.020),
		chunk("t3", "qs/test/utils.js", 0.010),
	}
	ids := func(cs []r2r.ChunkSearchResult) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.ID
		}
		return out
	}
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"code question: tests after the code they outranked", "what is the default arrayLimit?", []string{"c1", "t1", "d1", "t2", "t3"}},
		{"question about tests: order kept", "which test covers arrayLimit?", []string{"t1", "c1", "t2", "d1", "t3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(fused)
			if got := ids(DemoteTests(tc.query, fused)); !slices.Equal(got, tc.want) {
				t.Errorf("DemoteTests = %v, want %v", got, tc.want)
			}
			if !slices.EqualFunc(before, fused, func(a, b r2r.ChunkSearchResult) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Error("DemoteTests changed its input")
			}
		})
	}
	docs := []r2r.ChunkSearchResult{chunk("c1", "a.go", 2), chunk("d1", "README.md", 1)}
	if got := DemoteTests("q", docs); &got[0] != &docs[0] {
		t.Error("a list without tests is not returned as it is")
	}
}
