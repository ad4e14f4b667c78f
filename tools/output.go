package tools

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// Output limits.
const (
	// MaxTextBytes caps the text content of any result unless the caller asked for more
	// (r2r_get_document's max_chars). About 8,000 tokens.
	MaxTextBytes = 32 << 10
	// shortIDLen is how much of a UUID the text output shows.
	shortIDLen = 8
)

// Sanitize removes characters that can hide or reorder text from a reader (see
// cleantext.String). Retrieved text is untrusted data; it goes through here before it
// reaches the model.
func Sanitize(s string) string { return cleantext.String(s) }

// sanitizeValue applies Sanitize to every string inside a decoded JSON value (map keys
// included) and returns the cleaned copy.
func sanitizeValue(v any) any {
	switch x := v.(type) {
	case string:
		return Sanitize(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[Sanitize(k)] = sanitizeValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sanitizeValue(e)
		}
		return out
	}
	return v
}

// sanitizeMap is sanitizeValue for metadata objects; nil stays nil.
func sanitizeMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return sanitizeValue(m).(map[string]any)
}

// shortID is the first 8 characters of an id, the form the text output shows.
func shortID(id string) string {
	if len(id) <= shortIDLen {
		return id
	}
	return id[:shortIDLen]
}

// oneLine collapses all whitespace runs (newlines included) into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// stripTitlePrefix removes the "Document Title: …\n\nText: " header R2R puts in front of a
// chunk's text when the chunk has a title; the title is shown separately.
func stripTitlePrefix(text string) string {
	if !strings.HasPrefix(text, "Document Title: ") {
		return text
	}
	if i := strings.Index(text, "\n\nText: "); i >= 0 {
		return text[i+len("\n\nText: "):]
	}
	return text
}

// snippet returns at most n characters of text on one line, cut at a word boundary when
// one is near, with "…" when cut.
func snippet(text string, n int) string {
	s := oneLine(text)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := runeOffset(s, n)
	if i := strings.LastIndexByte(s[:cut], ' '); i > cut*2/3 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " ,.;:") + "…"
}

// runeOffset is the byte offset of the n-th rune of s (len(s) when s is shorter).
func runeOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}

// capText enforces a byte limit on a tool's text, cutting on a rune boundary and saying so.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	notice := fmt.Sprintf("\n[Output truncated: it exceeded %d bytes. Ask for less (smaller limit or max_chars) "+
		"or page with offset.]", limit)
	cut := limit - len(notice)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + notice
}

// plural returns "1 result" / "2 results".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// quoteForText shows a user string inside the text output on one line and bounded.
func quoteForText(s string, n int) string {
	return fmt.Sprintf("%q", snippet(Sanitize(s), n))
}

// Structured-content budget: clients hand structuredContent to models, some instead of
// the text, so a search result's JSON is as compact as its text.
const (
	// searchBytesPerHit is the JSON budget of r2r_search's structured content per hit
	// asked for, at least minSearchBudget: 10 hits fit in 4,000 bytes.
	searchBytesPerHit = 400
	minSearchBudget   = 4000
)

// scopeFieldsSize is the length of the optional collection_id, collection_name and note
// members that search and RAG answers share (each omitted when empty).
func scopeFieldsSize(collectionID, collectionName, note string) int {
	n := 0
	if collectionID != "" {
		n += len(`,"collection_id":`) + jsonStringSize(collectionID)
	}
	if collectionName != "" {
		n += len(`,"collection_name":`) + jsonStringSize(collectionName)
	}
	if note != "" {
		n += len(`,"note":`) + jsonStringSize(note)
	}
	return n
}

// jsonStringSize is the length of s encoded as a JSON string by encoding/json (quotes,
// escapes, HTML-safe escaping of <, > and &, U+2028 and U+2029), without encoding it.
func jsonStringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// jsonFloatSize is the length of f encoded by encoding/json.
func jsonFloatSize(f float64) int {
	var buf [32]byte
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(buf[:0], f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		return n - 1 // encoding/json writes e-7, not e-07
	}
	return len(b)
}

// jsonIntSize is the length of n in decimal.
func jsonIntSize(n int) int {
	var buf [24]byte
	return len(strconv.AppendInt(buf[:0], int64(n), 10))
}
