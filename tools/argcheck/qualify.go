package argcheck

import (
	"slices"
	"strings"
	"unicode"
)

// A word that negates or qualifies an argument's name changes what the argument means:
// no_prune asks for the opposite of prune, keep_document_id names the document to keep,
// min_tokens is another bound than max_tokens. A name that differs from an argument's by
// such a word is no near miss of it, however few edits apart the two are: reading it as the
// argument would do what the caller asked not to.

// negations are words that turn a name into its opposite, whether the caller adds one
// (no_prune for prune) or leaves out the one an argument's name holds (embedding for
// skip_embedding).
var negations = words(`no not non un dont donot doesnt didnt cannot cant never none nothing neither nor
	without skip skips skipped skipping keep keeps kept keeping retain preserve spare protect
	exclude excludes excluded excluding except excepting disable disables disabled disabling
	ignore ignores ignored ignoring avoid avoiding off false remove removes removed removing
	omit omits omitted omitting stop deny denied prevent suppress hide hidden forbid unset undo`)

// qualifiers are words that make a name mean another thing when the caller adds one:
// the other end of a range, the other mode, the opposite of a negation.
var qualifiers = words(`include includes including only with enable enables enabled on true yes
	min minimum max maximum least most less more first last before after above below
	old older oldest new newer newest sync async`)

// gluedPrefixes may also start a word without a separator (noprune, unprune); longer
// negations and qualifiers are found at either end of a word (dontprune, pruneoff).
var gluedPrefixes = words(`no un`)

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// meaning returns the word that makes got mean something other than the argument name:
// one got adds, or a negation name holds that got leaves out; "" when there is none. A word
// got sends on its own must be one of name's own words too: offset starts with off, but
// offset_off is not offset.
func meaning(got, name string) string {
	gw, gg := loaded(got)
	nw, ng := loaded(name)
	for _, w := range gw {
		if !slices.Contains(nw, w) {
			return w
		}
	}
	for _, w := range gg {
		if !slices.Contains(nw, w) && !slices.Contains(ng, w) {
			return w
		}
	}
	for _, w := range nameWords(name) {
		if negations[w] && !slices.Contains(gw, w) && !slices.Contains(gg, w) {
			return w
		}
	}
	return ""
}

// loaded returns the negations and qualifiers s carries as words of their own (no_prune,
// noPrune, "no prune"), and those glued to the start or end of another word (noprune,
// pruneoff). At each end of a word the longest one counts (runasync ends in async, not
// sync).
func loaded(s string) (whole, glued []string) {
	for _, w := range nameWords(s) {
		if negations[w] || qualifiers[w] {
			whole = append(whole, w)
			continue
		}
		for _, prefix := range []bool{true, false} {
			if q := gluedEnd(w, prefix); q != "" {
				glued = append(glued, q)
			}
		}
	}
	return whole, glued
}

// gluedEnd returns the longest negation or qualifier that w starts with (or, when not
// prefix, ends with), leaving at least two letters of another word; "" when none. Of the
// words shorter than three letters only gluedPrefixes count, and only at the start: too many
// words end in on or no, or start with on.
func gluedEnd(w string, prefix bool) string {
	best := ""
	for _, m := range []map[string]bool{negations, qualifiers} {
		for q := range m {
			if len(q) <= len(best) || len(w)-len(q) < 2 || (len(q) < 3 && !(prefix && gluedPrefixes[q])) {
				continue
			}
			if prefix && strings.HasPrefix(w, q) || !prefix && strings.HasSuffix(w, q) {
				best = q
			}
		}
	}
	return best
}

// nameWords splits an argument name into lower-case words at case changes, separators and
// any other character that is no letter or digit; an apostrophe joins (don't is dont).
func nameWords(s string) []string {
	s = strings.NewReplacer("'", "", "\u2019", "", "\u02bc", "").Replace(s)
	return strings.FieldsFunc(snake(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// plain reports whether an argument name is plain enough to be read as a near miss:
// printable ASCII letters, digits, separators. A name holding anything else (a control,
// invisible or BiDi character, a quote, a letter of another script) is not guessed at.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == ' ' || c == '.') {
			return false
		}
	}
	return true
}
