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
	All         Figures `json:"all"`
	Hard        Figures `json:"hard"`
}

// Figures are the rates (0..1) and medians of a set of questions.
type Figures struct {
	N      int        `json:"questions"`
	Search ToolFigs   `json:"search"`
	Raw    RawFigs    `json:"raw"`
	RAG    RAGFigures `json:"rag"`
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
		SyncSeconds: syncTime.Seconds(), AskSeconds: askTime.Seconds()}
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
	f.Raw = RawFigs{
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

// markdown is the run's table: one row per measure, all questions and the hard ones.
func (s Summary) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s — %d questions (%d hard), %d files (%.1f MB), search_mode %s, limit %d\n\n",
		s.Label, s.All.N, s.Hard.N, s.Files, float64(s.CorpusBytes)/1e6, s.Mode, s.Limit)
	fmt.Fprintf(&b, "sync %.0f s, questions %.0f s, failed calls %d\n\n", s.SyncSeconds, s.AskSeconds, s.Errors)
	b.WriteString("| measure | all | hard |\n|---|---:|---:|\n")
	pct := func(name string, a, h float64) { fmt.Fprintf(&b, "| %s | %.0f%% | %.0f%% |\n", name, 100*a, 100*h) }
	num := func(name, unit string, a, h float64) {
		fmt.Fprintf(&b, "| %s | %.0f%s | %.0f%s |\n", name, a, unit, h, unit)
	}
	a, h := s.All, s.Hard
	pct("r2r_search document hit@1", a.Search.Hit1, h.Search.Hit1)
	pct("r2r_search document hit@3", a.Search.Hit3, h.Search.Hit3)
	pct(fmt.Sprintf("r2r_search document hit@%d", s.Limit), a.Search.Hit10, h.Search.Hit10)
	pct("r2r_search answer in view, text", a.Search.AnswerText, h.Search.AnswerText)
	pct("r2r_search answer in view, structured", a.Search.AnswerStructured, h.Search.AnswerStructured)
	num("r2r_search bytes, text (median)", " B", a.Search.TextBytes, h.Search.TextBytes)
	num("r2r_search bytes, structured (median)", " B", a.Search.StructBytes, h.Search.StructBytes)
	num("r2r_search distinct documents (median)", "", a.Search.DistinctDocs, h.Search.DistinctDocs)
	num("r2r_search latency (median)", " ms", a.Search.Millis, h.Search.Millis)
	pct("R2R raw chunks: document hit@1", a.Raw.Hit1, h.Raw.Hit1)
	pct("R2R raw chunks: document hit@3", a.Raw.Hit3, h.Raw.Hit3)
	pct(fmt.Sprintf("R2R raw chunks: document hit@%d", s.Limit), a.Raw.Hit10, h.Raw.Hit10)
	pct("R2R raw chunks: answer in top 3", a.Raw.Answer3, h.Raw.Answer3)
	pct(fmt.Sprintf("R2R raw chunks: answer in top %d", s.Limit), a.Raw.Answer10, h.Raw.Answer10)
	num("R2R raw chunks: text bytes (median)", " B", a.Raw.TextBytes, h.Raw.TextBytes)
	num("R2R raw chunks: distinct documents (median)", "", a.Raw.DistinctDocs, h.Raw.DistinctDocs)
	if a.RAG != (RAGFigures{}) {
		pct("r2r_rag_query cites the answering file", a.RAG.Cites, h.RAG.Cites)
		pct("r2r_rag_query lists the answering file", a.RAG.Sources, h.RAG.Sources)
		pct("r2r_rag_query answer holds the phrase", a.RAG.Phrase, h.RAG.Phrase)
		num("r2r_rag_query bytes, structured (median)", " B", a.RAG.StructBytes, h.RAG.StructBytes)
		num("r2r_rag_query latency (median)", " ms", a.RAG.Millis, h.RAG.Millis)
	}
	return b.String()
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
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(s.markdown()), 0o644)
}
