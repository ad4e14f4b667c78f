// Package cleantext makes untrusted text safe to show to a model or write to a log:
// String removes characters that can hide or reorder text, and Clip bounds how much of a
// client's or server's input is echoed back.
package cleantext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String removes characters that can hide or reorder text from a reader: Unicode format
// characters (Cf: zero-width spaces and joiners U+200B–U+200F, BiDi embeddings and
// overrides U+202A–U+202E and isolates U+2066–U+2069, U+FEFF, tag characters, …), the
// supplementary variation selectors, and control characters (C0, DEL, C1) other than tab,
// newline and carriage return. The line and paragraph separators U+2028 and U+2029, which
// break a line where neither a model nor a client expects one (and which JSON readers of
// JavaScript's older rules take for the end of a string), become newlines. Invalid UTF-8
// becomes U+FFFD. A clean string is returned as it is, without allocating.
func String(s string) string {
	clean := true
	for _, r := range s {
		if Changes(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case separator(r):
			b.WriteByte('\n')
		case !drop(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Line is String that also turns newlines, tabs and carriage returns into spaces: for a
// value shown inside one line of text (a name, a title, an echoed argument).
func Line(s string) string {
	s = String(s)
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

// Changes reports whether String removes or replaces r.
func Changes(r rune) bool { return drop(r) || separator(r) }

// separator reports whether r is the line or paragraph separator, which String turns into
// a newline.
func separator(r rune) bool { return r == '\u2028' || r == '\u2029' }

func drop(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case r >= 0xE0100 && r <= 0xE01EF: // variation selectors supplement (used to smuggle text)
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Clip returns s cut to at most max bytes on a rune boundary, followed by
// "… (N bytes more)" when anything was cut. Use it on everything echoed back from input
// (tool names, URIs, paths, R2R's error bodies) into an error or a log line.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max < 0 {
		max = 0
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " bytes more)"
}

// Runes returns s cut to at most n runes, the last of them "…" when anything was cut: for
// text quoted back to a model or a user within a bound counted in characters.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; i < len(s) && k < n-1; k++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i] + "…"
}

// Terminal returns s for one line of a terminal: as it is when it is valid UTF-8 and every
// rune is printable and kept by String, else Go-quoted, so control characters (ESC, BEL,
// newlines that would forge another line), invisible and BiDi characters and invalid bytes
// show as escapes instead of acting on the terminal. Use it for file names and other
// untrusted names in CLI output.
func Terminal(s string) string {
	for _, r := range s {
		if drop(r) || r == utf8.RuneError || (r != ' ' && !unicode.IsPrint(r)) {
			return strconv.Quote(s)
		}
	}
	return s
}
