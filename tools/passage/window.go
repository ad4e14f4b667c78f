package passage

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is units [from, to) of one segment, grown around the unit at anchor.
type span struct{ seg, from, to, anchor int }

// minSecond is the fewest characters left over that are worth a second window.
const minSecond = 120

// Window is d's text that best matches the query, at most maxChars characters on one line,
// and the heading path its first part sits under. A document of r2r-mcp's own chunks shows
// them in the order the search ranked them (chunkWindows). Other documents (R2R's
// overlapping chunks) show the run of consecutive units that covers the most (and rarest)
// query terms, starting at a unit that matches, and when room is left, a second run covering
// terms the first lacks, joined by " … "; one none of whose units contains a query term (a
// semantic match) shows the start of its best chunk.
func (s *Set) Window(d *Doc, maxChars int) (text, section string) {
	if len(d.segments) == 0 || maxChars <= 0 {
		return "", ""
	}
	if d.sections {
		return s.chunkWindows(d, maxChars)
	}
	covered := map[string]bool{}
	first, ok := s.best(d, maxChars, nil, covered)
	if !ok { // no term matched: the start of the best-ranked chunk
		units := d.segments[0].units
		start := max(0, slices.IndexFunc(units, func(u unit) bool { return u.inBest }))
		first = grow(units, span{0, start, start, start}, maxChars)
	}
	spans := []span{first}
	used := chars(d, first)
	for _, t := range s.terms {
		if anyUnit(d, first, func(u unit) bool { return u.stems[t] }) {
			covered[t] = true
		}
	}
	if left := maxChars - used - 3; ok && left >= minSecond {
		if second, ok := s.best(d, left, spans, covered); ok {
			spans = append(spans, second)
			if second.seg == first.seg && second.from < first.from {
				spans[0], spans[1] = second, first
			}
		}
	}
	return s.join(d, spans, maxChars), sectionOf(d.segments[first.seg], first.anchor)
}

// join renders spans in order on one line, joined by " … ", in at most maxChars characters.
func (s *Set) join(d *Doc, spans []span, maxChars int) string {
	parts := make([]string, len(spans))
	left := maxChars
	for i, sp := range spans {
		if i > 0 {
			left -= 3
		}
		parts[i] = s.render(d.segments[sp.seg].units[sp.from:sp.to], left)
		left -= utf8.RuneCountInString(parts[i])
	}
	return strings.Join(parts, " … ")
}

// best is the highest-scoring run of at most maxChars characters that starts at a unit
// matching a term not yet covered and overlaps no span in taken. A run grows from its anchor
// forward, then backward, then forward again: R2R's overlapping chunks start where the
// matching text does (measured on make bench-quality, real R2R + MiniLM, 83 questions:
// centring the anchor lowered answer in view from 58% to 54% on R2R's own chunks).
func (s *Set) best(d *Doc, maxChars int, taken []span, covered map[string]bool) (span, bool) {
	var top span
	topScore := 0.0
	for si, seg := range d.segments {
		for i, u := range seg.units {
			if inSpans(taken, si, i) {
				continue
			}
			anchor := s.score(u, covered)
			if anchor == 0 {
				continue
			}
			sp := span{si, i, i, i}
			for sp.to < len(seg.units) && !inSpans(taken, si, sp.to) &&
				(sp.to == i || chars(d, span{si, i, sp.to + 1, i}) <= maxChars) {
				sp.to++
			}
			sp = growBack(seg.units, trimHeadings(seg.units, sp), maxChars, taken)
			for sp.to < len(seg.units) && !inSpans(taken, si, sp.to) && chars(d, span{si, sp.from, sp.to + 1, i}) <= maxChars {
				sp.to++
			}
			sp = trimHeadings(seg.units, sp)
			cov := 0.0
			for _, t := range s.terms {
				if !covered[t] && anyUnit(d, sp, func(u unit) bool { return u.stems[t] }) {
					cov += s.idf[t]
				}
			}
			if sc := cov + anchor/2; sc > topScore {
				top, topScore = sp, sc
			}
		}
	}
	return top, topScore > 0
}

// score is the weight of the uncovered query terms in u.
//
// A term in the heading above u counts half (the section is about it); any match in the
// document's best-ranked chunk gains half the mean term weight (the search ranked that
// chunk first for reasons terms alone do not show, such as meaning).
func (s *Set) score(u unit, covered map[string]bool) float64 {
	sc, total := 0.0, 0.0
	for _, t := range s.terms {
		total += s.idf[t]
		switch {
		case covered[t]:
		case u.stems[t]:
			sc += s.idf[t]
		case u.under[t]:
			sc += s.idf[t] / 2
		}
	}
	if sc > 0 && u.inBest && len(s.terms) > 0 {
		sc += total / float64(len(s.terms)) / 2
	}
	return sc
}

// grow extends sp forward, then backward, while it fits maxChars.
func grow(units []unit, sp span, maxChars int) span {
	if sp.to == sp.from {
		sp.to++
	}
	for sp.to < len(units) && unitsChars(units[sp.from:sp.to+1]) <= maxChars {
		sp.to++
	}
	return growBack(units, trimHeadings(units, sp), maxChars, nil)
}

// trimHeadings drops the headings that end sp: they head text the window does not show.
func trimHeadings(units []unit, sp span) span {
	for sp.to-1 > sp.from && units[sp.to-1].heading {
		sp.to--
	}
	return sp
}

// growBack extends sp backward by whole units while it fits maxChars and stays clear of taken.
func growBack(units []unit, sp span, maxChars int, taken []span) span {
	for sp.from > 0 && !inSpans(taken, sp.seg, sp.from-1) && unitsChars(units[sp.from-1:sp.to]) <= maxChars {
		sp.from--
	}
	return sp
}

