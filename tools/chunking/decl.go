package chunking

import "strings"

// lineKind is what a physical line of source holds, as a language scanner reads it.
type lineKind uint8

const (
	lineCode    lineKind = iota // a statement starts on it
	lineComment                 // a comment only, or inside a block comment
	lineBlank                   // white space only
	lineCont                    // the continuation of a statement: inside brackets, a string or a template
)

// srcLine is a physical line: its byte offset, the width of its indentation, the bracket
// depth at its start and its kind.
type srcLine struct {
	off, indent, depth int
	kind               lineKind
}

// source is a file cut into lines by a language scanner.
type source struct {
	text  string
	lines []srcLine
}

// end is the byte offset where line i ends (the next line's start).
func (s *source) end(i int) int {
	if i+1 < len(s.lines) {
		return s.lines[i+1].off
	}
	return len(s.text)
}

// span is the text of lines [from, to) without the blank lines around it; its first line
// keeps its indentation, so a class member reads as indented as the lines after it.
func (s *source) span(from, to int) string {
	for from < to && s.lines[from].kind == lineBlank {
		from++
	}
	if from >= to {
		return ""
	}
	return strings.TrimRight(s.text[s.lines[from].off:s.end(to-1)], " \t\n")
}

// line is the text of line i without its line end or indentation.
func (s *source) line(i int) string {
	return strings.TrimSpace(s.text[s.lines[i].off:s.end(i)])
}

// statements cuts lines [from, to) at the lines where starts says a statement begins; each
// statement takes the comment lines directly above it (no blank line between), so a doc
// comment stays with what it documents (a comment line at another indentation is the end of
// the block above). The first range is what lies before the first statement, empty when
// it starts at from.
func (s *source) statements(from, to int, starts func(i int) bool) [][2]int {
	var cuts []int
	for i := from; i < to; i++ {
		if s.lines[i].kind != lineCode || !starts(i) {
			continue
		}
		j := i
		for j > from && s.lines[j-1].kind == lineComment && s.lines[j-1].indent == s.lines[i].indent {
			j--
		}
		cuts = append(cuts, j)
	}
	out := make([][2]int, 0, len(cuts)+1)
	prev := from
	for _, c := range cuts {
		out = append(out, [2]int{prev, c})
		prev = c
	}
	return append(out, [2]int{prev, to})
}

// firstCode is the first line in [from, to) of kind code whose text does not start with
// skip (a decorator's "@"), or -1.
func (s *source) firstCode(from, to int, skip string) int {
	for i := from; i < to; i++ {
		if s.lines[i].kind == lineCode && (skip == "" || !strings.HasPrefix(s.line(i), skip)) {
			return i
		}
	}
	return -1
}

// prevCode is the last line of kind code before i and at or after from, or -1.
func (s *source) prevCode(from, i int) int {
	for i--; i >= from; i-- {
		if s.lines[i].kind == lineCode {
			return i
		}
	}
	return -1
}

// declBlocks turns statements into blocks: a declaration (decl returns its path) is one
// block; what lies between declarations is cut into paragraphs, as goBlocks does.
func (s *source) declBlocks(stmts [][2]int, decl func(from, to int) ([]block, bool)) []block {
	var out []block
	loose := -1 // first line of the statements not yet emitted
	flushLoose := func(to int) {
		if loose >= 0 {
			out = append(out, paragraphs(s.span(loose, to), nil)...)
			loose = -1
		}
	}
	for _, st := range stmts {
		if bs, ok := decl(st[0], st[1]); ok {
			flushLoose(st[0])
			out = append(out, bs...)
			continue
		}
		if loose < 0 {
			loose = st[0]
		}
	}
	if len(stmts) > 0 {
		flushLoose(stmts[len(stmts)-1][1])
	}
	return out
}
