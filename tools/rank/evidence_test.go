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

func TestDemote(t *testing.T) {
	chunk := func(id, path string, score float64) r2r.ChunkSearchResult {
		return r2r.ChunkSearchResult{ID: id, Score: score, Metadata: map[string]any{"source_path": path}}
	}
	fused := []r2r.ChunkSearchResult{
		chunk("t1", "qs/test/parse.js", 0.049),
		chunk("c1", "qs/lib/parse.js", 0.040),
		chunk("h1", "qs/CHANGELOG.md", 0.035),
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
		{"code question: tests and change log after what they outranked", "what is the default arrayLimit?", []string{"c1", "t1", "d1", "h1", "t2", "t3"}},
		{"question about tests: the change log alone", "which test covers arrayLimit?", []string{"t1", "c1", "t2", "d1", "h1", "t3"}},
		{"question about versions: tests alone", "which version added arrayLimit?", []string{"c1", "h1", "t1", "d1", "t2", "t3"}},
		{"question about both: order kept", "which release added a test for arrayLimit?", []string{"t1", "c1", "h1", "t2", "d1", "t3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(fused)
			if got := ids(Demote(tc.query, fused)); !slices.Equal(got, tc.want) {
				t.Errorf("Demote = %v, want %v", got, tc.want)
			}
			if !slices.EqualFunc(before, fused, func(a, b r2r.ChunkSearchResult) bool { return a.ID == b.ID && a.Score == b.Score }) {
				t.Error("Demote changed its input")
			}
		})
	}
	docs := []r2r.ChunkSearchResult{chunk("c1", "a.go", 2), chunk("d1", "README.md", 1)}
	if got := Demote("q", docs); &got[0] != &docs[0] {
		t.Error("a list without tests is not returned as it is")
	}
}

func TestChangelogPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"chi/CHANGELOG.md", true},
		{"flask/CHANGES.rst", true},
		{"pkg/HISTORY.md", true},
		{"NEWS", true},
		{"docs/release-notes.md", true},
		{"docs/changes/index.md", false}, // a page in a directory named changes
		{"src/changes.go", true},         // named like one: weighed as one
		{"docs/changing-config.md", false},
		{"README.md", false},
	} {
		if got := ChangelogPath(tc.path); got != tc.want {
			t.Errorf("ChangelogPath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestAsksAboutHistory(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"which qs version added the strictDepth option?", true},
		{"which release of cachetools made expire() return the pairs?", true},
		{"why was the mru_cache decorator deprecated?", true},
		{"since which Go version is context in the standard library?", true},
		{"expired entries of a TTLCache still use memory, when are they dropped?", false},
		{"what does qs.stringify throw when the object references itself?", false},
	} {
		if got := AsksAboutHistory(tc.query); got != tc.want {
			t.Errorf("AsksAboutHistory(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}
