package tools

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// RAGSource is one chunk behind an answer, mapped to its document.
type RAGSource struct {
	ID         string  `json:"id" required:"true" desc:"short citation id used in the answer as [id]"`
	Title      string  `json:"title" required:"true" desc:"title of the source document"`
	DocumentID string  `json:"document_id" required:"true" desc:"id of the source document (for r2r_get_document)"`
	URI        string  `json:"uri" required:"true" desc:"the document as an MCP resource: r2r://documents/{document_id}"`
	Score      float64 `json:"score" required:"true" desc:"retrieval score"`
	Cited      bool    `json:"cited" required:"true" desc:"whether the answer cites this chunk"`
}

// RAGOutput is the structured result of r2r_rag_query.
type RAGOutput struct {
	Answer         string      `json:"answer" required:"true" desc:"the generated answer; [abc1234] markers cite sources by id"`
	Sources        []RAGSource `json:"sources" required:"true" desc:"chunks retrieved for the answer, cited ones first (empty when include_sources is false)"`
	ModelUsed      string      `json:"model_used" required:"true" desc:"model R2R reports it used, or \"r2r-default\" when it does not say"`
	Cached         bool        `json:"cached" required:"true" desc:"true when served from r2r-mcp's cache"`
	Question       string      `json:"question" desc:"the question as asked"`
	CollectionID   string      `json:"collection_id,omitempty" desc:"the collection the answer draws on"`
	CollectionName string      `json:"collection_name,omitempty" desc:"name of that collection, when known"`
	Note           string      `json:"note,omitempty" desc:"explanation when no answer could be generated"`
}

func (*RAGOutput) cleanHit() {}

func (s *RAGSource) jsonSize() int {
	const keys = len(`{"id":,"title":,"document_id":,"uri":,"score":,"cited":false}`)
	n := keys + jsonStringSize(s.ID) + jsonStringSize(s.Title) + jsonStringSize(s.DocumentID) +
		jsonStringSize(s.URI) + jsonFloatSize(s.Score)
	if s.Cited {
		n--
	}
	return n
}

func (o RAGOutput) jsonSize() int {
	n := len(`{"answer":,"sources":[],"model_used":,"cached":false,"question":}`) + jsonStringSize(o.Answer) +
		jsonStringSize(o.ModelUsed) + jsonStringSize(o.Question) + max(len(o.Sources)-1, 0)
	if o.Cached {
		n--
	}
	n += scopeFieldsSize(o.CollectionID, o.CollectionName, o.Note)
	for i := range o.Sources {
		n += o.Sources[i].jsonSize()
	}
	return n
}

// modelDefault is reported when R2R does not say which model answered.
const modelDefault = "r2r-default"

