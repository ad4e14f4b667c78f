package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFileRankCountsDistinctFiles(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  int
	}{
		{[]string{"a", "a", "b"}, 2},
		{[]string{"b"}, 1},
		{[]string{"a", "c", "a", "d"}, 0},
		{nil, 0},
	} {
		if got := fileRank(tc.files, "b"); got != tc.want {
			t.Errorf("fileRank(%q) = %d, want %d", tc.files, got, tc.want)
		}
	}
}

func TestReciprocalAndNDCG(t *testing.T) {
	for _, tc := range []struct {
		rank     int
		rr, ndcg float64
	}{
		{1, 1, 1},
		{3, 1.0 / 3, 0.5},
		{10, 0.1, 1 / math.Log2(11)},
		{11, 1.0 / 11, 0},
		{0, 0, 0},
	} {
		if got := reciprocal(tc.rank); math.Abs(got-tc.rr) > 1e-9 {
			t.Errorf("reciprocal(%d) = %v, want %v", tc.rank, got, tc.rr)
		}
		if got := ndcg10(tc.rank); math.Abs(got-tc.ndcg) > 1e-9 {
			t.Errorf("ndcg10(%d) = %v, want %v", tc.rank, got, tc.ndcg)
		}
	}
}

func TestContentWordsAndGroup(t *testing.T) {
	got := contentWords("What does Cache.__setitem__ raise when the value's size > maxsize? maxsize!")
	want := []string{"cache", "__setitem__", "raise", "value", "size", "maxsize"}
	if !slices.Equal(got, want) {
		t.Errorf("contentWords = %q, want %q", got, want)
	}
	for file, want := range map[string]string{"x/README.md": "docs", "docs/index.rst": "docs", "a/b.py": "code", "t/x_test.go": "code"} {
		if got := group(Question{File: file}); got != want {
			t.Errorf("group(%s) = %s, want %s", file, got, want)
		}
	}
}

// The grep baseline ranks files by lines holding any content word, most first, ties by path.
func TestGrepRank(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":  "func Throttle()\n// throttle limit\nother\n",
		"b.md":  "Throttle puts a ceiling\n",
		"c.py":  "nothing here\n",
		"d.txt": "LIMIT and throttle\nlimit\nlimit again\n",
	}
	var names []string
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, f)
	}
	slices.Sort(names)
	g, err := newGrepIndex(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.rank("what is the throttle limit?", 10), []string{"d.txt", "a.go", "b.md"}; !slices.Equal(got, want) {
		t.Errorf("rank = %q, want %q", got, want)
	}
	if got := g.rank("what is the throttle limit?", 1); !slices.Equal(got, []string{"d.txt"}) {
		t.Errorf("rank limit 1 = %q", got)
	}
}
