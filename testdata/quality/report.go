package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Summary is one run's figures: over all questions and over the hard ones.
type Summary struct {
	Label       string  `json:"label"`
	Backend     string  `json:"backend"`
	Mode        string  `json:"search_mode"`
	Limit       int     `json:"limit"`
	Files       int     `json:"corpus_files"`
	CorpusBytes int64   `json:"corpus_bytes"`
	SyncSeconds float64 `json:"sync_seconds"`
	AskSeconds  float64 `json:"ask_seconds"`
	Errors      int     `json:"errors"`
	RAG         bool    `json:"rag"`
	// NotIngested are the corpus files R2R failed to ingest (their questions are misses).
	NotIngested []string `json:"not_ingested,omitempty"`
	// Refused are the corpus files r2r-mcp sync refused to upload (their questions are misses).
	Refused []string `json:"refused,omitempty"`
	All     Figures  `json:"all"`
	Hard    Figures  `json:"hard"`
	// Groups are the figures of the questions answered in code and in docs (group) and of
	// each kind of question, by name; only the groups that have questions.
	Groups map[string]Figures `json:"groups,omitempty"`
}

// Figures are the rates (0..1) and medians of a set of questions.
type Figures struct {
	N      int        `json:"questions"`
	Search ToolFigs   `json:"search"`
	Raw    RawFigs    `json:"raw"`
	RAG    RAGFigures `json:"rag"`
	Grep   GrepFigs   `json:"grep"`
}

// GrepFigs summarise the grep baseline (GrepMeasure).
type GrepFigs struct {
	Hit1   float64 `json:"hit1"`
	Hit3   float64 `json:"hit3"`
	Hit10  float64 `json:"hit10"`
	MRR    float64 `json:"mrr"`
	NDCG10 float64 `json:"ndcg10"`
}

// ToolFigs summarise r2r_search.
type ToolFigs struct {
	Hit1             float64 `json:"hit1"`
	Hit3             float64 `json:"hit3"`
	Hit10            float64 `json:"hit10"`
	AnswerText       float64 `json:"answer_in_text"`
	AnswerStructured float64 `json:"answer_in_structured"`
	TextBytes        float64 `json:"text_bytes_median"`
	StructBytes      float64 `json:"structured_bytes_median"`
	DistinctDocs     float64 `json:"distinct_docs_median"`
	Millis           float64 `json:"ms_median"`
	// AnswerEither: the answer phrase is in the text or in the structured form.
	AnswerEither float64 `json:"answer_in_either"`
	MRR          float64 `json:"mrr"`
	NDCG10       float64 `json:"ndcg10"`
}

// RawFigs summarise R2R's own search at the same limit and settings.
type RawFigs struct {
	Hit1         float64 `json:"hit1"`
	Hit3         float64 `json:"hit3"`
	Hit10        float64 `json:"hit10"`
	Answer3      float64 `json:"answer_in_top3"`
	Answer10     float64 `json:"answer_in_top10"`
	TextBytes    float64 `json:"text_bytes_median"`
	DistinctDocs float64 `json:"distinct_docs_median"`
	Millis       float64 `json:"ms_median"`
	MRR          float64 `json:"mrr"`
	NDCG10       float64 `json:"ndcg10"`
}

// RAGFigures summarise r2r_rag_query.
type RAGFigures struct {
	Cites       float64 `json:"cites_file"`
	Sources     float64 `json:"sources_file"`
	Phrase      float64 `json:"answer_has_phrase"`
	StructBytes float64 `json:"structured_bytes_median"`
	Millis      float64 `json:"ms_median"`
}

