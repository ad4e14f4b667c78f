package chunking

import (
	"regexp"
	"strings"
	"sync"
)

// JavaScript and TypeScript are cut on their own structure, read by a scanner of their
// tokens rather than a parser: the pure-Go JavaScript parser there is (tdewolff/parse's js)
// reads ECMAScript without TypeScript and keeps no source offsets in its syntax tree, so it
// could neither read a .ts file nor say where a declaration starts. What cutting needs is
// the bracket depth at each line and whether the line starts inside a string, template or
// comment, which the scanner knows once those and regular expression literals are read.

// jsScanner is the state of jsLines between characters.
type jsScanner struct {
	text      string
	depth     int
	templates []int // depth at each open ${ of a template literal, innermost last
	last      byte  // the last significant character outside comments and strings
	lastWord  string
}

// regexKeywords are the words after which a slash starts a regular expression.
var regexKeywords = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true,
	"new": true, "delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true}

// jsLines cuts JavaScript or TypeScript source into physical lines with the bracket depth at
// each; ok is false when a bracket, template or comment is left open (the file is cut at
// blank lines instead).
func jsLines(text string) (src *source, ok bool) {
	src = &source{text: text, lines: make([]srcLine, 0, strings.Count(text, "\n")+1)}
	sc := &jsScanner{text: text}
	const (
		code = iota
		blockComment
		template
	)
	state, commentIndent, lineStart := code, 0, true
	for i := 0; i < len(text); {
		if lineStart {
			lineStart = false
			l := newLine(text, i, sc.depth, state == template, "//")
			if strings.HasPrefix(text[i+l.indent:], "/*") {
				l.kind = lineComment
			}
			if state == blockComment {
				l.kind, l.indent = lineComment, commentIndent
			}
			src.lines = append(src.lines, l)
		}
		c := text[i]
		switch state {
		case blockComment:
			if strings.HasPrefix(text[i:], "*/") {
				state, i = code, i+2
				continue
			}
		case template:
			switch {
			case c == '\\':
				i++
			case c == '`':
				state = code
				sc.last = '`'
			case strings.HasPrefix(text[i:], "${"):
				sc.templates = append(sc.templates, sc.depth)
				sc.depth++
				state, sc.last = code, '{'
				i += 2
				continue
			}
		default:
			n, next := sc.code(i)
			if next == blockComment {
				state, commentIndent = blockComment, src.lines[len(src.lines)-1].indent
			} else if next == template {
				state = template
			}
			if n < 0 {
				return nil, false
			}
			for _, ch := range text[i:n] {
				if ch == '\n' {
					lineStart = true
				}
			}
			i = n
			continue
		}
		lineStart = text[i] == '\n'
		i++
	}
	return src, state == code && sc.depth == 0
}

// code reads one token of code at i and returns where the next one starts (-1 when a
// bracket closes that was never opened) and whether a block comment (1) or a template (2)
// starts there.
func (sc *jsScanner) code(i int) (int, int) {
	text := sc.text
	c := text[i]
	switch {
	case c == '/' && i+1 < len(text) && text[i+1] == '/':
		if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
			return i + j, 0
		}
		return len(text), 0
	case c == '/' && i+1 < len(text) && text[i+1] == '*':
		return i + 2, 1
	case c == '/' && sc.regexAllowed(i):
		sc.last = 'a'
		return skipRegex(text, i+1), 0
	case c == '\'' || c == '"':
		sc.last = 'a'
		return skipString(text, i+1, c), 0
	case c == '`':
		return i + 1, 2
	case c == '(' || c == '[' || c == '{':
		sc.depth++
	case c == ')' || c == ']' || c == '}':
		sc.depth--
		if sc.depth < 0 {
			return -1, 0
		}
		if c == '}' && len(sc.templates) > 0 && sc.templates[len(sc.templates)-1] == sc.depth {
			sc.templates = sc.templates[:len(sc.templates)-1]
			return i + 1, 2 // back in the template
		}
	case isIdent(c):
		j := i
		for j < len(text) && isIdent(text[j]) {
			j++
		}
		sc.last, sc.lastWord = 'a', text[i:j]
		return j, 0
	case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return i + 1, 0
	}
	sc.last = c
	return i + 1, 0
}

// regexAllowed reports whether a slash at i starts a regular expression rather than
// dividing: after an operator, an opening bracket or a keyword, not after a value; and not
// in a JSX closing tag (</div>).
func (sc *jsScanner) regexAllowed(i int) bool {
	if i > 0 && sc.text[i-1] == '<' {
		return false
	}
	switch {
	case sc.last == 0:
		return true
	case sc.last == 'a':
		return regexKeywords[sc.lastWord]
	}
	return strings.IndexByte("(,=:[!&|?{};+-*%<>~^", sc.last) >= 0
}

