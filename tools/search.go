package tools

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/argcheck"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/passage"
)

// Argument limits: the schemas publish most; the byte sizes of metadata and filters, which
// a schema cannot bound, the params check.
const (
	maxQueryChars    = 4000
	maxMetadataBytes = 16 << 10
	maxFilterBytes   = 16 << 10
	maxModelChars    = 200
	maxRAGTokens     = 16000
	// ragCharsPerToken is how many characters (UTF-8 bytes) of answer r2r_rag_query makes
	// room for per max_tokens token.
	ragCharsPerToken = 4
	// ragAnswerChars bounds an answer's length at the largest max_tokens.
	ragAnswerChars = ragCharsPerToken * maxRAGTokens
	// ragSearchLimit is how many chunks r2r_rag_query gives the model: measured on make
	// bench-quality, 7 of r2r_search's best chunks instead of R2R's own best 5 put the
	// answering file before the model more often, and it cites that file no less often;
	// fewer, it cites the answering file more often and lists it less often (README, Quality).
	ragSearchLimit = 7
	// ragSearchMode is how r2r_rag_query retrieves its context: hybrid, as r2r_search's
	// default, so a question naming an identifier finds the file that has it.
	ragSearchMode = r2r.SearchModeAdvanced
)

var searchModes = []string{r2r.SearchModeBasic, r2r.SearchModeAdvanced, r2r.SearchModeCustom}

// searchModeAliases are the words models use for R2R's search modes (R2R's own docs call
// them semantic and hybrid search).
var searchModeAliases = argcheck.ValueAliases{"search_mode": {"semantic": r2r.SearchModeBasic, "hybrid": r2r.SearchModeAdvanced}}

// SearchHit is one document found by r2r_search, as a model reads it: where it ranks, how
// relevant it is next to the best hit, which document it is and the window of its retrieved
// chunks that best matches the query. The full text is one r2r_get_document away.
type SearchHit struct {
	Rank       int     `json:"rank" required:"true" desc:"1-based position in the result list"`
	Relevance  float64 `json:"relevance" required:"true" desc:"the document's search score relative to the best hit's (1 = as relevant as the best, 0..1)"`
	Title      string  `json:"title" required:"true" desc:"document title (its path for files ingested by r2r-mcp)"`
	Section    string  `json:"section,omitempty" desc:"heading the text sits under, when known"`
	ShortID    string  `json:"-"` // the text shows it; the structured form has the full id
	DocumentID string  `json:"document_id" required:"true" desc:"id of the document (for r2r_get_document; its MCP resource is r2r://documents/{document_id})"`
	// Text is empty when the hit is listed without a window (minPassageChars).
	Text string `json:"text,omitempty" desc:"the sentences of the document's retrieved chunks that best match the query, on one line (… marks a gap; r2r_get_document has the full text); absent for a lower-ranked document whose passage would be under two sentences, so the best documents get the room"`
}

// SearchOutput is the structured result of r2r_search.
type SearchOutput struct {
	Results        []SearchHit `json:"results" required:"true" desc:"matching documents, best first, one entry per document"`
	Count          int         `json:"count" required:"true" desc:"number of documents returned"`
	Cached         bool        `json:"cached" required:"true" desc:"true when served from r2r-mcp's cache"`
	Query          string      `json:"query" desc:"the query as searched"`
	SearchMode     string      `json:"search_mode" enum:"searchModes" desc:"the search mode used"`
	Limit          int         `json:"limit" desc:"the maximum number of results asked for"`
	CollectionID   string      `json:"collection_id,omitempty" desc:"the collection searched"`
	CollectionName string      `json:"collection_name,omitempty" desc:"name of the collection searched, when known"`
	Note           string      `json:"note,omitempty" desc:"explanation when nothing could be searched, or when hits were left out to keep the result small"`

	filterFields []string // fields the caller's filters test, for the advice when nothing matched
	topScore     float64  // R2R's score of the best hit (0 = not known: read from the shared cache)
}

