package passage

import (
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// overlapping cuts text the way R2R's default chunking does: size characters with overlap
// characters repeated, cut at spaces.
func overlapping(text string, size, overlap int) []string {
	var out []string
	for start := 0; start < len(text); {
		end := min(len(text), start+size)
		if end < len(text) {
			if i := strings.LastIndexByte(text[start:end], ' '); i > 0 {
				end = start + i
			}
		}
		out = append(out, strings.TrimSpace(text[start:end]))
		if end == len(text) {
			break
		}
		next := end - overlap
		if i := strings.IndexByte(text[next:end], ' '); i >= 0 {
			next += i + 1
		}
		start = max(next, start+1)
	}
	return out
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/docs/" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStitch: R2R's overlapping chunks of one document come back as one segment holding the
// document's text once, in any order the search returns them.
func TestStitch(t *testing.T) {
	doc := readDoc(t, "runbooks/card-authorisation-latency-spike.md")
	parts := overlapping(doc, 1024, 512)
	if len(parts) < 4 {
		t.Fatalf("only %d chunks", len(parts))
	}
	for _, order := range [][]int{{0, 1, 2, 3}, {2, 0, 3, 1}, {3, 2, 1, 0}} {
		var chunks []Chunk
		for _, i := range order {
			chunks = append(chunks, Chunk{DocumentID: "d", Text: parts[i]})
		}
		ps := stitch(chunks)
		end := strings.Index(doc, parts[3]) + len(parts[3])
		if len(ps) != 1 || len(ps[0].texts) != 1 || ps[0].texts[0] != doc[strings.Index(doc, parts[0]):end] {
			t.Fatalf("order %v: %d pieces, first %+v, want %d bytes", order, len(ps), ps[0], end)
		}
		if s := New("q", chunks, 10); len(s.Docs) != 1 || len(s.Docs[0].segments) != 1 || s.Docs[0].Chunks != 4 {
			t.Fatalf("order %v: %d docs", order, len(s.Docs))
		}
	}
}

// TestStitchParts: pre-made chunks (part numbers, no overlap) whose parts follow each
// other come back as one segment in part order, each unit under its own chunk's section;
// a chunk apart from them stays a segment of its own, after them when it ranked lower.
func TestStitchParts(t *testing.T) {
	chunks := []Chunk{
		{DocumentID: "d", Text: "Run apt install zebra-tools first.", Section: "Guide › Install", Part: 3},
		{DocumentID: "d", Text: "Install\n\nThe zebra service needs a package.", Section: "Guide › Install", Part: 2},
		{DocumentID: "d", Text: "Limits\n\nThe zebra service has no limits.", Section: "Guide › Limits", Part: 5},
		{DocumentID: "d", Text: "Then start the zebra service with systemctl.", Section: "Guide › Install › Start", Part: 4},
	}
	ps := stitch(chunks)
	if len(ps) != 1 || ps[0].first != 2 || ps[0].last != 5 || ps[0].rank != 0 {
		t.Fatalf("pieces %+v", ps)
	}
	ps = stitch(slices.Delete(slices.Clone(chunks), 3, 4))
	if len(ps) != 2 || ps[0].first != 2 || ps[0].last != 3 || ps[1].first != 5 || ps[1].rank != 2 {
		t.Fatalf("pieces without part 4: %+v", ps)
	}
	s := New("how do I start the zebra service", chunks, 10)
	seg := s.Docs[0].segments[0]
	if len(s.Docs[0].segments) != 1 || !strings.HasPrefix(seg.units[0].text, "Install") {
		t.Fatalf("segments %+v", s.Docs[0].segments)
	}
	text, section := s.Window(s.Docs[0], 200)
	if !strings.HasPrefix(text, "Run apt install zebra-tools first. … Install: The zebra service needs a package.") || section != "Guide › Install" {
		t.Fatalf("window %q under %q", text, section)
	}
}

// TestChunkWindows: a document of pre-made chunks shows them in the order the search ranked
// them, whole while they fit; a chunk longer than its room shows the run around its
// best-matching unit and leaves room for the next when the window has room for two; nothing
// exceeds maxChars.
func TestChunkWindows(t *testing.T) {
	filler := strings.Repeat("Unrelated words about other things. ", 12)
	long := filler + "The zebra timeout defaults to 30 seconds. " + filler
	for _, tc := range []struct {
		name   string
		texts  []string // in rank order; parts 1, 2, … in reverse rank order
		max    int
		want   []string // in this order
		absent []string
	}{
		{"rank order", []string{"Zebra runs fast.", "It needs a package.", "Logs go to stderr."}, 200,
			[]string{"Zebra runs fast. … It needs a package. … Logs go to stderr."}, nil},
		{"room runs out", []string{"Zebra runs fast.", filler, "Logs go to stderr."}, 300,
			[]string{"Zebra runs fast. … Unrelated"}, []string{"Logs go"}},
		{"long best chunk", []string{long, "The second chunk says where zebra logs go."}, 400,
			[]string{"zebra timeout defaults to 30 seconds", " … The second chunk says where zebra logs go."}, nil},
		{"small window: the best chunk only", []string{long, "The second chunk."}, 200,
			[]string{"zebra timeout defaults to 30 seconds"}, []string{"second chunk"}},
	} {
		var chunks []Chunk
		for i, text := range tc.texts {
			chunks = append(chunks, Chunk{DocumentID: "d", Text: text, Section: "Guide", Part: len(tc.texts) - i})
		}
		s := New("zebra timeout", chunks, 1)
		text, section := s.Window(s.Docs[0], tc.max)
		at := 0
		for _, w := range tc.want {
			i := strings.Index(text[at:], w)
			if i < 0 {
				t.Errorf("%s: %q lacks %q after byte %d", tc.name, text, w, at)
				break
			}
			at += i + len(w)
		}
		for _, a := range tc.absent {
			if strings.Contains(text, a) {
				t.Errorf("%s: %q holds %q", tc.name, text, a)
			}
		}
		if utf8.RuneCountInString(text) > tc.max || section != "Guide" {
			t.Errorf("%s: %d chars (max %d), section %q", tc.name, utf8.RuneCountInString(text), tc.max, section)
		}
	}
}

// TestGroup: one entry per document, best first, at most maxDocs, each with its best score.
func TestGroup(t *testing.T) {
	chunks := []Chunk{{"a", "alpha one", "", 0, 0.9}, {"b", "beta", "", 0, 0.8}, {"a", "alpha two", "", 0, 0.7},
		{"c", "gamma", "", 0, 0.6}, {"d", "delta", "", 0, 0.5}, {"b", "beta two", "", 0, 0.4}}
	s := New("alpha", chunks, 3)
	var got []string
	for _, d := range s.Docs {
		got = append(got, d.DocumentID)
	}
	if strings.Join(got, ",") != "a,b,c" || s.Docs[0].Score != 0.9 || s.Docs[0].Chunks != 2 || s.Docs[1].Chunks != 2 {
		t.Fatalf("docs %v, first %+v", got, s.Docs[0])
	}
}

// TestWindow: the window holds the sentence that answers, found by the question's terms
// (stemmed: "configure" finds "configuration"), within maxChars, with the heading above it.
func TestWindow(t *testing.T) {
	doc := readDoc(t, "runbooks/card-authorisation-latency-spike.md")
	parts := overlapping(doc, 1024, 512)
	var chunks []Chunk
	for _, p := range parts {
		chunks = append(chunks, Chunk{DocumentID: "card", Text: p})
	}
	for _, tc := range []struct {
		query, phrase, section string
		max                    int
	}{
		{"what is the SLO for authorisations", "p99 under 800 ms", "Why this matters", 300},
		{"after how long do we abandon an acquirer attempt", "2,500 ms", "Why this matters", 400},
		{"is postgres on the hot path for the ledger hold", "Postgres is not on the hot path", "The hot path", 300},
	} {
		s := New(tc.query, chunks, 10)
		text, section := s.Window(s.Docs[0], tc.max)
		if !strings.Contains(text, tc.phrase) || section != tc.section || utf8.RuneCountInString(text) > tc.max {
			t.Errorf("%q: section %q, window (%d chars):\n%s", tc.query, section, utf8.RuneCountInString(text), text)
		}
	}
}

// TestWindowEdges: a document matching no term shows its best chunk's start; a unit longer
// than the window is cut around the term; a pre-made chunk's section wins; nothing exceeds
// maxChars.
func TestWindowEdges(t *testing.T) {
	long := strings.Repeat("filler words here ", 40) + "the zebra setting controls stripes " + strings.Repeat("more filler ", 30)
	for _, tc := range []struct {
		name, query, text, section string
		max                        int
		want, wantSection          string
		prefix                     bool
	}{
		{"no term", "unrelated", "First sentence here. Second one follows.", "", 30, "First sentence here.", "", true},
		{"long unit", "zebra", long, "", 120, "zebra setting", "", false},
		{"premade section", "zebra", "# Top\n\nThe zebra setting.", "guide.md › Top", 200, "zebra setting", "guide.md › Top", false},
		{"tiny", "zebra", long, "", 1, "", "", false},
		{"markup only", "zebra", "```python\n```", "", 100, "", "", false},
	} {
		s := New(tc.query, []Chunk{{DocumentID: "x", Text: tc.text, Section: tc.section}}, 1)
		text, section := s.Window(s.Docs[0], tc.max)
		if utf8.RuneCountInString(text) > tc.max || !strings.Contains(text, tc.want) || section != tc.wantSection ||
			(tc.prefix && !strings.HasPrefix(text, tc.want)) {
			t.Errorf("%s: %q (section %q)", tc.name, text, section)
		}
	}
}

// TestTerms: stop words go, stems merge forms of a word, order is kept.
func TestTerms(t *testing.T) {
	got := strings.Join(Terms("How do I configure the retries? Configuration of retry_count"), " ")
	if got != "configur retri retry_count" {
		t.Fatalf("terms %q", got)
	}
}

// TestMarkupLines: fences, reStructuredText directives and options, MyST blocks are not
// shown; their content is.
func TestMarkupLines(t *testing.T) {
	text := "```{eval-rst}\n.. click:example::\n:depth: 1\n{contents}\n    @click.command()\n```\n:returns: the value.\nPlain sentence here.\n```python\nx = 1\n```"
	var got []string
	for _, u := range split(text) {
		got = append(got, u.text)
	}
	if strings.Join(got, "|") != "@click.command()|:returns: the value.|Plain sentence here.|x = 1" {
		t.Fatalf("units %q", got)
	}
}
