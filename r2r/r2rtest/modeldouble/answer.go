package modeldouble

import (
	"math"
	"regexp"
	"sort"
	"strings"
)

// Markers of R2R's prompts. The RAG task prompt puts the query under "### Query:" (once
// before the context and once after it) and the search results under "### Context:"; each
// result starts with a line "Source ID [abc1234]:" (the first 7 characters of its id), and
// the document results list their chunks as "Chunk ID abc1234:". The summary prompt puts
// the document under "### Document:".
const (
	queryMarker    = "### Query:"
	contextMarker  = "### Context:"
	documentMarker = "### Document:"
)

// sourceLine matches the line that opens one search result in R2R's context.
var sourceLine = regexp.MustCompile(`^\s*(?:Source ID \[([A-Za-z0-9]{7,8})\]|Chunk ID ([A-Za-z0-9]{7,8})):\s*$`)

// sectionHeaders are the lines R2R puts between groups of search results; they belong to
// no source.
var sectionHeaders = map[string]bool{
	"Vector Search Results:":   true,
	"Graph Search Results:":    true,
	"Web Page Search Results:": true,
	"Web Search Results:":      true,
	"Local Context Documents:": true,
}

// maxSentences is how many context sentences an answer quotes at most.
const maxSentences = 3

// source is one search result of a context: its short id and its text.
type source struct {
	id   string
	text string
}

// parseRAGPrompt finds the query and the context of R2R's RAG prompt; ok is false when the
// text has no "### Context:" block.
func parseRAGPrompt(prompt string) (query, context string, ok bool) {
	ci := strings.Index(prompt, contextMarker)
	if ci < 0 {
		return "", "", false
	}
	if qi := strings.Index(prompt, queryMarker); qi >= 0 && qi < ci {
		query = prompt[qi+len(queryMarker) : ci]
	}
	context = prompt[ci+len(contextMarker):]
	// The query is repeated after the context; the context ends there.
	if qi := strings.LastIndex(context, queryMarker); qi >= 0 {
		if query == "" {
			query = context[qi+len(queryMarker):]
			if end := strings.Index(query, "\n\n"); end >= 0 {
				query = query[:end]
			}
		}
		context = context[:qi]
	} else if ri := strings.LastIndex(context, "## Response:"); ri >= 0 {
		context = context[:ri]
	}
	return strings.TrimSpace(query), strings.TrimSpace(context), true
}

// parseSources splits a context into its sources. Text before the first source line (or in
// a context with none) becomes a source with no id.
func parseSources(context string) []source {
	var out []source
	cur := source{}
	var b strings.Builder
	flush := func() {
		cur.text = strings.TrimSpace(b.String())
		if cur.text != "" {
			out = append(out, cur)
		}
		b.Reset()
	}
	for _, line := range strings.Split(context, "\n") {
		if m := sourceLine.FindStringSubmatch(line); m != nil {
			flush()
			cur = source{id: m[1] + m[2]}
			continue
		}
		if sectionHeaders[strings.TrimSpace(line)] {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	flush()
	return out
}

// candidate is one sentence of a source, with its place for a stable order.
type candidate struct {
	text   string
	id     string
	order  int
	tokens map[string]bool
	score  float64
}

// extract picks the sentences of sources that best match query: each sentence scores the
// summed inverse sentence frequency of the query terms it contains. It returns the best
// ones (at most maxSentences, each scoring at least half the best score) in context order.
// When no sentence shares a term with the query, the first sentence of the first source
// stands in, since R2R orders results by relevance.
func extract(query string, sources []source) []candidate {
	var cands []candidate
	for _, s := range sources {
		for _, sent := range sentences(s.text) {
			toks := map[string]bool{}
			for _, t := range terms(sent) {
				toks[t] = true
			}
			cands = append(cands, candidate{text: sent, id: s.id, order: len(cands), tokens: toks})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	qterms := map[string]bool{}
	for _, t := range terms(query) {
		qterms[t] = true
	}
	for t := range qterms {
		df := 0
		for _, c := range cands {
			if c.tokens[t] {
				df++
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + float64(len(cands))/float64(df))
		for i := range cands {
			if cands[i].tokens[t] {
				cands[i].score += idf
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	// A sentence that matches much less than the best one is noise, not support.
	n := 0
	for n < len(cands) && n < maxSentences && cands[n].score > 0 && cands[n].score >= cands[0].score/2 {
		n++
	}
	if n == 0 {
		first := cands[0]
		for _, c := range cands {
			if c.order < first.order {
				first = c
			}
		}
		return []candidate{first}
	}
	picked := cands[:n]
	sort.Slice(picked, func(i, j int) bool { return picked[i].order < picked[j].order })
	return picked
}

// answerFromContext is the extractive answer to query from an R2R context: the best
// sentences, each cited with its bracketed source id.
func answerFromContext(query, context string) string {
	picked := extract(query, parseSources(context))
	if len(picked) == 0 {
		if query == "" {
			return "The provided context is empty, so there is nothing to answer from."
		}
		return "The provided context has no information about: " + oneLine(query)
	}
	parts := make([]string, len(picked))
	for i, c := range picked {
		parts[i] = c.text
		// A run of sentences from one source cites it once, at the run's end.
		if c.id != "" && (i+1 == len(picked) || picked[i+1].id != c.id) {
			parts[i] += " [" + c.id + "]"
		}
	}
	return strings.Join(parts, " ")
}

// summarize answers R2R's document summary prompt extractively, beginning as that prompt
// asks.
func summarize(document string) string {
	sents := sentences(document)
	if len(sents) == 0 {
		return "The document contains no text."
	}
	if len(sents) > maxSentences {
		sents = sents[:maxSentences]
	}
	return "The document contains " + strings.Join(sents, " ")
}

// genericReply answers any other prompt with the first sentences of its own text.
func genericReply(prompt string) string {
	sents := sentences(prompt)
	if len(sents) == 0 {
		return "No text was given."
	}
	if len(sents) > 2 {
		sents = sents[:2]
	}
	return strings.Join(sents, " ")
}

// documentOf returns the text under R2R's "### Document:" marker, up to the reminder under
// the last "### Query:" that follows it (a heading inside the document does not end it);
// ok is false without the marker.
func documentOf(prompt string) (string, bool) {
	i := strings.Index(prompt, documentMarker)
	if i < 0 {
		return "", false
	}
	doc := prompt[i+len(documentMarker):]
	if j := strings.LastIndex(doc, queryMarker); j >= 0 {
		doc = doc[:j]
	} else if j := strings.LastIndex(doc, "## Response:"); j >= 0 {
		doc = doc[:j]
	}
	return strings.TrimSpace(doc), true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