func inSpans(spans []span, seg, i int) bool {
	for _, sp := range spans {
		if sp.seg == seg && i >= sp.from && i < sp.to {
			return true
		}
	}
	return false
}

func anyUnit(d *Doc, sp span, f func(unit) bool) bool {
	for _, u := range d.segments[sp.seg].units[sp.from:sp.to] {
		if f(u) {
			return true
		}
	}
	return false
}

func chars(d *Doc, sp span) int { return unitsChars(d.segments[sp.seg].units[sp.from:sp.to]) }

// unitsChars is the length of units rendered on one line.
func unitsChars(units []unit) int {
	n := max(len(units)-1, 0)
	for _, u := range units {
		n += utf8.RuneCountInString(u.text)
		if u.heading && !endsSentence(u.text) {
			n++
		}
	}
	return n
}

// render writes units on one line in at most maxChars characters: a heading ends with ":",
// and a run longer than maxChars is cut at a word, around the first query term when the
// run's first unit alone is too long.
func (s *Set) render(units []unit, maxChars int) string {
	parts := make([]string, len(units))
	for i, u := range units {
		parts[i] = u.text
		if u.heading && !endsSentence(u.text) {
			parts[i] += ":"
		}
	}
	text := strings.Join(parts, " ")
	if utf8.RuneCountInString(text) <= maxChars {
		return text
	}
	if utf8.RuneCountInString(parts[0]) > maxChars {
		return s.around(text, maxChars)
	}
	return clip(text, maxChars)
}

// around cuts text to maxChars characters starting shortly before the first query term
// it contains.
func (s *Set) around(text string, maxChars int) string {
	pos := 0
	for off := 0; off < len(text); {
		r := strings.IndexFunc(text[off:], isWordRune)
		if r < 0 {
			break
		}
		start := off + r
		end := start + strings.IndexFunc(text[start:], func(r rune) bool { return !isWordRune(r) })
		if end < start {
			end = len(text)
		}
		if st := stem(strings.ToLower(text[start:end])); slices.Contains(s.terms, st) {
			pos = start
			break
		}
		off = end
	}
	lead := utf8.RuneCountInString(text[:pos])
	if lead <= maxChars/4 {
		return clip(text, maxChars)
	}
	from := pos
	for back := maxChars / 5; back > 0 && from > 0; back-- {
		_, size := utf8.DecodeLastRuneInString(text[:from])
		from -= size
	}
	if i := strings.IndexByte(text[from:pos], ' '); i >= 0 {
		from += i + 1
	}
	return "…" + clip(text[from:], maxChars-1)
}

// clip cuts text to at most n characters at a word boundary when one is near, ending "…".
func clip(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	if n <= 1 {
		return ""
	}
	cut := 0
	for i := range text {
		if n--; n == 0 {
			cut = i
			break
		}
	}
	if i := strings.LastIndexByte(text[:cut], ' '); i > cut*3/4 {
		cut = i
	}
	return strings.TrimRight(text[:cut], " ,;:") + "…"
}

// sectionOf is the heading path units[i] of seg sits under: its pre-made chunk's, else the
// nearest Markdown heading before it.
func sectionOf(seg segment, i int) string {
	if s := seg.units[i].section; s != "" {
		return s
	}
	for j := i - 1; j >= 0; j-- {
		if seg.units[j].heading {
			return seg.units[j].text
		}
	}
	return ""
}

func endsSentence(s string) bool { return strings.HasSuffix(s, ".") || strings.HasSuffix(s, ":") }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// chunkWindows is the window of a document of r2r-mcp's own chunks (sections, declarations):
// its chunks in the order the search ranked them, each whole while it fits, the best one
// leaving minSecond characters for the next when the window has room for two; a chunk longer
// than its room shows the run around its best-matching unit. The search ranked a document's
// chunks by meaning, the question's identifiers and its words together, which finds the
// answer more often than the words alone: on make bench-quality's real-R2R searches, the
// answer was in the document's first or second chunk for 17 of the 25 questions whose first
// document held it but whose window did not.
func (s *Set) chunkWindows(d *Doc, maxChars int) (text, section string) {
	var spans []span
	left := maxChars
	for r := 0; r < d.Chunks && (r == 0 || left >= minSecond); r++ {
		sp, ok := chunkSpan(d, r)
		if !ok { // only markup
			continue
		}
		room := left
		if len(spans) == 0 && maxChars >= 2*minSecond {
			room = maxChars - minSecond
		}
		if chars(d, sp) > room {
			units := d.segments[sp.seg].units[sp.from:sp.to]
			at := 0
			for i, top := range units {
				if s.score(top, nil) > s.score(units[at], nil) {
					at = i
				}
			}
			g := grow(units, span{sp.seg, at, at, at}, room)
			sp = span{sp.seg, sp.from + g.from, sp.from + g.to, sp.from + at}
		}
		spans = append(spans, sp)
		left -= min(chars(d, sp), room) + 3
	}
	if len(spans) == 0 {
		return "", ""
	}
	return s.join(d, spans, maxChars), sectionOf(d.segments[spans[0].seg], spans[0].anchor)
}

// chunkSpan is the units of the document's chunk the search ranked r-th among its chunks.
func chunkSpan(d *Doc, r int) (span, bool) {
	for si, seg := range d.segments {
		from := slices.IndexFunc(seg.units, func(u unit) bool { return u.rank == r })
		if from < 0 {
			continue
		}
		to := from + 1
		for to < len(seg.units) && seg.units[to].rank == r {
			to++
		}
		return span{si, from, to, from}, true
	}
	return span{}, false
}
