package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// The index is bounded to limit × recallBytesPerMemory bytes as text and as JSON (10
// memories ≤ 2,000 bytes), and never less than minRecallBytes, which holds one entry of the
// longest fields.
const (
	recallBytesPerMemory = 200
	minRecallBytes       = 600
)

// MemoryEntry is one memory of r2r_recall's index.
type MemoryEntry struct {
	// ID is the short id; the full id is shown to r2r_get_document's lookup.
	ID      string `json:"id" required:"true" desc:"short id of the memory (r2r_get_document reads it in full, r2r_forget deletes it, supersedes replaces it)"`
	Kind    string `json:"kind" required:"true" enum:"memoryKinds" desc:"its kind"`
	Title   string `json:"title" required:"true" desc:"its title"`
	Age     string `json:"age" required:"true" desc:"how long ago it was saved (m, h, d, mo, y)"`
	Author  string `json:"author" required:"true" desc:"who saved it: the R2R owner of the memory, by the name part of the email R2R gives for them"`
	Excerpt string `json:"excerpt" required:"true" desc:"the start of its body, on one line"`
	Stale   string `json:"stale,omitempty" desc:"present when files it names changed since it was saved: it may be out of date"`
}

// RecallOutput is the structured result of r2r_recall.
type RecallOutput struct {
	Memories []MemoryEntry `json:"memories" required:"true" desc:"the memories found: best first with a query, newest first without"`
	Count    int           `json:"count" required:"true" desc:"number of memories listed"`
	Note     string        `json:"note,omitempty" desc:"why nothing was found, or what was left out"`
}

func recallDef() mcp.Tool {
	opts := append(readTool("Recall team memories",
		"Find what the team remembered in this project: decisions, conventions, fixes, gotchas, checkpoints and notes. "+
			"With a query (words, or a pasted error message to find its fix) the best matches come first; without one the newest. "+
			"To resume where work was left off: kind checkpoint, no query. Returns a compact index; "+
			"r2r_get_document with an id reads a memory in full.", outputSchema[RecallOutput]()),
		inputSchema[recallParams]())
	opts = append(opts, searchHint("recall what the team remembered resume checkpoint past fix"))
	return newTool("r2r_recall", opts...)
}

// recallParams are one r2r_recall call's arguments.
type recallParams struct {
	Query        string `json:"query" max:"maxQueryChars" desc:"What to look for, or an error message as it appeared; omit to list the newest"`
	Kind         string `json:"kind" enum:"memoryKinds" desc:"Only memories of this kind"`
	Path         string `json:"path" max:"memoryPathChars" desc:"Only memories about this project file (relative to the project root)"`
	Tag          string `json:"tag" max:"memoryTagChars" desc:"Only memories with this tag"`
	Author       string `json:"author" max:"320" desc:"Only memories saved by this R2R user: their email, or the author name recall shows"`
	MaxAgeDays   int    `json:"max_age_days" min:"1" max:"36500" desc:"Only memories saved in the last this many days"`
	Limit        int    `json:"limit" min:"1" max:"20" default:"10" desc:"Maximum number of memories to list"`
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID) to recall from; omit for the current project's collection"`
}

