package analytics

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// Report is what the knowledge base was asked over a period and how well it answered.
type Report struct {
	Project string    `json:"project,omitempty"`
	Since   time.Time `json:"since"`
	Until   time.Time `json:"until"`
	// Searches and Questions count r2r_search and r2r_rag_query calls; Recalls memory_recall.
	Searches  int `json:"searches"`
	Questions int `json:"rag_questions"`
	Recalls   int `json:"recalls"`
	// CacheHitRate is the share of searches and questions answered from the cache (0..1).
	CacheHitRate float64 `json:"cache_hit_rate"`
	// Gaps are the questions that found nothing or only weak hits, most asked first.
	Gaps []Gap `json:"gaps"`
	// TopDocuments are the documents most often returned, most first.
	TopDocuments []DocCount `json:"top_documents"`
	// Recalled counts the memories recall returned, by kind.
	Recalled map[string]int `json:"memories_recalled"`
	// Memories counts the team's memories by kind (nil = not looked up).
	Memories map[string]int `json:"memories,omitempty"`
	// IndexLag is how far the index is behind the working tree (nil = not computed, Note says why).
	IndexLag *IndexLag `json:"index_lag,omitempty"`
	// Withheld counts the queries not kept because they held a secret.
	Withheld int    `json:"withheld_queries,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Gap is a question the knowledge base could not answer well.
type Gap struct {
	Query   string    `json:"query"`
	Asked   int       `json:"asked"`   // how often, searches and questions together
	Nothing int       `json:"nothing"` // of which found nothing
	Weak    int       `json:"weak"`    // of which found only weak hits
	Last    time.Time `json:"last"`
}

// DocCount is a document and how often it was returned.
type DocCount struct {
	ID       string `json:"document_id"`
	Title    string `json:"title,omitempty"`
	Returned int    `json:"returned"`
}

// IndexLag is what a sync of the working tree would do now (its dry run).
type IndexLag struct {
	New     int `json:"new_files"`
	Changed int `json:"changed_files"`
	Removed int `json:"removed_files"` // documents a sync deletes: their files are gone (with --prune) or empty now
	// Kept are documents of files no longer in the project that a sync keeps (only
	// sync --prune deletes them).
	Kept int `json:"kept_documents,omitempty"`
}

// Behind reports whether a sync would change anything.
func (l IndexLag) Behind() bool { return l.New+l.Changed+l.Removed > 0 }

// Summarize reports the events of [since, until], keeping the top n gaps and documents.
func Summarize(events []Event, since, until time.Time, n int) Report {
	r := Report{Since: since, Until: until, Gaps: []Gap{}, TopDocuments: []DocCount{}, Recalled: map[string]int{}}
	gaps := map[string]*Gap{}
	docs := map[string]*DocCount{}
	var hits int
	for _, e := range events {
		if e.Time.Before(since) || e.Time.After(until) {
			continue
		}
		switch e.Kind {
		case KindRecall:
			r.Recalls++
			for _, k := range e.MemoryKinds {
				r.Recalled[k]++
			}
			continue
		case KindSearch:
			r.Searches++
		case KindRAG:
			r.Questions++
		default:
			continue
		}
		if e.Cached {
			hits++
		}
		if e.Query == Withheld {
			r.Withheld++
		}
		for _, d := range e.Docs {
			dc := docs[d.ID]
			if dc == nil {
				dc = &DocCount{ID: d.ID}
				docs[d.ID] = dc
			}
			dc.Returned++
			dc.Title = cmp.Or(d.Title, dc.Title)
		}
		if e.Hits < 0 || (e.Hits > 0 && !e.Weak) || e.Query == "" || e.Query == Withheld {
			continue
		}
		g := gaps[e.Query]
		if g == nil {
			g = &Gap{Query: e.Query}
			gaps[e.Query] = g
		}
		g.Asked++
		if e.Hits == 0 {
			g.Nothing++
		} else {
			g.Weak++
		}
		if e.Time.After(g.Last) {
			g.Last = e.Time
		}
	}
	if total := r.Searches + r.Questions; total > 0 {
		r.CacheHitRate = float64(int(float64(hits)/float64(total)*1000+0.5)) / 1000
	}
	r.Gaps = top(gaps, n, func(a, b *Gap) int {
		return cmp.Or(b.Asked-a.Asked, b.Last.Compare(a.Last), strings.Compare(a.Query, b.Query))
	})
	r.TopDocuments = top(docs, n, func(a, b *DocCount) int { return cmp.Or(b.Returned-a.Returned, strings.Compare(a.ID, b.ID)) })
	return r
}

func top[T any](m map[string]*T, n int, order func(a, b *T) int) []T {
	l := slices.SortedFunc(maps.Values(m), order)
	out := make([]T, 0, min(n, len(l)))
	for _, p := range l[:min(n, len(l))] {
		out = append(out, *p)
	}
	return out
}

// Text is the report as a person reads it.
func (r Report) Text() string {
	var b strings.Builder
	name := r.Project
	if name == "" {
		name = "this knowledge base"
	}
	fmt.Fprintf(&b, "Analytics of %s, %s to %s:\n", name, r.Since.UTC().Format(time.DateOnly), r.Until.UTC().Format(time.DateOnly))
	fmt.Fprintf(&b, "%d searches, %d RAG questions, %d memory recalls; cache hit rate %.0f%%.\n",
		r.Searches, r.Questions, r.Recalls, r.CacheHitRate*100)
	if len(r.Gaps) == 0 {
		b.WriteString("Gaps: none — every search and question found something.\n")
	} else {
		b.WriteString("Gaps (found nothing or only weak hits), most asked first:\n")
		for _, g := range r.Gaps {
			fmt.Fprintf(&b, "  %d× %q", g.Asked, g.Query)
			switch {
			case g.Weak == 0:
				b.WriteString(" — found nothing")
			case g.Nothing == 0:
				b.WriteString(" — weak hits only")
			default:
				fmt.Fprintf(&b, " — found nothing %d×, weak hits %d×", g.Nothing, g.Weak)
			}
			fmt.Fprintf(&b, " (last %s)\n", g.Last.UTC().Format(time.DateOnly))
		}
	}
	if len(r.TopDocuments) > 0 {
		b.WriteString("Most returned documents:\n")
		for _, d := range r.TopDocuments {
			fmt.Fprintf(&b, "  %d× %s (%s)\n", d.Returned, cmp.Or(d.Title, "untitled"), d.ID)
		}
	}
	fmt.Fprintf(&b, "Memories recalled by kind: %s\n", kindCounts(r.Recalled))
	if r.Memories != nil {
		fmt.Fprintf(&b, "Team memories by kind: %s\n", kindCounts(r.Memories))
	}
	if l := r.IndexLag; l != nil {
		if l.Behind() {
			fmt.Fprintf(&b, "Index behind the working tree: %d new, %d changed, %d removed files (r2r-mcp sync brings it up to date).\n", l.New, l.Changed, l.Removed)
		} else {
			b.WriteString("Index up to date with the working tree.\n")
		}
		if l.Kept > 0 {
			b.WriteString(kbsync.StaleKept(l.Kept) + " (r2r-mcp sync --prune deletes them).\n")
		}
	}
	if r.Withheld > 0 {
		fmt.Fprintf(&b, "%d queries held a secret and were not kept.\n", r.Withheld)
	}
	if r.Note != "" {
		b.WriteString(r.Note + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func kindCounts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