func summarize(c config, recs []Record, files int, bytes int64, syncTime, askTime time.Duration) Summary {
	s := Summary{Label: c.label, Backend: c.backend, Mode: c.mode, Limit: c.limit, Files: files, CorpusBytes: bytes,
		SyncSeconds: syncTime.Seconds(), AskSeconds: askTime.Seconds(), RAG: c.rag}
	var hard []Record
	for _, r := range recs {
		for _, e := range []string{r.Search.Error, r.Raw.Error, r.RAG.Error} {
			if e != "" {
				s.Errors++
			}
		}
		if r.Hard {
			hard = append(hard, r)
		}
	}
	s.All, s.Hard = figures(recs, c.rag), figures(hard, c.rag)
	s.Groups = groupFigures(recs, c.rag)
	return s
}

func figures(recs []Record, rag bool) Figures {
	f := Figures{N: len(recs)}
	if len(recs) == 0 {
		return f
	}
	rate := func(ok func(Record) bool) float64 {
		n := 0
		for _, r := range recs {
			if ok(r) {
				n++
			}
		}
		return float64(n) / float64(len(recs))
	}
	med := func(v func(Record) float64) float64 {
		xs := make([]float64, len(recs))
		for i, r := range recs {
			xs[i] = v(r)
		}
		slices.Sort(xs)
		if len(xs)%2 == 1 {
			return xs[len(xs)/2]
		}
		return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	within := func(rank, k int) bool { return rank > 0 && rank <= k }
	f.Search = ToolFigs{
		Hit1:             rate(func(r Record) bool { return within(r.Search.DocRank, 1) }),
		Hit3:             rate(func(r Record) bool { return within(r.Search.DocRank, 3) }),
		Hit10:            rate(func(r Record) bool { return within(r.Search.DocRank, 10) }),
		AnswerText:       rate(func(r Record) bool { return r.Search.AnswerText }),
		AnswerStructured: rate(func(r Record) bool { return r.Search.AnswerStructured }),
		TextBytes:        med(func(r Record) float64 { return float64(r.Search.TextBytes) }),
		StructBytes:      med(func(r Record) float64 { return float64(r.Search.StructuredBytes) }),
		DistinctDocs:     med(func(r Record) float64 { return float64(r.Search.DistinctDocs) }),
		Millis:           med(func(r Record) float64 { return r.Search.Millis }),
	}
	mean := func(v func(Record) float64) float64 {
		t := 0.0
		for _, r := range recs {
			t += v(r)
		}
		return t / float64(len(recs))
	}
	f.Search.AnswerEither = rate(func(r Record) bool { return r.Search.AnswerText || r.Search.AnswerStructured })
	f.Search.MRR = mean(func(r Record) float64 { return reciprocal(r.Search.FileRank) })
	f.Search.NDCG10 = mean(func(r Record) float64 { return ndcg10(r.Search.FileRank) })
	f.Grep = GrepFigs{
		Hit1:   rate(func(r Record) bool { return within(r.Grep.FileRank, 1) }),
		Hit3:   rate(func(r Record) bool { return within(r.Grep.FileRank, 3) }),
		Hit10:  rate(func(r Record) bool { return within(r.Grep.FileRank, 10) }),
		MRR:    mean(func(r Record) float64 { return reciprocal(r.Grep.FileRank) }),
		NDCG10: mean(func(r Record) float64 { return ndcg10(r.Grep.FileRank) }),
	}
	f.Raw = RawFigs{
		MRR:          mean(func(r Record) float64 { return reciprocal(r.Raw.FileRank) }),
		NDCG10:       mean(func(r Record) float64 { return ndcg10(r.Raw.FileRank) }),
		Hit1:         rate(func(r Record) bool { return within(r.Raw.DocRank, 1) }),
		Hit3:         rate(func(r Record) bool { return within(r.Raw.DocRank, 3) }),
		Hit10:        rate(func(r Record) bool { return within(r.Raw.DocRank, 10) }),
		Answer3:      rate(func(r Record) bool { return within(r.Raw.AnswerRank, 3) }),
		Answer10:     rate(func(r Record) bool { return within(r.Raw.AnswerRank, 10) }),
		TextBytes:    med(func(r Record) float64 { return float64(r.Raw.TextBytes) }),
		DistinctDocs: med(func(r Record) float64 { return float64(r.Raw.DistinctDocs) }),
		Millis:       med(func(r Record) float64 { return r.Raw.Millis }),
	}
	if rag {
		f.RAG = RAGFigures{
			Cites:       rate(func(r Record) bool { return r.RAG.CitesFile }),
			Sources:     rate(func(r Record) bool { return r.RAG.SourcesFile }),
			Phrase:      rate(func(r Record) bool { return r.RAG.AnswerHasPhrase }),
			StructBytes: med(func(r Record) float64 { return float64(r.RAG.StructuredBytes) }),
			Millis:      med(func(r Record) float64 { return r.RAG.Millis }),
		}
	}
	return f
}

// row is one measure of the summary table: its name and its value in a set of figures.
type row struct {
	name  string
	value func(s Summary, f Figures) string
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

var rows = []row{
	{"r2r_search document hit@1", func(_ Summary, f Figures) string { return pct(f.Search.Hit1) }},
	{"r2r_search document hit@3", func(_ Summary, f Figures) string { return pct(f.Search.Hit3) }},
	{"r2r_search document hit@limit", func(_ Summary, f Figures) string { return pct(f.Search.Hit10) }},
	{"r2r_search answer in view, text", func(_ Summary, f Figures) string { return pct(f.Search.AnswerText) }},
	{"r2r_search answer in view, structured", func(_ Summary, f Figures) string { return pct(f.Search.AnswerStructured) }},
	{"r2r_search MRR / nDCG@10 (distinct files)", func(_ Summary, f Figures) string {
		return fmt.Sprintf("%.2f / %.2f", f.Search.MRR, f.Search.NDCG10)
	}},
	{"r2r_search bytes, text (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Search.TextBytes) }},
	{"r2r_search bytes, structured (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Search.StructBytes) }},
	{"r2r_search distinct documents (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Search.DistinctDocs) }},
	{"r2r_search latency, ms (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Search.Millis) }},
	{"R2R raw chunks: document hit@1", func(_ Summary, f Figures) string { return pct(f.Raw.Hit1) }},
	{"R2R raw chunks: document hit@3", func(_ Summary, f Figures) string { return pct(f.Raw.Hit3) }},
	{"R2R raw chunks: document hit@limit", func(_ Summary, f Figures) string { return pct(f.Raw.Hit10) }},
	{"R2R raw chunks: answer in top 3", func(_ Summary, f Figures) string { return pct(f.Raw.Answer3) }},
	{"R2R raw chunks: answer in top limit", func(_ Summary, f Figures) string { return pct(f.Raw.Answer10) }},
	{"R2R raw chunks: MRR / nDCG@10 (distinct files)", func(_ Summary, f Figures) string {
		return fmt.Sprintf("%.2f / %.2f", f.Raw.MRR, f.Raw.NDCG10)
	}},
	{"R2R raw chunks: text bytes (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Raw.TextBytes) }},
	{"R2R raw chunks: distinct documents (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.Raw.DistinctDocs) }},
	{"grep baseline: file hit@1 / @3 / @limit", func(_ Summary, f Figures) string {
		return fmt.Sprintf("%s / %s / %s", pct(f.Grep.Hit1), pct(f.Grep.Hit3), pct(f.Grep.Hit10))
	}},
	{"grep baseline: MRR / nDCG@10", func(_ Summary, f Figures) string {
		return fmt.Sprintf("%.2f / %.2f", f.Grep.MRR, f.Grep.NDCG10)
	}},
	{"r2r_rag_query cites the answering file", func(_ Summary, f Figures) string { return pct(f.RAG.Cites) }},
	{"r2r_rag_query lists the answering file", func(_ Summary, f Figures) string { return pct(f.RAG.Sources) }},
	{"r2r_rag_query answer holds the phrase", func(_ Summary, f Figures) string { return pct(f.RAG.Phrase) }},
	{"r2r_rag_query bytes, structured (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.RAG.StructBytes) }},
	{"r2r_rag_query latency, ms (median)", func(_ Summary, f Figures) string { return fmt.Sprintf("%.0f", f.RAG.Millis) }},
	{"questions (hard)", func(s Summary, f Figures) string { return fmt.Sprintf("%d", f.N) }},
	{"corpus files / MB", func(s Summary, _ Figures) string {
		return fmt.Sprintf("%d / %.1f", s.Files, float64(s.CorpusBytes)/1e6)
	}},
	{"sync / questions, s", func(s Summary, _ Figures) string { return fmt.Sprintf("%.0f / %.0f", s.SyncSeconds, s.AskSeconds) }},
	{"failed calls", func(s Summary, _ Figures) string { return fmt.Sprintf("%d", s.Errors) }},
	{"files R2R did not ingest", func(s Summary, _ Figures) string { return fmt.Sprintf("%d", len(s.NotIngested)) }},
	{"files r2r-mcp refused to upload", func(s Summary, _ Figures) string { return fmt.Sprintf("%d", len(s.Refused)) }},
}

// markdown is the table of one or more runs: a row per measure, a column per run, each cell
// the figure over all questions with the hard questions' in parentheses.
func markdown(runs []Summary) string {
	var b strings.Builder
	b.WriteString("| measure |")
	for _, s := range runs {
		fmt.Fprintf(&b, " %s |", s.Label)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(runs)) + "\n")
	for _, r := range rows {
		if strings.HasPrefix(r.name, "r2r_rag_query") && !slices.ContainsFunc(runs, func(s Summary) bool { return s.RAG }) {
			continue
		}
		fmt.Fprintf(&b, "| %s |", strings.ReplaceAll(r.name, "limit", fmt.Sprint(runs[0].Limit)))
		for _, s := range runs {
			all, hard := r.value(s, s.All), r.value(s, s.Hard)
			if all == hard || s.Hard.N == 0 {
				fmt.Fprintf(&b, " %s |", all)
			} else {
				fmt.Fprintf(&b, " %s (%s) |", all, hard)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nsearch_mode %s, limit %d; in parentheses: the hard questions only.\n", runs[0].Mode, runs[0].Limit)
	b.WriteString(groupsMarkdown(runs))
	return b.String()
}

// readSummaries reads the summary.json of each run directory.
func readSummaries(dirs []string) ([]Summary, error) {
	out := make([]Summary, 0, len(dirs))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "summary.json"))
		if err != nil {
			return nil, err
		}
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func writeReport(dir string, recs []Record, s Summary) error {
	for name, v := range map[string]any{"questions.json": recs, "summary.json": s} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(markdown([]Summary{s})), 0o644)
}

// compare prints the baseline run's table beside this run's, and the questions whose answer
// phrase came into or dropped out of r2r_search's view (either form) or whose answering file
// entered or left the top 3.
func compare(dir string, s Summary, recs []Record) error {
	base, err := readSummaries([]string{dir})
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "questions.json"))
	if err != nil {
		return err
	}
	var old []Record
	if err := json.Unmarshal(b, &old); err != nil {
		return fmt.Errorf("%s/questions.json: %w", dir, err)
	}
	base[0].Label = "baseline: " + base[0].Label
	fmt.Println(markdown([]Summary{base[0], s}))
	byID := map[string]Record{}
	for _, r := range old {
		byID[r.ID] = r
	}
	inView := func(r Record) bool { return r.Search.AnswerText || r.Search.AnswerStructured }
	top3 := func(r Record) bool { return r.Search.DocRank > 0 && r.Search.DocRank <= 3 }
	for _, r := range recs {
		o, ok := byID[r.ID]
		if !ok {
			continue
		}
		for _, m := range []struct {
			what string
			f    func(Record) bool
		}{{"answer in view", inView}, {"file in top 3", top3}} {
			if was, is := m.f(o), m.f(r); was != is {
				verb := map[bool]string{true: "gained", false: "lost"}[is]
				fmt.Printf("%s %s: %s (%s)\n", verb, m.what, r.ID, r.Question.Question)
			}
		}
	}
	return nil
}
