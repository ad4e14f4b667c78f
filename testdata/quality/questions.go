package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Question is one benchmark question: what a developer asks, the corpus file (slash path
// relative to the corpus root) that answers it, and a short phrase of that file that is the
// answer. Hard questions are about a topic several files mention, of which one answers.
type Question struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	File     string `json:"file"`
	Answer   string `json:"answer"`
	Hard     bool   `json:"hard,omitempty"`
	// Kind is what the question asks for: identifier (a name, constant, default or message),
	// conceptual (how or why something works) or howto (how to do something); optional.
	Kind string `json:"kind,omitempty"`
}

// plain is the text as the benchmark compares it: HTML entities decoded, lower case, every
// run of characters that are not letters or digits (spaces, markup, punctuation) one space.
// The same function normalises answer phrases, corpus files and everything r2r-mcp or R2R
// returns, so Markdown or reStructuredText markup and line breaks never decide a match. R2R
// 3.6.6's reStructuredText parser leaves HTML entities in the text (&quot; &#x27; &lt;), which
// a reader takes as the characters they stand for.
func plain(s string) string {
	s = html.UnescapeString(s)
	var b strings.Builder
	b.Grow(len(s))
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// containsPlain reports whether the normalised phrase occurs in text at word boundaries.
func containsPlain(text, phrase string) bool {
	return strings.Contains(" "+plain(text)+" ", " "+phrase+" ")
}

// kinds are the question kinds the report splits by.
var kinds = []string{"identifier", "conceptual", "howto"}

// loadQuestions reads the question file and checks every question against the corpus: the
// file exists and holds the answer phrase (after plain); ids are unique. Every problem is
// reported, not just the first.
func loadQuestions(path, corpus string) ([]Question, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Question
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var problems []string
	seen := map[string]bool{}
	texts := map[string]string{}
	for i, q := range qs {
		switch {
		case q.ID == "" || seen[q.ID]:
			problems = append(problems, fmt.Sprintf("question %d: id %q is empty or repeated", i, q.ID))
		case strings.TrimSpace(q.Question) == "" || q.File == "":
			problems = append(problems, fmt.Sprintf("%s: question or file is empty", q.ID))
		case len(strings.Fields(plain(q.Answer))) < 2:
			problems = append(problems, fmt.Sprintf("%s: answer phrase %q is shorter than two words", q.ID, q.Answer))
		case q.Kind != "" && !slices.Contains(kinds, q.Kind):
			problems = append(problems, fmt.Sprintf("%s: kind %q is not one of %v", q.ID, q.Kind, kinds))
		case containsPlain(q.Question, plain(q.Answer)):
			// Results echo the query: the phrase would be "in view" whatever was found.
			problems = append(problems, fmt.Sprintf("%s: the question holds its own answer phrase", q.ID))
		}
		seen[q.ID] = true
		t, ok := texts[q.File]
		if !ok {
			b, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(q.File)))
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", q.ID, err))
				continue
			}
			t = plain(string(b))
			texts[q.File] = t
		}
		if !strings.Contains(" "+t+" ", " "+plain(q.Answer)+" ") {
			problems = append(problems, fmt.Sprintf("%s: answer phrase %q (plain: %q) is not in %s", q.ID, q.Answer, plain(q.Answer), q.File))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%d questions do not check out against %s:\n  %s", len(problems), corpus, strings.Join(problems, "\n  "))
	}
	return qs, nil
}

// corpusFiles lists the corpus files (slash paths) under the given prefix ("" = all).
func corpusFiles(corpus, prefix string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(corpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(corpus, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, prefix) {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// selectQuestions keeps the questions whose file is under prefix, then the first n (n ≤ 0: all).
func selectQuestions(qs []Question, prefix string, n int) []Question {
	var out []Question
	for _, q := range qs {
		if strings.HasPrefix(q.File, prefix) {
			out = append(out, q)
		}
	}
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}
