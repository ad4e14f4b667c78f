package r2rtest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// chunking is how a document is cut into chunks: R2R's "recursive" strategy, a port of
// LangChain's RecursiveCharacterTextSplitter as R2R ships it (separators "\n\n", "\n", " ",
// ""; separators kept at the start of the following piece; chunks whitespace-trimmed;
// lengths in characters). Conformance test TestLive/documents/chunks_overlap compares it
// with R2R.
type chunking struct {
	size, overlap int
}

var chunkSeparators = []string{"\n\n", "\n", " ", ""}

// check is the splitter's constructor check, which fails ingestion in R2R.
func (c chunking) check() error {
	if c.overlap > c.size {
		return &parseError{fmt.Sprintf("Got a larger chunk overlap (%d) than chunk size (%d), should be smaller.", c.overlap, c.size)}
	}
	return nil
}

// split returns the chunk texts of text; none for blank text.
func (c chunking) split(text string) []string {
	return c.splitWith(text, chunkSeparators)
}

func (c chunking) splitWith(text string, seps []string) []string {
	sep := seps[len(seps)-1]
	var next []string
	for i, s := range seps {
		if s == "" {
			sep = s
			break
		}
		if strings.Contains(text, s) {
			sep, next = s, seps[i+1:]
			break
		}
	}
	var out, good []string
	for _, s := range splitKeepingSeparator(text, sep) {
		if utf8.RuneCountInString(s) < c.size {
			good = append(good, s)
			continue
		}
		if len(good) > 0 {
			out = append(out, c.merge(good)...)
			good = nil
		}
		if len(next) == 0 {
			out = append(out, s)
		} else {
			out = append(out, c.splitWith(s, next)...)
		}
	}
	if len(good) > 0 {
		out = append(out, c.merge(good)...)
	}
	return out
}

// splitKeepingSeparator is re.split with the separator captured and glued to the start of
// the piece after it; empty pieces are dropped. An empty separator splits into characters.
func splitKeepingSeparator(text, sep string) []string {
	var parts []string
	if sep == "" {
		for _, r := range text {
			parts = append(parts, string(r))
		}
		return parts
	}
	for i, p := range strings.Split(text, sep) {
		if i > 0 {
			p = sep + p
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// merge joins pieces (kept separators make the joining separator empty) into chunks of at
// most size characters, starting each new chunk with up to overlap characters of the
// previous one's tail pieces.
func (c chunking) merge(pieces []string) []string {
	var docs, cur []string
	total := 0
	for _, d := range pieces {
		n := utf8.RuneCountInString(d)
		if total+n > c.size && len(cur) > 0 {
			if doc := strings.TrimSpace(strings.Join(cur, "")); doc != "" {
				docs = append(docs, doc)
			}
			for total > c.overlap || (total+n > c.size && total > 0) {
				total -= utf8.RuneCountInString(cur[0])
				cur = cur[1:]
			}
		}
		cur = append(cur, d)
		total += n
	}
	if doc := strings.TrimSpace(strings.Join(cur, "")); doc != "" {
		docs = append(docs, doc)
	}
	return docs
}
