// Package passage turns the chunks a search retrieved into what a model should read: one
// entry per document (overlapping chunks of a file stitched back together) and, for each,
// the window of consecutive sentences that best matches the query, with the heading it sits
// under.
package passage

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Chunk is one retrieved chunk, in the order the search ranked it.
type Chunk struct {
	DocumentID string
	Text       string  // the chunk's text, already cleaned for the model
	Section    string  // heading path the chunk carries (pre-made chunks), or ""
	Part       int     // the chunk's place in its document (pre-made chunks), or 0
	Score      float64 // the search's score
}

// Doc is one document of a Set, with the chunks of it the search found.
type Doc struct {
	DocumentID string
	Score      float64 // its best chunk's score
	Chunks     int     // how many of its chunks the search returned
	segments   []segment
	sections   bool // its chunks are pre-made section chunks (they carry part numbers)
}

// segment is a contiguous span of a document: overlapping or neighbouring chunks stitched
// together.
type segment struct {
	units []unit
}

// unit is a sentence, a line of a list or code, or a heading.
type unit struct {
	text    string
	section string // heading path of the pre-made chunk it comes from, or ""
	heading bool
	stems   map[string]bool
	under   map[string]bool // stems of the heading above it
	inBest  bool            // the document's best-ranked chunk holds it
	rank    int             // the rank among the document's chunks of the chunk it comes from
}

// Set is the documents of one search result and the query's terms weighted by how rare
// they are among the retrieved text.
type Set struct {
	Docs  []*Doc
	terms []string
	idf   map[string]float64
}

// New groups chunks by document, best document first, keeping at most maxDocs documents.
func New(query string, chunks []Chunk, maxDocs int) *Set {
	s := &Set{terms: Terms(query)}
	byID := map[string]int{}
	texts := [][]Chunk{}
	for _, c := range chunks {
		i, ok := byID[c.DocumentID]
		if !ok {
			if len(s.Docs) == maxDocs {
				continue
			}
			i = len(s.Docs)
			byID[c.DocumentID] = i
			s.Docs = append(s.Docs, &Doc{DocumentID: c.DocumentID, Score: c.Score})
			texts = append(texts, nil)
		}
		s.Docs[i].Chunks++
		s.Docs[i].sections = s.Docs[i].sections || c.Part > 0
		texts[i] = append(texts[i], c)
	}
	df := map[string]int{}
	n := 0
	for i, d := range s.Docs {
		d.segments = segments(texts[i])
		for _, seg := range d.segments {
			for _, u := range seg.units {
				n++
				for _, t := range s.terms {
					if u.stems[t] {
						df[t]++
					}
				}
			}
		}
	}
	s.idf = make(map[string]float64, len(s.terms))
	for _, t := range s.terms {
		s.idf[t] = math.Log(1 + float64(n+1)/float64(df[t]+1))
	}
	return s
}

// segments stitches a document's chunks into contiguous spans and splits them into units.
func segments(chunks []Chunk) []segment {
	out := make([]segment, 0, len(chunks))
	for _, p := range stitch(chunks) {
		var seg segment
		for i, t := range p.texts {
			for _, u := range split(t) {
				u.section = p.sections[i]
				u.rank = p.ranks[i]
				seg.units = append(seg.units, u)
			}
		}
		if len(seg.units) == 0 { // only markup
			continue
		}
		var under map[string]bool
		for j := range seg.units {
			u := &seg.units[j]
			if u.heading {
				under = u.stems
			} else {
				u.under = under
			}
			u.inBest = strings.Contains(chunks[0].Text, u.text)
		}
		out = append(out, seg)
	}
	return out
}

// piece is a contiguous text of a document: chunks in order, each with its section.
type piece struct {
	texts, sections []string
	ranks           []int // the rank of each text's chunk
	first, last     int   // the parts of its first and last chunk (pre-made chunks), or 0
	rank            int   // the best-ranked chunk in it
}

// stitch joins a document's chunks into contiguous pieces, best-ranked first: pre-made
// chunks whose part numbers follow each other, and chunks whose texts overlap (R2R's
// default chunks repeat half of their neighbour).
func stitch(chunks []Chunk) []piece {
	var ps []piece
	for rank, c := range chunks {
		cur := piece{[]string{c.Text}, []string{c.Section}, []int{rank}, c.Part, c.Part, rank}
		for merged := true; merged; {
			merged = false
			for i, p := range ps {
				m, ok := joinPieces(p, cur)
				if !ok {
					m, ok = joinPieces(cur, p)
				}
				if ok {
					m.rank = min(p.rank, cur.rank)
					cur = m
					ps = slices.Delete(ps, i, i+1)
					merged = true
					break
				}
			}
		}
		ps = append(ps, cur)
	}
	slices.SortFunc(ps, func(a, b piece) int { return a.rank - b.rank })
	return ps
}