func (p *recallParams) check(*Deps) (err error) {
	p.Query = strings.TrimSpace(p.Query)
	p.Tag = strings.Join(strings.Fields(p.Tag), " ")
	p.Author = strings.TrimSpace(p.Author)
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

// recallTool records each recall with rec.
func recallTool(d *Deps, rec *recorder, sc *scoper) Tool {
	def := recallDef()
	return Tool{Def: def, Group: GroupMemory, ReadOnly: true, Example: Example{Args: map[string]any{"query": "payout queue stalled"}}, run: bound(d, def, func(ctx context.Context, c *call, _ mcp.CallToolRequest, p recallParams) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		o := RecallOutput{Memories: []MemoryEntry{}}
		if s.missing() {
			o.Note = s.missingNote()
			return result(o.Note, o), nil
		}
		q, errRes := recallQuery(s, p, d.now())
		if errRes != nil {
			return errRes, nil
		}
		ms, more, err := d.recallMemories(ctx, s, q)
		if err != nil {
			sc.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		var stale map[string][]string
		if s.Project != nil {
			if root := localRoot(d, *s.Project); root != "" {
				stale = memory.Stale(ctx, root, s.Project.CollectionID != "", ms)
			}
		}
		for _, m := range ms {
			d.shown.remember(m.ID)
		}
		rec.recall(ctx, s, ms)
		o = recallIndex(ms, stale, d.now(), p, more)
		return result(recallText(o, p, s), o), nil
	})}
}

// recallQuery turns the arguments into a memory query; a path is made relative to the
// project root and checked like a saved one.
func recallQuery(s *scope, p recallParams, now time.Time) (memory.Query, *mcp.CallToolResult) {
	q := memory.Query{Text: p.Query, Tag: p.Tag, Author: p.Author, Limit: p.Limit}
	if p.Kind != "" {
		q.Kinds = []string{p.Kind}
	}
	if p.MaxAgeDays > 0 {
		q.Since = now.Add(-time.Duration(p.MaxAgeDays) * 24 * time.Hour)
	}
	if p.Path != "" {
		paths := []string{p.Path}
		if s.Project != nil {
			paths = relativePaths(*s.Project, paths)
		}
		d, err := memory.Normalise(memory.Draft{Kind: memory.KindNote, Title: "-", Body: "-", Paths: paths})
		if err != nil {
			return q, invalidArgs(argErr("path", "%s", strings.TrimPrefix(err.Error(), "paths ")))
		}
		q.Path = d.Paths[0]
	}
	return q, nil
}

// recallMemories searches (with a query) or lists (without) q's memories; more reports
// older memories left out by the limit of a listing.
func (d *Deps) recallMemories(ctx context.Context, s *scope, q memory.Query) (ms []memory.Memory, more bool, err error) {
	st := d.memoryStore(ctx, s.ID)
	if q.Text == "" {
		l, err := st.List(ctx, q, q.Limit)
		if err != nil {
			return nil, false, err
		}
		return l.Memories, l.More, nil
	}
	ms, err = st.Search(ctx, q)
	return ms, false, err
}

// recallIndex builds the index of ms within limit × recallBytesPerMemory bytes in both
// forms: excerpts shrink first, then titles, then the last entries go.
func recallIndex(ms []memory.Memory, stale map[string][]string, now time.Time, p recallParams, more bool) RecallOutput {
	o := RecallOutput{Memories: make([]MemoryEntry, 0, len(ms))}
	for _, m := range ms {
		e := MemoryEntry{ID: shortID(m.ID), Kind: m.Kind, Title: oneLine(Sanitize(m.Title)), Age: age(now, m.Created),
			Author: author(m.Author), Excerpt: oneLine(Sanitize(m.Excerpt))}
		if ch := stale[m.ID]; len(ch) > 0 {
			e.Stale = staleText(ch)
		}
		o.Memories = append(o.Memories, e)
	}
	if more {
		o.Note = "older ones not listed"
	}
	budget := recallBudget(p.Limit)
	full := o.Memories
	for titleMax, excerptMax := 80, 120; ; {
		o.Memories = clipEntries(full, titleMax, excerptMax)
		o.Count = len(o.Memories)
		if indexSize(o, p) <= budget {
			return o
		}
		switch {
		case excerptMax > 0:
			excerptMax = max(excerptMax-10, 0)
		case titleMax > 24:
			titleMax -= 8
		case len(full) > 0:
			full = full[:len(full)-1]
			o.Note = "more matched than fit; narrow the query"
		default:
			return o
		}
	}
}

func recallBudget(limit int) int { return max(limit*recallBytesPerMemory, minRecallBytes) }

func clipEntries(es []MemoryEntry, titleMax, excerptMax int) []MemoryEntry {
	out := make([]MemoryEntry, len(es))
	for i, e := range es {
		e.Title = snippet(e.Title, titleMax)
		e.Excerpt = ""
		if excerptMax > 0 {
			e.Excerpt = snippet(es[i].Excerpt, excerptMax)
		}
		out[i] = e
	}
	return out
}

// indexSize is the larger of o's JSON and text sizes.
func indexSize(o RecallOutput, p recallParams) int {
	b, _ := json.Marshal(o)
	return max(len(b), len(recallText(o, p, nil)))
}

// recallText is the index as text. s is nil while sizing (the scope label is not part of
// the budget's text).
func recallText(o RecallOutput, p recallParams, s *scope) string {
	var b strings.Builder
	if o.Count == 0 {
		b.WriteString("No memories")
		if p.Query != "" {
			fmt.Fprintf(&b, " match %s", quoteForText(p.Query, 80))
		}
		if s != nil {
			b.WriteString(" in " + s.label())
		}
		b.WriteString(".")
		if o.Note != "" {
			b.WriteString(" " + o.Note)
		}
		return b.String()
	}
	order := "newest first"
	if p.Query != "" {
		order = "best first"
	}
	noun := "memories"
	if o.Count == 1 {
		noun = "memory"
	}
	fmt.Fprintf(&b, "%d %s (%s):\n", o.Count, noun, order)
	for i, e := range o.Memories {
		fmt.Fprintf(&b, "%d. [%s] %s — %s, %s ago, id %s", i+1, e.Kind, e.Title, e.Author, e.Age, e.ID)
		if e.Stale != "" {
			b.WriteString(" — " + e.Stale)
		}
		if e.Excerpt != "" {
			b.WriteString("\n   " + e.Excerpt)
		}
		b.WriteString("\n")
	}
	if o.Note != "" {
		b.WriteString(o.Note + ". ")
	}
	b.WriteString("r2r_get_document with an id reads one in full.")
	return b.String()
}

// age is how long ago t was, in one short unit.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "0m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dmo", int(d/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy", int(d/(365*24*time.Hour)))
}

// author is the user part of an email, clipped; "?" when unknown.
func author(email string) string {
	name, _, _ := strings.Cut(oneLine(Sanitize(email)), "@")
	if name == "" {
		return "?"
	}
	return snippet(name, 24)
}

// staleText says which named files changed, naming at most two.
func staleText(changed []string) string {
	names := make([]string, 0, 2)
	for _, c := range changed[:min(len(changed), 2)] {
		names = append(names, snippet(Sanitize(c), 40))
	}
	s := strings.Join(names, ", ")
	if len(changed) > 2 {
		s += fmt.Sprintf(" +%d", len(changed)-2)
	}
	return "may be stale: " + s + " changed since"
}