// searchDef is r2r_search's definition.
func searchDef() mcp.Tool {
	opts := append(readTool("Search project documents",
		"Look things up in the project's knowledge base (docs, runbooks, ADRs, design notes, code ingested into R2R): "+
			"where something is described, a fact, an error message, a config key or an identifier. "+
			"Returns the best-matching documents, one entry each: rank, relevance, title, section, document id and "+
			"the passage that matches best; r2r_get_document reads a whole document.", outputSchema[SearchOutput]()),
		searchHint("search project docs runbooks knowledge base"),
		withMeta(MetaAlwaysLoad, true),
		inputSchema[searchParams](),
	)
	return newTool("r2r_search", opts...)
}

// searchParams are one r2r_search call's arguments.
type searchParams struct {
	Query        string         `json:"query" required:"true" min:"1" max:"maxQueryChars" desc:"Search query (natural language)"`
	CollectionID string         `json:"collection_id" max:"36" desc:"Collection ID (UUID) to search in; omit to search the current project's collection"`
	Mode         string         `json:"search_mode" enum:"searchModes" default:"searchModeDefault" desc:"Search mode: basic (semantic only; \"semantic\" is read as basic), advanced (semantic + full-text; \"hybrid\" is read as advanced), custom (only the given filters and limit, with R2R's defaults)"`
	Limit        int            `json:"limit" min:"1" max:"100" default:"defaultSearchLimit" desc:"Maximum number of documents to return"`
	Filters      map[string]any `json:"filters" desc:"Additional R2R filters, e.g. {\"document_type\": {\"$eq\": \"md\"}} or {\"title\": {\"$like\": \"%guide%\"}}. Operators: $eq $ne $lt $lte $gt $gte $like $ilike $in $nin $overlap $contains $json_contains, combined with $and/$or lists"`
}

func (p *searchParams) check(*Deps) (err error) {
	if err = nonBlank("query", p.Query); err != nil {
		return err
	}
	if p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint); err != nil {
		return err
	}
	if err = objectWithin("filters", p.Filters, maxFilterBytes); err != nil {
		return err
	}
	p.Filters, err = normalizeFilters(p.Filters)
	return err
}

// searchDeadline bounds a search.
func (d *Deps) searchDeadline(mcp.CallToolRequest) (time.Duration, string) {
	return d.SearchTimeout, "--timeout-search"
}

// searchTool searches through l and records each search with rec.
func searchTool(d *Deps, l *loader, rec *recorder, sc *scoper) Tool {
	def := searchDef()
	return Tool{Def: def, Group: GroupSearch, ReadOnly: true, Cached: true, Aliases: searchModeAliases, RemoteSpansAll: true, Deadline: d.searchDeadline, Example: Example{Args: map[string]any{"query": "deploy runbook"}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p searchParams) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		base := SearchOutput{Results: []SearchHit{}, Query: p.Query, SearchMode: p.Mode, Limit: p.Limit,
			CollectionID: s.ID, CollectionName: s.Name, filterFields: filterFields(p.Filters)}
		if s.missing() {
			base.Note = s.missingNote()
			return result(base.Note, base), nil
		}
		args := map[string]any{"query": p.Query, "search_mode": p.Mode, "limit": p.Limit, "filters": p.Filters}
		if k := s.viewKey(); k != "" {
			args["view"] = k
		}
		ans, cached, err := cachedLoad(ctx, c, l, cache.KindSearch, def.Name, args, s.ID, func(ctx context.Context) (answer[SearchOutput], bool, error) {
			return d.runSearch(ctx, base, s, p.Filters)
		})
		if err != nil {
			sc.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		if ans.Out.Count == 0 { // R2R answers a filter on a deleted collection with no hits, not 404
			if res := sc.verify(ctx, s); res != nil {
				return res, nil
			}
		}
		if key, _ := d.historyKey(ctx, s.Project); key != "" {
			d.History.Add(key, SearchEntry{Time: d.now().UTC(), Query: p.Query, Hits: ans.Out.Count,
				SearchMode: p.Mode, CollectionID: s.ID})
		}
		for _, h := range ans.Out.Results {
			d.shown.remember(h.DocumentID)
		}
		rec.search(ctx, s, ans.Out, cached)
		return served(ans, cached), nil
	})}
}