// joinPieces returns a followed by b when b's first part follows a's last, or (chunks
// without parts) when b's text repeats a's end.
func joinPieces(a, b piece) (piece, bool) {
	if a.first > 0 && b.first > 0 {
		if b.first != a.last+1 {
			return piece{}, false
		}
		return piece{slices.Concat(a.texts, b.texts), slices.Concat(a.sections, b.sections), slices.Concat(a.ranks, b.ranks), a.first, b.last, 0}, true
	}
	if a.first > 0 || b.first > 0 || len(a.texts) != 1 || len(b.texts) != 1 {
		return piece{}, false
	}
	m, ok := join(a.texts[0], b.texts[0])
	if !ok {
		return piece{}, false
	}
	return piece{[]string{m}, a.sections, []int{min(a.ranks[0], b.ranks[0])}, 0, 0, 0}, true
}

// join returns a followed by b when b repeats a's end (or a already holds b).
func join(a, b string) (string, bool) {
	if strings.Contains(a, b) {
		return a, true
	}
	probe := b[:cutAt(b, 48)]
	if probe == "" {
		return "", false
	}
	for off := 0; off < len(a); {
		p := strings.Index(a[off:], probe)
		if p < 0 {
			break
		}
		p += off
		if strings.HasPrefix(b, a[p:]) {
			return a[:p] + b, true
		}
		off = p + 1
	}
	return "", false
}

// cutAt is the byte offset of at most n bytes of s, on a rune boundary.
func cutAt(s string, n int) int {
	if len(s) <= n {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// split cuts text into units: headings, and the sentences of each paragraph, list item,
// table row or code line.
func split(text string) []unit {
	var out []unit
	for _, l := range lines(text) {
		if l.heading {
			out = append(out, unit{text: l.text, heading: true, stems: stems(l.text)})
			continue
		}
		for _, s := range sentences(l.text) {
			out = append(out, unit{text: s, stems: stems(s)})
		}
	}
	return out
}

type line struct {
	text    string
	heading bool
}

// maxHeadingChars is the longest line taken for a heading whose # marks a parser removed.
const maxHeadingChars = 60

// lines are text's lines, with the lines of a wrapped paragraph joined: a line continues
// the one before when that one does not end a sentence and neither looks like a heading,
// list item, table row or fence. A Markdown heading is a heading; so is a short capitalised
// line without punctuation that starts a block (R2R's Markdown parser drops the #s).
func lines(text string) []line {
	var out []line
	cont := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || markupLine().MatchString(l):
			cont = false
			continue
		case cont && !blockStart(l):
			out[len(out)-1].text += " " + l
		case isMarkdownHeading(l):
			out = append(out, line{strings.TrimSpace(strings.TrimLeft(l, "#")), true})
		default:
			r, _ := utf8.DecodeRuneInString(l)
			bare := utf8.RuneCountInString(l) <= maxHeadingChars && unicode.IsUpper(r) && !strings.ContainsAny(l, ".:!?,;|`")
			out = append(out, line{l, bare && !blockStart(l)})
		}
		last := out[len(out)-1]
		cont = !last.heading && !blockStart(last.text) && !strings.ContainsAny(last.text[len(last.text)-1:], ".:!?|`")
	}
	return out
}

func isMarkdownHeading(l string) bool {
	h := strings.TrimLeft(l, "#")
	return len(h) < len(l) && len(l)-len(h) <= 6 && strings.HasPrefix(h, " ")
}

// markupLine matches lines that are only markup, which a reader of the window does not
// need: code fences, reStructuredText directives and their options, and MyST's
// {eval-rst} blocks. Compiled on first use, not at start-up.
var markupLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^(?:(?:```|~~~)[\\w{}\\- ]*|\\.\\. [\\w:-]+::(?: \\S+)?|:[\\w-]+:(?: \\S+)?|\\{[\\w-]+\\})$")
})

// blockStart says whether a line starts a block of its own.
func blockStart(l string) bool {
	switch l[0] {
	case '#', '|', '-', '*', '+', '>', '`':
		return true
	}
	if i := strings.IndexAny(l, ".)"); i > 0 && i <= 3 && strings.Trim(l[:i], "0123456789") == "" {
		return true
	}
	return false
}

// sentences cuts a line after ". ", "? " or "! " when a capital letter, digit or quote
// follows; short pieces stay with the next.
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i+2 < len(line); i++ {
		c := line[i]
		if (c != '.' && c != '?' && c != '!') || line[i+1] != ' ' {
			continue
		}
		n := line[i+2]
		if !(n >= 'A' && n <= 'Z' || n >= '0' && n <= '9' || n == '"' || n == '`' || n == '(') {
			continue
		}
		if i+1-start < 20 {
			continue
		}
		out = append(out, line[start:i+1])
		start = i + 2
	}
	return append(out, line[start:])
}
