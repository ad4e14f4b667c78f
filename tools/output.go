package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// Output limits (DESIGN §4).
const (
	// MaxTextBytes caps the text content of any result unless the caller asked for more
	// (r2r_get_document's max_chars). About 8,000 tokens.
	MaxTextBytes = 32 << 10
	// snippetChars is the length of a search hit's snippet, in characters.
	snippetChars = 300
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
// chunk's text when the chunk has a title (r2r-api.md §4.1); the title is shown separately.
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

// focusedSnippet is snippet, but when the query's words first cluster beyond the opening
// third of the window, the snippet starts shortly before them (marked with a leading "…"),
// so the model sees why the chunk matched.
func focusedSnippet(text, query string, n int) string {
	s := oneLine(text)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	lower := make([]rune, len(runes))
	for i, r := range runes {
		lower[i] = unicode.ToLower(r)
	}
	ls := string(lower)
	terms := queryTerms(query)
	best, bestCount := -1, 0
	for _, term := range terms {
		from := 0
		for k := 0; k < 20; k++ {
			i := strings.Index(ls[from:], term)
			if i < 0 {
				break
			}
			pos := utf8.RuneCountInString(ls[:from+i])
			end := min(len(lower), pos+n*2/3)
			window := string(lower[pos:end])
			count := 0
			for _, t2 := range terms {
				if strings.Contains(window, t2) {
					count++
				}
			}
			if count > bestCount || (count == bestCount && pos < best) {
				best, bestCount = pos, count
			}
			from += i + len(term)
		}
	}
	if best <= n/3 {
		return snippet(s, n)
	}
	start := max(0, best-n/6)
	for start > 0 && start < best && runes[start-1] != ' ' {
		start++
	}
	return "…" + snippet(string(runes[start:]), n-1)
}

// queryTerms are the lower-case words of a query worth looking for (4+ letters).
func queryTerms(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if utf8.RuneCountInString(w) >= 4 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
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

// humanBytes formats a size for people: 512 B, 12.3 KB, 4.0 MB (decimal units, as R2R's
// limits are stated).
func humanBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
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

// Structured-content budget. The text is capped at MaxTextBytes, but clients also hand
// structuredContent to models and write it to logs, and a search hit's chunk metadata
// repeats its document's metadata (up to 16 KiB each): 100 hits measured 1.6 MB before
// this cap. Search and RAG results are fitted into MaxStructuredBytes.
const (
	// MaxStructuredBytes caps the JSON size of r2r_search's and r2r_rag_query's
	// structured content (the RAG answer itself is never cut).
	MaxStructuredBytes = 64 << 10
	// maxItemTextChars is the most of a chunk's text one hit or source carries.
	maxItemTextChars = 2000
	// maxMetaValueBytes drops metadata values whose JSON is larger.
	maxMetaValueBytes = 512
	// maxMetaKeys is how many metadata keys one hit keeps at most.
	maxMetaKeys = 16
)

// coreMetadata are the chunk metadata keys kept first: they say where the chunk comes from.
var coreMetadata = []string{"title", "document_type", "chunk_order", "source_path", "project", "ingested_by", "version"}

// trimRunes cuts s to at most n characters, marking the cut with "…".
func trimRunes(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	return s[:runeOffset(s, max(n-1, 0))] + "…", true
}

// trimMetadata keeps the core keys and then other small scalar values (strings, numbers,
// booleans), in key order, up to maxMetaKeys; values whose JSON exceeds
// maxMetaValueBytes, lists and objects are dropped. onlyCore keeps the core keys alone.
// It reports whether anything was dropped.
func trimMetadata(md map[string]any, onlyCore bool) (map[string]any, bool) {
	out := make(map[string]any, min(len(md), maxMetaKeys))
	small := func(v any) bool {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
		b, err := json.Marshal(v)
		return err == nil && len(b) <= maxMetaValueBytes
	}
	for _, k := range coreMetadata {
		if v, ok := md[k]; ok && small(v) {
			out[k] = v
		}
	}
	if !onlyCore {
		for _, k := range sortedKeys(md) {
			if len(out) >= maxMetaKeys {
				break
			}
			if _, done := out[k]; !done && len(k) <= 64 && small(md[k]) {
				out[k] = md[k]
			}
		}
	}
	return out, len(out) < len(md)
}

// jsonSize is the length of v's JSON encoding.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// textSteps are the successively shorter chunk texts tried while a result is over budget.
var textSteps = []int{1000, 500, 300, 200, 100}

// fitSearch returns o with its hits fitted into budget bytes of JSON: each hit's text cut
// to maxItemTextChars and its metadata trimmed (trimMetadata); while still too large, the
// texts get shorter, the metadata is cut to the core keys, and finally hits are dropped
// from the end. Trimmed hits say truncated: true and Note says what happened. o itself
// (which the cache may share) is not modified.
func fitSearch(o SearchOutput, budget int) SearchOutput {
	hits := make([]SearchHit, len(o.Results))
	for i, h := range o.Results {
		var cutText, cutMeta bool
		h.Text, cutText = trimRunes(h.Text, maxItemTextChars)
		h.Metadata, cutMeta = trimMetadata(h.Metadata, false)
		h.Truncated = cutText || cutMeta
		hits[i] = h
	}
	o.Results = hits
	shorten := func(n int) {
		for i := range hits {
			var cut bool
			if hits[i].Text, cut = trimRunes(hits[i].Text, n); cut {
				hits[i].Truncated = true
			}
		}
	}
	steps := []func(){func() { shorten(textSteps[0]) }, func() { shorten(textSteps[1]) }, func() {
		for i := range hits {
			var cut bool
			if hits[i].Metadata, cut = trimMetadata(hits[i].Metadata, true); cut {
				hits[i].Truncated = true
			}
		}
	}}
	for _, n := range textSteps[2:] {
		steps = append(steps, func() { shorten(n) })
	}
	for _, step := range steps {
		if jsonSize(o) <= budget-noteReserve {
			break
		}
		step()
	}
	note := o.Note
	for dropped := 0; ; dropped++ {
		o.Results = hits[:len(hits)-dropped]
		o.Count = len(o.Results)
		truncated := slices.ContainsFunc(o.Results, func(h SearchHit) bool { return h.Truncated })
		switch {
		case dropped > 0:
			o.Note = fmt.Sprintf("Structured results were cut to fit %s: the last %d hits were left out and the others "+
				"trimmed (truncated: true). Ask for a smaller limit; r2r_get_document returns a document's full text.",
				budgetText(budget), dropped)
		case truncated:
			o.Note = fmt.Sprintf("Structured results were trimmed to fit %s: hits marked truncated: true have shortened "+
				"text or fewer metadata keys. r2r_get_document returns a document's full text.", budgetText(budget))
		default:
			o.Note = note
		}
		if len(o.Results) <= 1 || jsonSize(o) <= budget {
			return o
		}
	}
}

// noteReserve is room kept for the note while texts are shortened.
const noteReserve = 256

// budgetText formats a byte budget: "64 KiB".
func budgetText(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// fitRAG returns o with its sources fitted into budget bytes of JSON: each source's text
// cut to maxItemTextChars, then shorter while still too large, and finally uncited
// sources dropped from the end. The answer is never cut. o itself is not modified.
func fitRAG(o RAGOutput, budget int) RAGOutput {
	srcs := make([]RAGSource, len(o.Sources))
	copy(srcs, o.Sources)
	o.Sources = srcs
	shorten := func(n int) {
		for i := range srcs {
			var cut bool
			if srcs[i].Text, cut = trimRunes(srcs[i].Text, n); cut {
				srcs[i].Truncated = true
			}
		}
	}
	shorten(maxItemTextChars)
	for _, n := range textSteps {
		if jsonSize(o) <= budget-noteReserve {
			break
		}
		shorten(n)
	}
	note := o.Note
	for dropped := 0; ; dropped++ {
		o.Sources = srcs[:len(srcs)-dropped]
		o.Note = note
		if dropped > 0 || slices.ContainsFunc(o.Sources, func(s RAGSource) bool { return s.Truncated }) {
			o.Note = fmt.Sprintf("Sources were trimmed to fit %s (truncated: true marks shortened texts", budgetText(budget))
			if dropped > 0 {
				o.Note += fmt.Sprintf("; %d uncited sources were left out", dropped)
			}
			o.Note += "). r2r_get_document returns a document's full text."
		}
		if len(o.Sources) == 0 || o.Sources[len(o.Sources)-1].Cited || jsonSize(o) <= budget {
			return o
		}
	}
}
