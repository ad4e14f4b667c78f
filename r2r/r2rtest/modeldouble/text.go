package modeldouble

import (
	"strings"
	"unicode"
)

// stopwords are left out of embeddings and of sentence scoring (unless a text has nothing
// else), so that shared function words do not make unrelated texts look alike.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does
		for from had has have how i if in into is it its me my no not of on or our so such that
		the their them then there these they this to was we were what when where which who why
		will with would you your`) {
		m[w] = true
	}
	return m
}()

// words splits s into lower-cased runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// terms is words without stopwords, lightly stemmed so that plurals match their singulars;
// when s has only stopwords they are kept, so that such a text still has terms.
func terms(s string) []string {
	all := words(s)
	out := make([]string, 0, len(all))
	for _, w := range all {
		if !stopwords[w] {
			out = append(out, stem(w))
		}
	}
	if len(out) == 0 {
		for _, w := range all {
			out = append(out, stem(w))
		}
	}
	return out
}

// stem strips a plural or possessive ending: "documents" and "document's" both become
// "document"; short words and words ending in "ss" are kept.
func stem(w string) string {
	w = strings.TrimSuffix(w, "'s")
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// sentences splits text into sentences: at line breaks and after '.', '!' or '?' followed by
// white space. Each sentence has its white space collapsed; empty ones are dropped.
func sentences(text string) []string {
	var out []string
	flush := func(s string) {
		if s = strings.Join(strings.Fields(s), " "); s != "" {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		start := 0
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && i+1 < len(rs) && unicode.IsSpace(rs[i+1]) {
				flush(string(rs[start : i+1]))
				start = i + 1
			}
		}
		flush(string(rs[start:]))
	}
	return out
}

// truncateWords keeps at most n white-space separated words of s; it reports whether any
// were dropped. n <= 0 means no limit.
func truncateWords(s string, n int) (string, bool) {
	if n <= 0 {
		return s, false
	}
	f := strings.Fields(s)
	if len(f) <= n {
		return s, false
	}
	return strings.Join(f[:n], " "), true
}
