// Package rank orders the chunks a search retrieved: the full-text query of a question's
// identifiers, reciprocal rank fusion of ranked chunk lists, a lexical (BM25) ordering of
// candidates whose words are split the way code names things, and the weighing down of tests
// and change logs.
package rank

import (
	"strings"
	"unicode"
)

// maxKeywords bounds the terms of a keyword query.
const maxKeywords = 12

// Keywords is the full-text query of the identifier-shaped words of a question — names such
// as LRUCache, arrayFormat, ttl_cache(maxsize=None), X-Forwarded-For, --verbose, HTTP or a
// capitalised word inside the question, and quoted text such as an error message — as
// alternatives in Postgres websearch_to_tsquery syntax ("a or b or \"quoted text\""). R2R's
// own full-text leg matches all the words of the whole question, which code rarely holds; an
// identifier alone finds the chunk that defines or uses it. "" when the question names none.
func Keywords(query string) string {
	var terms []string
	seen := map[string]bool{}
	add := func(t string) {
		k := strings.ToLower(t)
		if len(terms) < maxKeywords && !seen[k] {
			seen[k] = true
			terms = append(terms, t)
		}
	}
	rest := query
	for _, q := range quoted(query) {
		add(`"` + q + `"`)
		rest = strings.Replace(rest, q, " ", 1)
	}
	for i, f := range strings.Fields(rest) {
		w := strings.TrimFunc(f, trimmable)
		if !identifierShaped(w, i == 0) {
			continue
		}
		for _, part := range strings.FieldsFunc(w, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
		}) {
			part = strings.Trim(part, "-")
			if usable(part) {
				add(part)
			}
		}
	}
	return strings.Join(terms, " or ")
}

// quoted are the spans of query between double quotes or backticks, when they hold a letter.
func quoted(query string) []string {
	var out []string
	for _, q := range []string{`"`, "`", "“"} {
		end := q
		if q == "“" {
			end = "”"
		}
		s := query
		for {
			i := strings.Index(s, q)
			if i < 0 {
				break
			}
			j := strings.Index(s[i+len(q):], end)
			if j < 0 {
				break
			}
			span := strings.TrimSpace(strings.Map(func(r rune) rune {
				if r == '"' || r == '`' {
					return ' '
				}
				return r
			}, s[i+len(q):i+len(q)+j]))
			if strings.IndexFunc(span, unicode.IsLetter) >= 0 {
				out = append(out, span)
			}
			s = s[i+len(q)+j+len(end):]
		}
	}
	return out
}

// trimmable is punctuation around a word of prose, not part of the name it spells.
func trimmable(r rune) bool {
	return strings.ContainsRune(`?!,;:'"“”‘’`+"`", r) || r == '.'
}

// identifierShaped says whether a word of a question looks like a name from code or a
// command line rather than an English word: punctuation other than a hyphen inside it, a
// capital letter after its first letter (or a capitalised word not opening the question),
// letters and digits mixed, or a leading dash.
func identifierShaped(w string, first bool) bool {
	if len(w) < 2 || strings.IndexFunc(w, unicode.IsLetter) < 0 {
		return false
	}
	if strings.HasPrefix(w, "-") {
		return true
	}
	var digit, letter bool
	for i, r := range w {
		switch {
		case unicode.IsDigit(r):
			digit = true
		case unicode.IsLetter(r):
			letter = true
			if i > 0 && unicode.IsUpper(r) {
				return true
			}
		case r != '\'' && r != '’' && r != '-': // hyphenated compounds are English
			return true // _ . ( = / { … inside the word
		}
	}
	if digit && letter {
		return true
	}
	r := []rune(w)[0]
	return !first && unicode.IsUpper(r)
}

// usable says whether a part of an identifier can stand as a keyword: two characters or
// more, and not one of websearch_to_tsquery's operator words.
func usable(part string) bool {
	if len([]rune(part)) < 2 {
		return false
	}
	switch strings.ToLower(part) {
	case "or", "and", "not":
		return false
	}
	return true
}
