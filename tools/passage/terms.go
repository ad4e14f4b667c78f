package passage

import (
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// stopwords are words of a question that say nothing about its topic; built on first use,
// so a process that never searches does not build it at start-up.
var stopwords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and any are as at be been but by can could did do does doing done for from
get gets got has have how i if in into is it its me my of on or our should so some than that the their them then
there these they this those to was we were what when where which who why will with would you your us not no
possible way ways want need needs`) {
		m[w] = true
	}
	return m
})

// Words splits s into lower-case words: runs of letters, digits and underscores.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

// stem is a word's English stem (Porter2), so "configure", "configured" and "configuration"
// count as one term; words that are not plain ASCII letters are kept as they are.
func stem(w string) string {
	for _, r := range w {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return w
		}
	}
	return english.Stem(w, false)
}

// Terms are the distinct stems of a query's topic words, in query order.
func Terms(query string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range Words(query) {
		if stopwords()[w] || len(w) < 2 {
			continue
		}
		s := stem(w)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// stems is the set of stems of text's words.
func stems(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range Words(text) {
		if !stopwords()[w] {
			out[stem(w)] = true
		}
	}
	return out
}
