package main

import (
	"fmt"
	"strings"
)

// groupNames are the splits of the report, in table order: where the answer lies, then the
// kind of question.
var groupNames = append([]string{"code", "docs"}, kinds...)

// groupFigures are the figures of each group that has questions.
func groupFigures(recs []Record, rag bool) map[string]Figures {
	by := map[string][]Record{}
	for _, r := range recs {
		by[group(r.Question)] = append(by[group(r.Question)], r)
		if r.Kind != "" {
			by[r.Kind] = append(by[r.Kind], r)
		}
	}
	out := map[string]Figures{}
	for name, rs := range by {
		out[name] = figures(rs, rag)
	}
	return out
}

// groupsMarkdown is the split table: per group and run, the answer in view (either form),
// document hit@3 and hit@limit, MRR and nDCG@10 of r2r_search, RAG citing the file, and the grep baseline's
// hit@10 and MRR, so each figure shows where r2r-mcp adds to grep. Empty without groups.
func groupsMarkdown(runs []Summary) string {
	var b strings.Builder
	for _, s := range runs {
		if len(s.Groups) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s, by group:\n\n| group | questions | answer in view (either form) | hit@3 | hit@%d | MRR | nDCG@10 | RAG cites the file | grep hit@3 | grep hit@%d | grep MRR |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", s.Label, s.Limit, s.Limit)
		for _, name := range groupNames {
			f, ok := s.Groups[name]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %.2f | %.2f | %s | %s | %s | %.2f |\n", name, f.N,
				pct(f.Search.AnswerEither), pct(f.Search.Hit3), pct(f.Search.Hit10), f.Search.MRR, f.Search.NDCG10, pct(f.RAG.Cites),
				pct(f.Grep.Hit3), pct(f.Grep.Hit10), f.Grep.MRR)
		}
	}
	return b.String()
}
