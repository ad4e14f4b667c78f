package rank

import (
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/passage"
)

// weakWeight multiplies the fused score of a chunk of a file that is weaker evidence than the
// code and documentation it mentions (a test, a changelog) when the question does not ask
// about that kind of file: such files repeat the names of what they exercise or record more
// densely than the file that answers, so by words alone they outrank it; code search engines
// rank tests lower for that reason.
const weakWeight = 0.5

// weakKinds are the kinds of file Demote weighs down: which paths are of the kind, and which
// questions ask about it.
var weakKinds = []struct{ file, asked func(string) bool }{
	{TestPath, AsksAboutTests},
	{ChangelogPath, AsksAboutHistory},
}

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
	return slices.ContainsFunc(passage.Words(query), func(w string) bool {
		return strings.HasPrefix(w, "test") || w == "spec" || w == "specs"
	})
}

// changelogNames are the names (without extension, lower case) of a project's change log.
var changelogNames = []string{"changelog", "changes", "history", "news", "releases", "release-notes", "release_notes", "whatsnew"}

// ChangelogPath says whether the file at p is a change log: CHANGELOG.md, CHANGES.rst,
// HISTORY.md, NEWS, RELEASE-NOTES.md and the like.
func ChangelogPath(p string) bool {
	base := strings.ToLower(path.Base(p))
	return slices.Contains(changelogNames, strings.TrimSuffix(base, path.Ext(base)))
}

// historyWords are the words of a question about a project's history.
var historyWords = []string{"version", "versions", "release", "released", "releases", "changelog", "history",
	"introduced", "added", "deprecated", "removed", "since", "upgrade", "upgrading", "migrate", "migration", "breaking"}

// AsksAboutHistory says whether a question is about what changed when: one of its words is
// version, release, added, deprecated, since, upgrade and the like.
func AsksAboutHistory(query string) bool {
	return slices.ContainsFunc(passage.Words(query), func(w string) bool { return slices.Contains(historyWords, w) })
}

// Demote weighs the chunks of weaker evidence by weakWeight in fused chunks, best first: a
// test (TestPath of the chunk's source_path metadata, or its title) unless the question asks
// about tests (AsksAboutTests), a change log (ChangelogPath) unless it asks about versions
// (AsksAboutHistory). The order of the others is kept; the input is not changed.
func Demote(query string, fused []r2r.ChunkSearchResult) []r2r.ChunkSearchResult {
	var weak []func(string) bool
	for _, k := range weakKinds {
		if !k.asked(query) {
			weak = append(weak, k.file)
		}
	}
	out := slices.Clone(fused)
	demoted := false
	for i, c := range out {
		p, _ := c.Metadata[kbsync.MetaSourcePath].(string)
		if p == "" {
			p, _ = c.Metadata["title"].(string)
		}
		if slices.ContainsFunc(weak, func(is func(string) bool) bool { return is(p) }) {
			out[i].Score *= weakWeight
			demoted = true
		}
	}
	if !demoted {
		return fused
	}
	sortByScore(out)
	return out
}
