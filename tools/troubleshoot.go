package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// Bounds of r2r_troubleshoot: the error with its trace, what it lists, and how long.
const (
	maxTroubleBytes   = 8 << 10
	maxTroubleFixes   = 5
	maxTroublePassage = 3
	troubleQueryChars = 400
	troubleExcerpt    = 160
)

// How a fix matched the error.
const (
	matchSignature = "same_error"
	matchMeaning   = "similar"
)

// TroubleFix is one remembered fix r2r_troubleshoot found.
type TroubleFix struct {
	ID      string `json:"id" required:"true" desc:"short id; r2r_get_document reads the fix in full"`
	Title   string `json:"title" required:"true" desc:"its title"`
	Match   string `json:"match" required:"true" enum:"troubleMatches" desc:"same_error: its error has this signature; similar: found by meaning"`
	Author  string `json:"author" required:"true" desc:"who saved it"`
	Age     string `json:"age" required:"true" desc:"how long ago"`
	Excerpt string `json:"excerpt" required:"true" desc:"the start of the fix"`
}

// TroublePassage is a passage of a project document that mentions the error.
type TroublePassage struct {
	ID    string `json:"id" required:"true" desc:"short id of the document"`
	Title string `json:"title" required:"true" desc:"its title"`
	Text  string `json:"text" required:"true" desc:"the passage"`
}

// TroubleshootOutput is the structured result of r2r_troubleshoot.
type TroubleshootOutput struct {
	Signature string           `json:"signature" required:"true" desc:"the error's normalised signature (numbers, ids, addresses, temp paths replaced)"`
	Fixes     []TroubleFix     `json:"fixes" required:"true" desc:"the team's fixes: same_error (same signature) first, newest first, then similar ones"`
	Passages  []TroublePassage `json:"passages" required:"true" desc:"passages of the project's documents that mention the error"`
	Message   string           `json:"message" required:"true" desc:"what was found, or how to remember the fix once found"`
}

func troubleshootDef() mcp.Tool {
	opts := append(readTool("Troubleshoot an error",
		"Paste an error (with its stack trace): returns the team's remembered fixes for it first, "+
			"matched on the error's signature and by meaning, then passages of the project's docs that mention it, each cited.",
		outputSchema[TroubleshootOutput]()),
		inputSchema[troubleshootParams](),
		searchHint("troubleshoot error stack trace known fix runbook"))
	return newTool("r2r_troubleshoot", opts...)
}

// troubleshootParams are one r2r_troubleshoot call's arguments.
type troubleshootParams struct {
	Error        string `json:"error" required:"true" min:"1" max:"maxTroubleBytes" desc:"The error as it appeared, stack trace included"`
	Doing        string `json:"doing" max:"maxQueryChars" desc:"What was being done when it happened"`
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID); omit for the project's"`
}

