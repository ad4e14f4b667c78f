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
of on or that the their then there these this to was were what when where which who why will with you your`) {
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

// scorer computes TF-IDF cosine similarity between a query and chunks, a deterministic
// stand-in for embedding similarity: 1 for identical term distributions, 0 for no shared terms.
type scorer struct {
	df    map[string]int
	n     float64
	query map[string]float64
	qnorm float64
}

func newScorer(query string, corpus []*chunk) *scorer {
	s := &scorer{df: map[string]int{}, n: float64(len(corpus)), query: map[string]float64{}}
	for _, ch := range corpus {
		for t := range ch.terms {
			s.df[t]++
		}
	}
	for _, t := range tokenize(query) {
		s.query[t]++
	}
	for t, f := range s.query {
		w := f * s.idf(t)
		s.qnorm += w * w
	}
	s.qnorm = math.Sqrt(s.qnorm)
	return s
}

func (s *scorer) idf(t string) float64 {
	return math.Log(1 + (s.n+1)/(float64(s.df[t])+1))
}

// score returns the cosine similarity in [0, 1].
func (s *scorer) score(ch *chunk) float64 {
	if s.qnorm == 0 || ch.length == 0 {
		return 0
	}
	var dot, cnorm float64
	for t, f := range ch.terms {
		idf := s.idf(t)
		w := f * idf
		cnorm += w * w
		if q, ok := s.query[t]; ok {
			dot += w * q * idf
		}
	}
	if dot == 0 {
		return 0
	}
	return math.Min(1, dot/(s.qnorm*math.Sqrt(cnorm)))
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