// skipRegex is where a regular expression literal whose body starts at i ends; it ends at
// the line's end at the latest, as a literal cannot span lines.
func skipRegex(text string, i int) int {
	class := false
	for ; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			return i
		case c == '\\':
			i++
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			return i + 1
		}
	}
	return i
}

// skipString is where a quoted string whose body starts at i ends; it ends at the line's
// end at the latest (an unterminated string, or JSX text with an apostrophe).
func skipString(text string, i int, quote byte) int {
	for ; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case quote:
			return i + 1
		case '\n':
			return i
		}
	}
	return i
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

var (
	jsClass = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\b\s*([A-Za-z_$][\w$]*)?`)
	})
	jsDeclaration = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?` +
			`(?:function\b|const\b|let\b|var\b|type\b|interface\b|enum\b|namespace\b|module\b)` +
			`|export\s+default\b|[A-Za-z_$][\w$.]*(?:\[[^\]]*\])?\s*=[^=])`)
	})
)

// jsBlocks cuts JavaScript or TypeScript source by statement: one block per top-level
// function, class member, class head, variable, type or assignment, with the comments
// above it (JSDoc included); what lies between (imports, calls) is cut into paragraphs. A
// block's path is its enclosing class and its signature. nil when the file does not scan.
func jsBlocks(text string) []block {
	src, ok := jsLines(text)
	if !ok {
		return nil
	}
	return src.declBlocks(src.jsStatements(0, len(src.lines), 0), src.jsDecl)
}

// jsStatements cuts lines [from, to) at the statements at bracket depth depth: lines at
// that depth, indented as the first of them, that do not close a bracket or continue an
// expression, and do not follow a decorator.
func (s *source) jsStatements(from, to, depth int) [][2]int {
	indent := -1
	return s.statements(from, to, func(i int) bool {
		l := s.lines[i]
		if l.depth != depth || strings.IndexByte("})].?:", s.text[l.off+l.indent]) >= 0 {
			return false
		}
		if indent < 0 {
			indent = l.indent
		}
		if l.indent != indent || strings.HasPrefix(s.line(i), "else") || strings.HasPrefix(s.line(i), "catch") || strings.HasPrefix(s.line(i), "finally") {
			return false
		}
		p := s.prevCode(from, i)
		return p < 0 || s.lines[p].depth != depth || !strings.HasPrefix(s.line(p), "@")
	})
}

// jsDecl is the blocks of the top-level statement in lines [from, to), and whether it is a
// declaration.
func (s *source) jsDecl(from, to int) ([]block, bool) {
	h := s.firstCode(from, to, "@")
	if h < 0 {
		return nil, false
	}
	head := s.line(h)
	sig := signature(jsHeader(s.text[s.lines[h].off:s.end(to-1)]))
	m := jsClass().FindStringSubmatch(head)
	if m == nil {
		if !jsDeclaration().MatchString(head) {
			return nil, false
		}
		return []block{{text: s.span(from, to), path: []string{sig}, decl: true}}, true
	}
	name := m[1]
	if name == "" || name == "extends" || name == "implements" {
		name = "class"
	}
	members := s.jsStatements(h+1, to, s.lines[h].depth+1)
	out := []block{{text: s.span(from, to), path: []string{name, sig}, decl: true}}
	if len(members) < 2 {
		return out, true
	}
	out[0].text = s.span(from, members[1][0]) // the head, with what precedes the first member
	for _, mb := range members[1:] {
		var msig string
		if c := s.firstCode(mb[0], mb[1], "@"); c >= 0 {
			msig = signature(jsHeader(s.text[s.lines[c].off:s.end(mb[1]-1)]))
		}
		out = append(out, block{text: s.span(mb[0], mb[1]), path: []string{name, msig}, decl: true})
	}
	return out, true
}

// jsHeader is a statement up to the brace that opens its body, or to the end of its first
// line outside brackets, or to a comment or template.
func jsHeader(stmt string) string {
	sc := &jsScanner{text: stmt}
	for i := 0; i < len(stmt); {
		c := stmt[i]
		if sc.depth == 0 && (c == '{' || c == '\n' || c == ';') || strings.HasPrefix(stmt[i:], "//") {
			return stmt[:i]
		}
		n, next := sc.code(i)
		if n < 0 || next != 0 {
			return stmt[:i]
		}
		i = n
	}
	return stmt
}
