package rank

import (
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// testWeight multiplies the fused score of a chunk of a test file when the question does not
// ask about tests: tests repeat the names of the code they exercise more densely than the code
// does, so by words alone they outrank the code that answers the question, and code search
// engines rank them lower for that reason.
const testWeight = 0.5

// testDirs are directory names that hold tests by convention.
var testDirs = []string{"test", "tests", "__tests__", "spec", "specs"}

// TestPath says whether the file at p (forward slashes) is a test by the usual conventions:
// under a test, tests, __tests__ or spec directory, or named *_test.go, test_*.py, *_test.py,
// *.test.js, *.spec.ts, *_spec.rb, FooTest.java, FooTests.cs and the like.
func TestPath(p string) bool {
	dir, base := path.Split(p)
	for _, d := range strings.Split(strings.Trim(dir, "/"), "/") {
		if slices.Contains(testDirs, strings.ToLower(d)) {
			return true
		}
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	lower := strings.ToLower(stem)
	for _, s := range []string{"_test", "_tests", "_spec", ".test", ".spec", "-test", "-spec"} {
		if strings.HasSuffix(lower, s) {
			return true
		}
	}
	if strings.HasPrefix(lower, "test_") {
		return true
	}
	for _, s := range []string{"Test", "Tests"} {
		if name, ok := strings.CutSuffix(stem, s); ok && name != "" {
			if r := []rune(name); unicode.IsLower(r[len(r)-1]) || unicode.IsDigit(r[len(r)-1]) {
				return true
			}
		}
	}
	return false
}

// AsksAboutTests says whether a question is about tests: a word of it starts with "test" (test,
// tests, tested, testing, TestMux, test_ttl) or is spec or specs.
func AsksAboutTests(query string) bool {
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		l := strings.ToLower(w)
		if strings.HasPrefix(l, "test") || l == "spec" || l == "specs" {
			return true
		}
	}
	return false
}

// DemoteTests weighs the chunks of test files (TestPath of the chunk's source_path metadata, or
// its title) by testWeight in fused chunks, best first, unless the question asks about tests
// (AsksAboutTests); the order of the others is kept. The input is not changed.
func DemoteTests(query string, fused []r2r.ChunkSearchResult) []r2r.ChunkSearchResult {
	if AsksAboutTests(query) {
		return fused
	}
	out := slices.Clone(fused)
	demoted := false
	for i, c := range out {
		p, _ := c.Metadata["source_path"].(string)
		if p == "" {
			p, _ = c.Metadata["title"].(string)
		}
		if TestPath(p) {
			out[i].Score *= testWeight
			demoted = true
		}
	}
	if !demoted {
		return fused
	}
	slices.SortStableFunc(out, func(a, b r2r.ChunkSearchResult) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}