// runSearch asks R2R and builds the finished answer on a copy of base. The answer is
// complete (may be cached) unless a title lookup or a search leg of retrieve failed.
func (d *Deps) runSearch(ctx context.Context, base SearchOutput, s *scope, filters map[string]any) (answer[SearchOutput], bool, error) {
	found, complete, err := d.retrieve(ctx, base.Query, base.SearchMode, r2r.ViewFilters(s.view(), filters), fetchLimit(base.Limit))
	if err != nil {
		return answer[SearchOutput]{}, false, err
	}
	chunks, err := d.withoutSuperseded(ctx, s.ID, found)
	if err != nil {
		return answer[SearchOutput]{}, false, err
	}
	set := passage.New(base.Query, passageChunks(chunks), base.Limit)
	titles := make([]string, len(set.Docs))
	for i, doc := range set.Docs {
		titles[i] = untitled
		for _, c := range chunks {
			if c.DocumentID == doc.DocumentID {
				titles[i] = chunkTitle(c.Metadata)
				break
			}
		}
	}
	terr := d.fillTitles(ctx, s.ID, len(titles), func(i int) string { return set.Docs[i].DocumentID },
		func(i int) *string { return &titles[i] })
	if terr != nil && ctx.Err() != nil {
		return answer[SearchOutput]{}, false, ctx.Err()
	}
	o := base
	if len(set.Docs) > 0 {
		o.topScore = set.Docs[0].Score
	}
	o.Results = fitHits(&o, set, titles, max(minSearchBudget, base.Limit*searchBytesPerHit), func(h []SearchHit) int {
		t := o
		t.Results, t.Count = h, len(h)
		return len(cachedMarker) + len(searchText(t, s))
	})
	o.Count = len(o.Results)
	hit := o
	hit.Cached = true
	a, err := finish(o, hit, searchText(o, s))
	return a, complete && terr == nil, err
}

// withoutSuperseded leaves out the hits of memories another memory supersedes: R2R keeps
// a memory only its author may delete, and search hides it as recall does, for everyone.
// It costs one more request, and only when a memory is among the hits.
func (d *Deps) withoutSuperseded(ctx context.Context, collectionID string, chunks []r2r.ChunkSearchResult) ([]r2r.ChunkSearchResult, error) {
	var ids []string
	for _, c := range chunks {
		if _, ok := memory.FromMetadata(c.DocumentID, c.OwnerID, c.Metadata); ok && !slices.Contains(ids, c.DocumentID) {
			ids = append(ids, c.DocumentID)
		}
	}
	gone, err := memory.Superseded(ctx, d.Client, collectionID, ids)
	if err != nil || len(gone) == 0 {
		return chunks, err
	}
	return slices.DeleteFunc(slices.Clone(chunks), func(c r2r.ChunkSearchResult) bool { return gone[c.DocumentID] }), nil
}

// served is a finished answer as returned from a fresh call or from the cache.
func served[T output](a answer[T], cached bool) *mcp.CallToolResult {
	if !cached {
		return result(a.Text, a.Out)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(a.text(true))}, StructuredContent: a.hitContent()}
}

// documentURI is the MCP resource of a document; "" when the id is unknown.
func documentURI(id string) string {
	if id == "" {
		return ""
	}
	return documentURIPrefix + id
}

// roundScore keeps 4 decimals of a score: enough to rank, and shorter to read.
func roundScore(f float64) float64 { return math.Round(f*1e4) / 1e4 }

func (*SearchOutput) cleanHit() {}

func (h *SearchHit) jsonSize() int {
	const keys = len(`{"rank":,"relevance":,"title":,"document_id":}`)
	n := keys + jsonIntSize(h.Rank) + jsonFloatSize(h.Relevance) + jsonStringSize(h.Title) +
		jsonStringSize(h.DocumentID)
	if h.Text != "" {
		n += len(`,"text":`) + jsonStringSize(h.Text)
	}
	if h.Section != "" {
		n += len(`,"section":`) + jsonStringSize(h.Section)
	}
	return n
}