// citationRE matches R2R's citation markers: [abc1234] — 7 or 8 alphanumerics.
var citationRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[([A-Za-z0-9]{7,8})\]`) })

// ragQueryDef is r2r_rag_query's definition.
func ragQueryDef() mcp.Tool {
	opts := append(readTool("Ask the project documents",
		"Get a written answer to a question from the project's knowledge base, with citations: for how and why questions "+
			"that need several passages put together (\"how do we deploy the worker?\"). Slower than r2r_search, which is better "+
			"for finding where something is written. The answer cites its sources as [shortid], listed with their titles.",
		outputSchema[RAGOutput]()),
		searchHint("answer a question from project docs with citations"),
		maxResultChars(resultChars(ragAnswerChars)),
		inputSchema[ragRequest]())
	return newTool("r2r_rag_query", opts...)
}

// ragDeadline bounds a RAG query.
func (d *Deps) ragDeadline(mcp.CallToolRequest) (time.Duration, string) {
	return d.RAGTimeout, "--timeout-rag"
}

// ragQueryTool asks through l and records each question with rec.
func ragQueryTool(d *Deps, l *loader, rec *recorder, sc *scoper) Tool {
	def := ragQueryDef()
	return Tool{Def: def, Group: GroupSearch, ReadOnly: true, Cached: true, RemoteSpansAll: true, Rate: RateLLM, Deadline: d.ragDeadline, Example: Example{Args: map[string]any{"question": "How is the project deployed?"}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, q ragRequest) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, q.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		base := RAGOutput{Sources: []RAGSource{}, Question: q.Question, CollectionID: s.ID, CollectionName: s.Name}
		if s.missing() {
			base.ModelUsed = "none"
			base.Note = s.missingNote()
			return result(base.Note, base), nil
		}
		args := map[string]any{"question": q.Question, "model": q.Model, "max_tokens": q.MaxTokens,
			"temperature": q.Temperature, "include_sources": q.IncludeSources}
		if k := s.viewKey(); k != "" {
			args["view"] = k
		}
		ans, cached, err := cachedLoad(ctx, c, l, cache.KindRAG, def.Name, args, s.ID, func(ctx context.Context) (answer[RAGOutput], bool, error) {
			return d.runRAG(ctx, base, s, q)
		})
		if err != nil {
			sc.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		if len(ans.Out.Sources) == 0 { // nothing retrieved, or sources not asked for: at most one check per VerifyTTL
			if res := sc.verify(ctx, s); res != nil {
				return res, nil
			}
		}
		for _, src := range ans.Out.Sources {
			d.shown.remember(src.DocumentID)
		}
		rec.rag(ctx, s, ans.Out, q.IncludeSources, cached)
		res := served(ans, cached)
		// The answer may legitimately be long when max_tokens is large: allow for it.
		res.Content = []mcp.Content{mcp.NewTextContent(capText(ans.text(cached), max(MaxTextBytes, ragCharsPerToken*q.MaxTokens+8<<10)))}
		return res, nil
	})}
}

// ragRequest is one r2r_rag_query call's arguments.
type ragRequest struct {
	Question       string  `json:"question" required:"true" min:"1" max:"maxQueryChars" desc:"Question to answer (natural language)"`
	CollectionID   string  `json:"collection_id" max:"36" desc:"Collection ID (UUID) to query; omit to use the current project's collection"`
	Model          string  `json:"model" max:"maxModelChars" desc:"LLM model for generation, as R2R names it (e.g. openai/gpt-4.1-mini); omit to use the model R2R is configured with"`
	MaxTokens      int     `json:"max_tokens" min:"1" max:"maxRAGTokens" default:"500" desc:"Maximum tokens in the generated answer"`
	Temperature    float64 `json:"temperature" min:"0" max:"2" default:"0.7" desc:"Sampling temperature (0 = most deterministic)"`
	IncludeSources bool    `json:"include_sources" default:"true" desc:"Include the source chunks with their document titles"`
}

func (q *ragRequest) check(*Deps) (err error) {
	if err = nonBlank("question", q.Question); err != nil {
		return err
	}
	q.Model = strings.TrimSpace(q.Model)
	q.CollectionID, err = optUUID("collection_id", q.CollectionID, collectionIDHint)
	return err
}

// runRAG asks R2R and builds the finished answer on a copy of base. The answer is complete
// (may be cached) unless a title lookup or a search leg of its retrieval failed.
func (d *Deps) runRAG(ctx context.Context, base RAGOutput, s *scope, q ragRequest) (answer[RAGOutput], bool, error) {
	t := true
	// R2R retrieves and answers in one request: superseded memories are left out by the
	// filter, as r2r_search leaves them out of its hits.
	filters, err := memory.ExcludeSuperseded(ctx, d.Client, s.ID)
	if err != nil {
		return answer[RAGOutput]{}, false, err
	}
	settings, complete, err := d.ragSettings(ctx, q.Question, r2r.ViewFilters(s.view(), filters))
	if err != nil {
		return answer[RAGOutput]{}, false, err
	}
	res, err := d.Client.RAG(ctx, r2r.RAGRequest{
		Query:          q.Question,
		SearchMode:     r2r.SearchModeCustom,
		SearchSettings: settings,
		RAGGenerationConfig: &r2r.GenerationConfig{
			Model:             q.Model,
			Temperature:       &q.Temperature,
			MaxTokensToSample: &q.MaxTokens,
		},
		IncludeTitleIfAvailable: &t,
	})
	if err != nil {
		return answer[RAGOutput]{}, false, err
	}
	o := base
	o.Answer = Sanitize(res.GeneratedAnswer)
	if o.Answer == "" {
		o.Answer = Sanitize(res.Completion)
	}
	o.ModelUsed = modelDefault
	if m, ok := res.Metadata["model"].(string); ok && m != "" {
		o.ModelUsed = Sanitize(m)
	}
	var terr error
	if q.IncludeSources {
		o.Sources = ragSources(o.Answer, res)
		terr = d.fillTitles(ctx, s.ID, len(o.Sources), func(i int) string { return o.Sources[i].DocumentID },
			func(i int) *string { return &o.Sources[i].Title })
		if terr != nil && ctx.Err() != nil {
			return answer[RAGOutput]{}, false, ctx.Err()
		}
	}
	hit := o
	hit.Cached = true
	a, err := finish(o, hit, ragText(o, s, q.IncludeSources))
	return a, complete && terr == nil, err
}

// ragSources lists the retrieved chunks, cited ones first in the order the answer cites
// them, then one uncited chunk per document not listed yet. A citation without payload is
// matched to a retrieved chunk by id prefix.
func ragSources(answer string, res *r2r.RAGResponse) []RAGSource {
	chunks := res.SearchResults.ChunkSearchResults
	var out []RAGSource
	seen := map[string]bool{} // chunk ids
	add := func(short string, c r2r.ChunkSearchResult, cited bool) {
		if seen[c.ID] {
			return
		}
		seen[c.ID] = true
		if short == "" {
			short = shortCitation(c.ID)
		}
		if !cited && slices.ContainsFunc(out, func(s RAGSource) bool { return s.DocumentID == c.DocumentID }) {
			return // another chunk of a document already listed
		}
		out = append(out, RAGSource{ID: snippet(Sanitize(short), 16), Title: snippet(chunkTitle(c.Metadata), maxTitleChars),
			DocumentID: c.DocumentID, URI: documentURI(c.DocumentID), Score: roundScore(c.Score), Cited: cited})
	}
	byShort := func(short string) (r2r.ChunkSearchResult, bool) {
		for _, c := range chunks {
			if strings.HasPrefix(c.ID, short) {
				return c, true
			}
		}
		return r2r.ChunkSearchResult{}, false
	}
	// Order of first appearance in the answer.
	payloads := map[string]*r2r.ChunkSearchResult{}
	for _, c := range res.Citations {
		if c.Payload != nil && c.ID != "" {
			payloads[c.ID] = c.Payload
		}
	}
	for _, m := range citationRE().FindAllStringSubmatch(answer, -1) {
		short := m[1]
		if p, ok := payloads[short]; ok {
			add(short, *p, true)
		} else if c, ok := byShort(short); ok {
			add(short, c, true)
		}
	}
	// Citations R2R reports that the text did not visibly contain.
	for _, c := range res.Citations {
		if c.Payload != nil {
			add(c.ID, *c.Payload, true)
		} else if ch, ok := byShort(c.ID); ok && c.ID != "" {
			add(c.ID, ch, true)
		}
	}
	for _, c := range chunks {
		add("", c, false)
	}
	if out == nil {
		out = []RAGSource{}
	}
	return out
}

// shortCitation is how R2R abbreviates a chunk id in citations: its first 7 characters.
func shortCitation(id string) string {
	s := strings.ReplaceAll(id, "-", "")
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

func ragText(o RAGOutput, s *scope, include bool) string {
	sources := o.Sources
	var b strings.Builder
	b.WriteString(strings.TrimSpace(o.Answer))
	if o.Answer == "" {
		fmt.Fprintf(&b, "R2R returned no answer from %s.", s.label())
	}
	if !include {
		return b.String()
	}
	var cited, other []RAGSource
	for _, src := range sources {
		if src.Cited {
			cited = append(cited, src)
		} else {
			other = append(other, src)
		}
	}
	switch {
	case len(cited) > 0:
		b.WriteString("\n\nSources:\n")
		for _, src := range cited {
			fmt.Fprintf(&b, "[%s] %s (doc %s)\n", src.ID, oneLine(snippet(src.Title, 120)), shortID(src.DocumentID))
		}
	case len(other) > 0:
		b.WriteString("\n\nRetrieved context (not cited in the answer):\n")
		for _, src := range other {
			fmt.Fprintf(&b, "[%s] %s (doc %s)\n", src.ID, oneLine(snippet(src.Title, 120)), shortID(src.DocumentID))
		}
	default:
		fmt.Fprintf(&b, "\n\nNo documents in %s matched the question.", s.label())
	}
	return strings.TrimRight(b.String(), "\n")
}
