package kbsync

import "strings"

// wildmatch reports whether text matches the glob pattern as git matches .gitignore
// patterns (a port of git's wildmatch; pathname is its WM_PATHNAME): '*' and '?' do not
// cross '/', "**" as a whole path segment spans directories, classes take '!' or '^' for
// negation, ranges and [:name:] classes, and '\' escapes the next character.
func wildmatch(pattern, text string, pathname bool) bool {
	return (&wild{pat: pattern, pathname: pathname}).match(0, text) == wmMatch
}

const (
	wmNoMatch = iota
	wmMatch
	wmAbortAll
	wmAbortToStarStar
)

type wild struct {
	pat      string
	pathname bool
}

// match matches pat[pi:] against text.
func (w *wild) match(pi int, text string) int {
	p := w.pat
	for ; pi < len(p); pi++ {
		pc := p[pi]
		if len(text) == 0 && pc != '*' {
			return wmAbortAll
		}
		var tc byte
		if len(text) > 0 {
			tc = text[0]
		}
		switch pc {
		case '\\':
			if pi+1 == len(p) {
				return wmNoMatch // a trailing '\' matches nothing
			}
			pi++
			if tc != p[pi] {
				return wmNoMatch
			}
		case '?':
			if w.pathname && tc == '/' {
				return wmNoMatch
			}
		case '*':
			return w.star(pi, text)
		case '[':
			end, ok, abort := class(p, pi+1, tc)
			if abort {
				return wmAbortAll
			}
			if !ok || (w.pathname && tc == '/') {
				return wmNoMatch
			}
			pi = end // the closing ']'
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
		text = text[1:]
	}
	if len(text) > 0 {
		return wmNoMatch
	}
	return wmMatch
}

// star matches the pattern from the '*' at pi against text.
func (w *wild) star(pi int, text string) int {
	p := w.pat
	matchSlash := !w.pathname
	start := pi
	pi++
	if pi < len(p) && p[pi] == '*' {
		for pi < len(p) && p[pi] == '*' {
			pi++
		}
		// "**" spans directories only as a whole segment: after the start or a '/', before
		// the end or a '/'; anywhere else it is '*'.
		if (start == 0 || p[start-1] == '/') && (pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')) {
			if pi < len(p) && p[pi] == '/' && w.match(pi+1, text) == wmMatch {
				return wmMatch // "**/" matching no directory at all
			}
			matchSlash = true
		} else {
			matchSlash = !w.pathname
		}
	}
	if pi == len(p) {
		if !matchSlash && strings.Contains(text, "/") {
			return wmNoMatch
		}
		return wmMatch
	}
	if !matchSlash && p[pi] == '/' {
		i := strings.IndexByte(text, '/')
		if i < 0 {
			return wmNoMatch
		}
		return w.match(pi, text[i:])
	}
	for len(text) > 0 {
		m := w.match(pi, text)
		if m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return m
			}
		} else if !matchSlash && text[0] == '/' {
			return wmAbortToStarStar
		}
		text = text[1:]
	}
	return wmAbortAll
}

// class matches tc against the bracket expression whose body starts at p[i] (after '[').
// It returns the index of the closing ']', whether tc matched (negation applied), and
// abort when the expression is malformed (no closing ']', an unknown [:name:]).
func class(p string, i int, tc byte) (end int, ok, abort bool) {
	pc := byteAt(p, i)
	negated := pc == '!' || pc == '^'
	if negated {
		i++
		pc = byteAt(p, i)
	}
	var prev byte
	matched := false
	for {
		if pc == 0 {
			return 0, false, true
		}
		var in bool
		switch {
		case pc == '\\':
			i++
			pc = byteAt(p, i)
			if pc == 0 {
				return 0, false, true
			}
			in = tc == pc
		case pc == '-' && prev != 0 && byteAt(p, i+1) != 0 && byteAt(p, i+1) != ']':
			var hi byte
			if i, hi = rangeEnd(p, i+1); hi == 0 {
				return 0, false, true
			}
			in = tc <= hi && tc >= prev
			pc = 0 // a range ends: no "prev" for a following '-'
		case pc == '[' && byteAt(p, i+1) == ':':
			if i, pc, in, abort = namedClass(p, i, tc); abort {
				return 0, false, true
			}
		default:
			in = tc == pc
		}
		matched = matched || in
		prev = pc
		i++
		pc = byteAt(p, i)
		if pc == ']' {
			break
		}
	}
	return i, matched != negated, false
}

// byteAt is p[j], or 0 past p's end.
func byteAt(p string, j int) byte {
	if j < len(p) {
		return p[j]
	}
	return 0
}

// rangeEnd reads the upper bound of a range at p[i] (after its '-'), escaped or not: its
// index and byte, 0 when the pattern ends inside the escape.
func rangeEnd(p string, i int) (int, byte) {
	if byteAt(p, i) == '\\' {
		i++
	}
	return i, byteAt(p, i)
}

// namedClass reads a "[:name:]" at p[i] (p[i:i+2] is "[:"). It returns the index of its
// closing ']', the byte a following '-' would start a range from (0: none), and whether tc
// is in the class. Without a closing ":]" the '[' is a plain byte and nothing more is read.
// abort when the expression has no closing ']' or the name is unknown.
func namedClass(p string, i int, tc byte) (end int, pc byte, in, abort bool) {
	s := i + 2
	j := s
	for byteAt(p, j) != 0 && byteAt(p, j) != ']' {
		j++
	}
	if byteAt(p, j) == 0 {
		return 0, 0, false, true
	}
	if j-s-1 < 0 || p[j-1] != ':' {
		return i, '[', tc == '[', false
	}
	in, known := posixClass(p[s:j-1], tc)
	if !known {
		return 0, 0, false, true
	}
	return j, 0, in, false
}

// posixClass reports whether c is in the [:name:] class, and whether name is known.
func posixClass(name string, c byte) (in, known bool) {
	upper, lower, digit := c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9'
	alpha := upper || lower
	graph := c > 0x20 && c < 0x7f
	switch name {
	case "alnum":
		return alpha || digit, true
	case "alpha":
		return alpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !alpha && !digit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
