package chunking

import (
	"regexp"
	"strings"
	"sync"
)

// Python is cut on its own structure, read by a scanner of its tokens rather than a parser:
// the pure-Go Python parsers there are (go-python/gpython) read the Python 3.4 grammar and
// reject f-strings, annotated assignments, async def, the walrus and match, so most modern
// files would not parse. What cutting needs is where each logical line starts and how far
// it is indented, which the scanner knows exactly once strings (triple-quoted too),
// comments, brackets and backslash continuations are read.

// pyLines cuts Python source into physical lines, each known as the start of a logical
// line (code), a comment, a blank or a continuation; ok is false when a string or bracket
// is left open (the file is not Python, and is cut at blank lines instead).
func pyLines(text string) (src *source, ok bool) {
	src = &source{text: text, lines: make([]srcLine, 0, strings.Count(text, "\n")+1)}
	depth, quote, cont, lineStart := 0, "", false, true
	for i := 0; i < len(text); {
		if lineStart {
			lineStart = false
			src.lines = append(src.lines, newLine(text, i, depth, quote != "" || depth > 0 || cont, "#"))
			cont = false
		}
		c := text[i]
		if quote != "" {
			switch {
			case c == '\\' && i+1 < len(text):
				lineStart = text[i+1] == '\n'
				i += 2
			case strings.HasPrefix(text[i:], quote):
				i += len(quote)
				quote = ""
			case c == '\n' && len(quote) == 1:
				return nil, false // an unterminated string
			case c == '\n':
				lineStart = true
				i++
			default: // on to the next character that can end the string or its line
				if j := strings.IndexAny(text[i+1:], pyStringStops(quote[0])); j >= 0 {
					i += 1 + j
				} else {
					i = len(text)
				}
			}
			continue
		}
		switch c {
		case '#':
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(text)
			}
			continue
		case '\'', '"':
			quote = text[i : i+1]
			if strings.HasPrefix(text[i:], pyTriple(c)) {
				quote = pyTriple(c)
			}
			i += len(quote)
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth--; depth < 0 {
				return nil, false
			}
		case '\\':
			if i+1 < len(text) && text[i+1] == '\n' {
				cont, lineStart = true, true
				i += 2
				continue
			}
		case '\n':
			lineStart = true
		}
		i++
	}
	return src, quote == "" && depth == 0
}

// pyTriple is the triple quote of quote character c.
func pyTriple(c byte) string {
	if c == '"' {
		return `"""`
	}
	return "'''"
}

// pyStringStops are the characters that can end a string opened by quote character c, or
// its line.
func pyStringStops(c byte) string {
	if c == '"' {
		return "\"\\\n"
	}
	return "'\\\n"
}

// newLine reads the physical line starting at off: its indentation and kind (cont when it
// continues a statement; comment when it starts with the comment marker).
func newLine(text string, off, depth int, cont bool, comment string) srcLine {
	j := off
	for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
		j++
	}
	l := srcLine{off: off, indent: j - off, depth: depth}
	switch {
	case cont:
		l.kind = lineCont
	case j == len(text) || text[j] == '\n' || text[j] == '\r':
		l.kind = lineBlank
	case strings.HasPrefix(text[j:], comment):
		l.kind = lineComment
	}
	return l
}

var (
	pyClause = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:else|elif|except|finally)\b`) })
	pyDef    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:async\s+)?def\s`) })
	pyClass  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^class\s+([A-Za-z_]\w*)`) })
	pyAssign = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?::[^=]+)?=[^=]`)
	})
)

// pythonBlocks cuts Python source by statement: one block per top-level function, class
// member, class head (its decorators, signature, docstring and class attributes) and
// assignment, with the comment lines above it; a function's docstring is in its body. A
// block's path is its enclosing class and its signature. nil when the file does not scan.
func pythonBlocks(text string) []block {
	src, ok := pyLines(text)
	if !ok {
		return nil
	}
	return src.declBlocks(src.pyStatements(0, len(src.lines), 0), func(from, to int) ([]block, bool) {
		return src.pyDecl(from, to, nil)
	})
}

// pyStatements cuts lines [from, to) at the statements indented by indent.
func (s *source) pyStatements(from, to, indent int) [][2]int {
	return s.statements(from, to, func(i int) bool {
		if s.lines[i].indent != indent || pyClause().MatchString(s.line(i)) {
			return false
		}
		p := s.prevCode(from, i)
		return p < 0 || !strings.HasPrefix(s.line(p), "@") || s.lines[p].indent != indent
	})
}

// pyDecl is the blocks of the statement in lines [from, to) under the class path outer, and
// whether it is a declaration.
func (s *source) pyDecl(from, to int, outer []string) ([]block, bool) {
	h := s.firstCode(from, to, "@")
	if h < 0 {
		return nil, false
	}
	head := s.line(h)
	switch {
	case pyDef().MatchString(head):
		return []block{{text: s.span(from, to), path: with(outer, signature(pyHeader(s.logical(h)))), decl: true}}, true
	case pyClass().MatchString(head):
		name := pyClass().FindStringSubmatch(head)[1]
		path := with(outer, name)
		sig := signature(pyHeader(s.logical(h)))
		if outer != nil {
			return []block{{text: s.span(from, to), path: with(outer, sig), decl: true}}, true
		}
		b := s.firstBody(h+1, to, s.lines[h].indent)
		if b < 0 {
			return []block{{text: s.span(from, to), path: with(path, sig), decl: true}}, true
		}
		var out []block
		headEnd := to // the class head runs to its first method or nested class
		members := s.pyStatements(b, to, s.lines[b].indent)
		for _, m := range members {
			if c := s.firstCode(m[0], m[1], ""); c >= 0 && (pyDef().MatchString(s.line(c)) || strings.HasPrefix(s.line(c), "@") || pyClass().MatchString(s.line(c))) {
				headEnd = m[0]
				break
			}
		}
		out = append(out, block{text: s.span(from, headEnd), path: with(path, sig), decl: true})
		for _, m := range members {
			if m[0] < headEnd {
				continue
			}
			bs, ok := s.pyDecl(m[0], m[1], path)
			if !ok { // a statement between methods belongs to the block before it
				if text := s.span(m[0], m[1]); text != "" {
					out[len(out)-1].text += "\n\n" + text
				}
				continue
			}
			out = append(out, bs...)
		}
		return out, true
	case pyAssign().MatchString(head):
		return []block{{text: s.span(from, to), path: with(outer, signature(head)), decl: true}}, true
	}
	return nil, false
}

// logical is the logical line that starts at line i: with the lines that continue it.
func (s *source) logical(i int) string {
	j := i + 1
	for j < len(s.lines) && s.lines[j].kind == lineCont {
		j++
	}
	return s.text[s.lines[i].off:s.end(j-1)]
}

// firstBody is the first code line in [from, to) indented deeper than indent, or -1 (a
// body on the header's own line).
func (s *source) firstBody(from, to, indent int) int {
	for i := from; i < to; i++ {
		if s.lines[i].kind == lineCode {
			if s.lines[i].indent > indent {
				return i
			}
			return -1
		}
	}
	return -1
}

// pyHeader is a def or class statement up to the colon that ends its header: the first one
// outside brackets and strings.
func pyHeader(stmt string) string {
	depth := 0
	var quote byte
	for i := 0; i < len(stmt); i++ {
		c := stmt[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ':' && depth == 0:
			return stmt[:i]
		case c == '#':
			return stmt[:i]
		}
	}
	return stmt
}

// with is path followed by name, a new slice.
func with(path []string, name ...string) []string {
	return append(append([]string(nil), path...), name...)
}
