package main

import (
	"bufio"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// fileRank is the 1-based position of want among the distinct files of a result list in order
// of first appearance (0 = absent): the rank MRR and nDCG are computed on, so that r2r-mcp's
// chunks and the grep baseline's files are ranked on the same scale.
func fileRank(files []string, want string) int {
	seen := map[string]bool{}
	for _, f := range files {
		if seen[f] {
			continue
		}
		seen[f] = true
		if f == want {
			return len(seen)
		}
	}
	return 0
}

// reciprocal is 1/rank (0 when absent): averaged over questions it is the mean reciprocal rank.
func reciprocal(rank int) float64 {
	if rank <= 0 {
		return 0
	}
	return 1 / float64(rank)
}

// ndcg10 is nDCG@10 with one relevant file per question: the ideal list has it first, so the
// normalised gain is 1/log2(rank+1) within the first 10 distinct files and 0 beyond.
func ndcg10(rank int) float64 {
	if rank <= 0 || rank > 10 {
		return 0
	}
	return 1 / math.Log2(float64(rank)+1)
}

// docExtensions are the corpus files counted as documentation; every other file is code
// (source, tests, build files).
var docExtensions = []string{".md", ".rst", ".txt"}

// group is the part of the corpus a question's answer lies in: "docs" or "code".
func group(q Question) string {
	if slices.Contains(docExtensions, strings.ToLower(path.Ext(q.File))) {
		return "docs"
	}
	return "code"
}

// stopwords are left out of the grep baseline's pattern: words every file holds.
var stopwords = strings.Fields(`a an and any are as at be by can do does for from get how i if in into is it its
	me my of on or so than that the their them then there these this to use used uses what when where which who
	why will with without does don t s i'm i'd should would could there's when's via vs not no yes one like
	instead way before after every all each`)

// contentWords are the question's words a developer would hand to grep: lower-cased runs of
// letters, digits and underscores of three characters or more, stop words dropped, each once.
func contentWords(question string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(question), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		if len(w) >= 3 && !slices.Contains(stopwords, w) && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// grepIndex holds the corpus files' lines, lower-cased, for the grep baseline.
type grepIndex struct {
	files []string
	lines map[string][]string
}

func newGrepIndex(corpus string, files []string) (*grepIndex, error) {
	g := &grepIndex{files: files, lines: map[string][]string{}}
	for _, f := range files {
		fh, err := os.Open(filepath.Join(corpus, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			g.lines[f] = append(g.lines[f], strings.ToLower(sc.Text()))
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// rank is what `git grep -i -c -e WORD1 -e WORD2 …` over the corpus gives an agent with no
// knowledge base, sorted: the files with at least one line holding any of the question's content
// words, most matching lines first (ties by path), at most limit of them.
func (g *grepIndex) rank(question string, limit int) []string {
	words := contentWords(question)
	type hit struct {
		file string
		n    int
	}
	var hits []hit
	for _, f := range g.files {
		n := 0
		for _, l := range g.lines[f] {
			if slices.ContainsFunc(words, func(w string) bool { return strings.Contains(l, w) }) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{f, n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.n - a.n })
	out := make([]string, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.file)
	}
	return out
}