func (p *troubleshootParams) check(*Deps) (err error) {
	if err = nonBlank("error", p.Error); err != nil {
		return err
	}
	p.Doing = strings.TrimSpace(p.Doing)
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

func troubleshootTool(d *Deps, sc *scoper) Tool {
	def := troubleshootDef()
	return Tool{Def: def, Group: GroupMemory, ReadOnly: true, Example: Example{Args: map[string]any{"error": "open /tmp/cache.db: too many open files"}}, run: bound(d, def, func(ctx context.Context, c *call, _ mcp.CallToolRequest, p troubleshootParams) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		o := TroubleshootOutput{Signature: snippet(Sanitize(memory.Signature(p.Error)), 200), Fixes: []TroubleFix{}, Passages: []TroublePassage{}}
		if s.missing() {
			o.Message = s.missingNote()
			return result(o.Message, o), nil
		}
		fixes, err := d.troubleFixes(ctx, s.ID, p)
		if err == nil {
			o.Passages, err = d.troublePassages(ctx, s.ID, troubleQuery(p))
		}
		if err != nil {
			sc.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		o.Fixes = fixes
		o.Message = troubleMessage(o)
		return result(troubleText(o), o), nil
	})}
}

// troubleQuery is what a search by meaning looks for: the error's message line and what
// was being done (a whole stack trace would drown both).
func troubleQuery(p troubleshootParams) string {
	q := strings.TrimSpace(memory.MessageLine(p.Error) + " " + p.Doing)
	return snippet(q, troubleQueryChars)
}

// troubleFixes are the fixes whose error has p.Error's signature, newest first, then those
// a search by meaning finds, up to maxTroubleFixes.
func (d *Deps) troubleFixes(ctx context.Context, collID string, p troubleshootParams) ([]TroubleFix, error) {
	st := d.memoryStore(ctx, collID)
	all, err := st.Indexed(ctx, memory.KindFix)
	if err != nil {
		return nil, err
	}
	sig := memory.Signature(p.Error)
	var out []TroubleFix
	var ids []string
	add := func(m memory.Memory, match string) {
		if len(out) < maxTroubleFixes && !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
			out = append(out, TroubleFix{ID: shortID(m.ID), Title: snippet(oneLine(Sanitize(m.Title)), 80), Match: match,
				Author: author(m.Author), Age: age(d.now(), m.Created), Excerpt: snippet(oneLine(Sanitize(m.Excerpt)), troubleExcerpt)})
		}
	}
	for _, m := range all {
		if memory.SameError(sig, memory.Signature(m.Error)) {
			add(m, matchSignature)
		}
	}
	similar, err := st.Search(ctx, memory.Query{Text: troubleQuery(p), Kinds: []string{memory.KindFix}, Limit: maxTroubleFixes})
	if err != nil {
		return nil, err
	}
	for _, m := range similar {
		add(m, matchMeaning)
	}
	d.shown.remember(ids...)
	return out, nil
}

// troublePassages are the best passages of the collection's documents (memories left out:
// the fixes are listed already) for query.
func (d *Deps) troublePassages(ctx context.Context, collID, query string) ([]TroublePassage, error) {
	limit := 4 * maxTroublePassage
	res, err := d.Client.Search(ctx, r2r.SearchRequest{Query: query, SearchMode: r2r.SearchModeCustom,
		SearchSettings: r2r.ModeSettings(r2r.SearchModeAdvanced, r2r.ScopedFilters(collID, nil), limit)})
	if err != nil {
		return nil, err
	}
	out := []TroublePassage{}
	for _, c := range res.ChunkSearchResults {
		if _, isMemory := c.Metadata[memory.MetaKind]; isMemory || len(out) == maxTroublePassage {
			continue
		}
		title, _ := c.Metadata["title"].(string)
		d.shown.remember(c.DocumentID)
		out = append(out, TroublePassage{ID: shortID(c.DocumentID), Title: snippet(oneLine(Sanitize(title)), 80),
			Text: snippet(oneLine(Sanitize(c.Text)), 240)})
	}
	return out, nil
}

func troubleMessage(o TroubleshootOutput) string {
	switch {
	case len(o.Fixes) == 0 && len(o.Passages) == 0:
		return "Nothing the team remembered or documented matches this error. Once it is fixed, save the fix with r2r_remember " +
			`(kind "fix", the error text in "error") so the team finds it next time.`
	case len(o.Fixes) == 0:
		return "No remembered fix matches this error; the passages below mention it. Once it is fixed, save the fix with r2r_remember (kind \"fix\", the error text in \"error\")."
	}
	same := 0
	for _, f := range o.Fixes {
		if f.Match == matchSignature {
			same++
		}
	}
	return fmt.Sprintf("%d remembered fixes (%d for this very error), %d passages. r2r_get_document with an id reads one in full.", len(o.Fixes), same, len(o.Passages))
}

func troubleText(o TroubleshootOutput) string {
	var b strings.Builder
	if len(o.Fixes) > 0 {
		b.WriteString("Team fixes:\n")
		for i, f := range o.Fixes {
			fmt.Fprintf(&b, "%d. [%s] %s — %s, %s ago, id %s\n   %s\n", i+1, f.Match, f.Title, f.Author, f.Age, f.ID, f.Excerpt)
		}
	}
	if len(o.Passages) > 0 {
		b.WriteString("Docs that mention it:\n")
		for i, p := range o.Passages {
			fmt.Fprintf(&b, "%d. %s [%s]: %s\n", i+1, p.Title, p.ID, p.Text)
		}
	}
	return b.String() + o.Message
}