func (o SearchOutput) jsonSize() int { return o.jsonSizeWith(o.Results) }

// jsonSizeWith is the length of o's JSON encoding with hits as its results.
func (o *SearchOutput) jsonSizeWith(hits []SearchHit) int {
	n := len(`{"results":[],"count":,"cached":false,"query":,"search_mode":,"limit":}`) + jsonIntSize(len(hits)) +
		jsonStringSize(o.Query) + jsonStringSize(o.SearchMode) + jsonIntSize(o.Limit)
	if o.Cached {
		n--
	}
	n += scopeFieldsSize(o.CollectionID, o.CollectionName, o.Note)
	for i := range hits {
		n += hits[i].jsonSize()
	}
	return n + max(len(hits)-1, 0)
}

// chunkTitle is the document title carried in chunk metadata.
func chunkTitle(md map[string]any) string {
	if t, ok := md["title"].(string); ok && strings.TrimSpace(t) != "" {
		return Sanitize(t) + versionLabel(md)
	}
	return untitled
}

// versionLabel says which version of a file of a team project a document is: the team's at
// a commit, or the caller's own working copy (only its author reads it); "" elsewhere.
func versionLabel(md map[string]any) string {
	switch md[kbsync.MetaLayer] {
	case kbsync.LayerTeam:
		if c, _ := md[kbsync.MetaCommit].(string); kbsync.IsCommitID(c) {
			return " (team's version, " + c[:10] + ")"
		}
		return " (team's version)"
	case kbsync.LayerPrivate:
		return " (your working copy)"
	}
	return ""
}

// knownFilterFields are fields a filter can test on every document r2r-mcp ingested: R2R's
// own chunk columns and the metadata r2r-mcp writes.
var knownFilterFields = []string{"document_id", "document_type", "title",
	kbsync.MetaSourcePath, kbsync.MetaContentSHA, kbsync.MetaSource, kbsync.MetaProject}

func searchText(o SearchOutput, s *scope) string {
	var b strings.Builder
	if o.Count == 0 {
		fmt.Fprintf(&b, "No results for %s in %s (%s search).", quoteForText(o.Query, 200), s.label(), o.SearchMode)
		if len(o.filterFields) > 0 {
			fmt.Fprintf(&b, " The filters (on %s) may be why: R2R does not check field names, so a misspelled field "+
				"matches nothing. Fields every document r2r-mcp ingests has: %s. Try the search without filters to compare.",
				quoteForText(strings.Join(o.filterFields, ", "), 200), strings.Join(knownFilterFields, ", "))
			return b.String()
		}
		b.WriteString(" Try other words")
		if o.SearchMode != "advanced" {
			b.WriteString(`, search_mode "advanced" (adds full-text matching)`)
		}
		b.WriteString(", or check r2r_list_documents for what is ingested.")
		return b.String()
	}
	fmt.Fprintf(&b, "%s for %s in %s (%s search):\n", plural(o.Count, "document"), quoteForText(o.Query, 200),
		snippet(s.label(), maxTitleChars), o.SearchMode)
	var docs []string
	for _, h := range o.Results {
		fmt.Fprintf(&b, "%d. %s", h.Rank, h.Title)
		if h.Section != "" {
			fmt.Fprintf(&b, " › %s", h.Section)
		}
		fmt.Fprintf(&b, " (doc %s, relevance %.2f)\n", h.ShortID, h.Relevance)
		if h.Text != "" {
			fmt.Fprintf(&b, "   %s\n", h.Text)
		}
		docs = append(docs, h.DocumentID)
	}
	if o.Count >= o.Limit {
		next := min(o.Limit*2, 100)
		if o.Limit < 100 {
			fmt.Fprintf(&b, "Showing the top %d; more may match — call again with limit=%d (max 100) or a narrower query.\n", o.Count, next)
		} else {
			b.WriteString("Showing the top 100 (the maximum); narrow the query or add filters for others.\n")
		}
	}
	if o.Note != "" {
		b.WriteString(o.Note + "\n")
	}
	fmt.Fprintf(&b, "Document ids for r2r_get_document: %s", strings.Join(docs, ", "))
	return b.String()
}
