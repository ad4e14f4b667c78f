package r2rtest

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

func timerC(d time.Duration) <-chan time.Time {
	if d <= 0 {
		c := make(chan time.Time, 1)
		c <- time.Now()
		return c
	}
	return time.After(d)
}

// printableRuns extracts runs of at least four printable characters from binary content,
// standing in for a real PDF/Office/image parser.
func printableRuns(b []byte) string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) >= 4 {
			out = append(out, string(cur))
		}
		cur = cur[:0]
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r != utf8.RuneError && (unicode.IsPrint(r) || r == ' ') {
			cur = append(cur, r)
			continue
		}
		flush()
	}
	flush()
	return strings.Join(out, "\n")
}

var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have how i if in into is it its
of on or that the their then there these this to was were what when where which who why will with you your
do does did doing done we us our up can could should would shall may might so than too very just also get got`) {
		stopwords[w] = true
	}
}

// tokenize lower-cases, splits on non-alphanumerics, drops stopwords and lightly stems.
func tokenize(s string) []string {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if stopwords[f] {
			continue
		}
		out = append(out, stem(f))
	}
	return out
}

func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

func newChunk(id, text string, order int, meta map[string]any) *chunk {
	toks := tokenize(text)
	tf := make(map[string]float64, len(toks))
	for _, t := range toks {
		tf[t]++
	}
	return &chunk{id: id, text: text, order: order, metadata: meta, terms: tf, length: len(toks)}
}

// scorer ranks chunks for a query with Okapi BM25 (k1 1.2, b 0.75) plus a boost for query
// terms in the document's title (e.g. payout-queue-backlog.md):
// a deterministic stand-in for R2R's embedding similarity that puts the runbook named for a
// question first. Scores are squashed into [0, 1) with s/(s+scoreHalf), 0 for no shared term.
type scorer struct {
	df     map[string]int
	n      float64
	avgLen float64
	query  []string // distinct query terms
}

const (
	bm25K1     = 1.2
	bm25B      = 0.75
	titleBoost = 1.5 // times the term's idf, once per query term found in the title
	scoreHalf  = 6.0 // the raw score that maps to 0.5
)

func newScorer(query string, corpus []*chunk) *scorer {
	s := &scorer{df: map[string]int{}, n: float64(len(corpus))}
	total := 0
	for _, ch := range corpus {
		total += ch.length
		for t := range ch.terms {
			s.df[t]++
		}
	}
	if len(corpus) > 0 {
		s.avgLen = float64(total) / float64(len(corpus))
	}
	seen := map[string]bool{}
	for _, t := range tokenize(query) {
		if !seen[t] {
			seen[t] = true
			s.query = append(s.query, t)
		}
	}
	return s
}

// idf is BM25's, kept positive for terms in most chunks.
func (s *scorer) idf(t string) float64 {
	df := float64(s.df[t])
	return math.Log(1 + (s.n-df+0.5)/(df+0.5))
}

// score returns the relevance in [0, 1) of a chunk of a document titled docTitle ("" for
// none).
func (s *scorer) score(ch *chunk, docTitle string) float64 {
	if len(s.query) == 0 || ch.length == 0 {
		return 0
	}
	title := map[string]bool{}
	for _, w := range tokenize(docTitle) {
		title[w] = true
	}
	norm := 1 - bm25B + bm25B*float64(ch.length)/math.Max(s.avgLen, 1)
	var raw float64
	for _, t := range s.query {
		idf := s.idf(t)
		if f := ch.terms[t]; f > 0 {
			raw += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
		}
		if title[t] {
			raw += titleBoost * idf
		}
	}
	if raw == 0 {
		return 0
	}
	return raw / (raw + scoreHalf)
}

// splitSentences cuts after '.', '!' or '?' followed by whitespace.
func splitSentences(p string) []string {
	var out []string
	start := 0
	rs := []rune(p)
	for i := 0; i < len(rs)-1; i++ {
		if (rs[i] == '.' || rs[i] == '!' || rs[i] == '?') && unicode.IsSpace(rs[i+1]) {
			if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// splitParagraphs cuts text at blank lines, dropping empty paragraphs.
func splitParagraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
