package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Argument limits shared by schemas and handlers.
const (
	maxQueryChars    = 4000
	maxMetadataBytes = 16 << 10
	maxFilterBytes   = 16 << 10
	maxModelChars    = 200
	maxRAGTokens     = 16000
	ragSearchLimit   = 5
)

var searchModes = []string{r2r.SearchModeBasic, r2r.SearchModeAdvanced, r2r.SearchModeCustom}

// SearchHit is one chunk found by r2r_search.
type SearchHit struct {
	Rank          int            `json:"rank"`
	Score         float64        `json:"score"`
	ID            string         `json:"id"`
	DocumentID    string         `json:"document_id"`
	Title         string         `json:"title"`
	Text          string         `json:"text"`
	CollectionIDs []string       `json:"collection_ids"`
	Metadata      map[string]any `json:"metadata"`
	Truncated     bool           `json:"truncated,omitempty"` // text or metadata cut to fit MaxStructuredBytes
}

// SearchOutput is the structured result of r2r_search.
type SearchOutput struct {
	Results        []SearchHit `json:"results"`
	Count          int         `json:"count"`
	Cached         bool        `json:"cached"`
	Query          string      `json:"query"`
	SearchMode     string      `json:"search_mode"`
	Limit          int         `json:"limit"`
	CollectionID   string      `json:"collection_id,omitempty"`
	CollectionName string      `json:"collection_name,omitempty"`
	Note           string      `json:"note,omitempty"`
}

var searchHitSchema = objectSchema(map[string]any{
	"rank":           intProp("1-based position in the result list"),
	"score":          numProp("relevance score from R2R (higher is better; semantic scores are about 0..1)"),
	"id":             strProp("chunk id"),
	"document_id":    strProp("id of the document the chunk belongs to (for r2r_get_document)"),
	"title":          strProp("document title (its path for files ingested by r2r-mcp)"),
	"text":           strProp("chunk text (at most 2,000 characters, less for many hits), with invisible and BiDi control characters removed"),
	"collection_ids": arrayProp("collections the chunk belongs to", strProp("collection id")),
	"metadata":       freeObjectProp("chunk metadata from R2R: where it comes from and other small values; large values are left out"),
	"truncated":      boolProp("true when text or metadata was cut to keep the result small (r2r_get_document has the full text)"),
}, "rank", "score", "id", "document_id", "title", "text")

func searchTool(d *Deps) Tool {
	out := objectSchema(map[string]any{
		"results":         arrayProp("matching chunks, best first", searchHitSchema),
		"count":           intProp("number of results returned"),
		"cached":          boolProp("true when served from r2r-mcp's cache"),
		"query":           strProp("the query as searched"),
		"search_mode":     enumProp("the search mode used", searchModes...),
		"limit":           intProp("the maximum number of results asked for"),
		"collection_id":   strProp("the collection searched"),
		"collection_name": strProp("name of the collection searched, when known"),
		"note":            strProp("explanation when nothing could be searched, or when results were trimmed to keep them small"),
	}, "results", "count", "cached")
	opts := append(readTool("Search project documents",
		"Search through project documentation using semantic or hybrid search. Returns relevant chunks with metadata: "+
			"one line per hit with score, document title, short document id and a snippet.", out),
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(maxQueryChars),
			mcp.Description("Search query (natural language)")),
		mcp.WithString("collection_id", mcp.MaxLength(36),
			mcp.Description("Collection ID (UUID) to search in; omit to search the current project's collection")),
		mcp.WithString("search_mode", mcp.Enum(searchModes...), mcp.DefaultString(r2r.SearchModeAdvanced),
			mcp.Description("Search mode: basic (semantic only), advanced (hybrid: semantic + full-text), custom (only the given filters and limit, with R2R's defaults)")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(10),
			mcp.Description("Maximum number of results to return")),
		mcp.WithObject("filters",
			mcp.Description(`Additional R2R filters, e.g. {"document_type": {"$eq": "md"}} or {"title": {"$like": "%guide%"}}. `+
				"Operators: $eq $ne $lt $lte $gt $gte $like $ilike $in $nin $overlap $contains $json_contains, combined with $and/$or lists")),
	)
	def := newTool("r2r_search", opts...)
	parseArgs := argsParser(def)
	return Tool{Def: def, Group: GroupSearch, ReadOnly: true, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := parseArgs(req)
		if err != nil {
			return invalidArgs(err), nil
		}
		query, err := a.ReqString("query", maxQueryChars)
		if err != nil {
			return invalidArgs(err), nil
		}
		collID, _, err := a.OptUUID("collection_id", collectionIDHint)
		if err != nil {
			return invalidArgs(err), nil
		}
		mode, err := a.Enum("search_mode", searchModes, r2r.SearchModeAdvanced)
		if err != nil {
			return invalidArgs(err), nil
		}
		limit, err := a.Int("limit", 1, 100, 10)
		if err != nil {
			return invalidArgs(err), nil
		}
		filters, _, err := a.Object("filters", maxFilterBytes)
		if err != nil {
			return invalidArgs(err), nil
		}
		if filters, err = normalizeFilters(filters); err != nil {
			return invalidArgs(err), nil
		}

		s, errRes := d.resolveScope(ctx, collID, false)
		if errRes != nil {
			return errRes, nil
		}
		o := SearchOutput{Results: []SearchHit{}, Query: query, SearchMode: mode, Limit: limit,
			CollectionID: s.ID, CollectionName: s.Name}
		if s.missing() {
			o.Note = s.missingNote()
			return result(o.Note, o), nil
		}
		args := map[string]any{"query": query, "search_mode": mode, "limit": limit, "filters": filters}
		o, cached, err := cachedLoad(ctx, d, cache.KindSearch, def.Name, args, s.ID, func(ctx context.Context) (SearchOutput, bool, error) {
			res, err := d.Client.Search(ctx, r2r.SearchRequest{
				Query:          query,
				SearchMode:     r2r.SearchModeCustom,
				SearchSettings: searchSettings(mode, scopeFilters(s.ID, filters), limit),
			})
			if err != nil {
				return o, false, err
			}
			for i, c := range res.ChunkSearchResults {
				o.Results = append(o.Results, searchHit(i+1, c))
			}
			o.Count = len(o.Results)
			d.fillTitles(ctx, o.Count, func(i int) string { return o.Results[i].DocumentID },
				func(i int) *string { return &o.Results[i].Title })
			return o, true, nil
		})
		if err != nil {
			d.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		if o.Count == 0 { // R2R answers a filter on a deleted collection with no hits, not 404
			if res := d.verifyScope(ctx, s); res != nil {
				return res, nil
			}
		}
		o.Cached = cached
		if key, _ := d.historyKey(ctx, s.Project); key != "" {
			d.History.Add(key, SearchEntry{Time: d.now().UTC(), Query: query, Hits: o.Count,
				SearchMode: mode, CollectionID: s.ID})
		}
		return result(withCachedMarker(searchText(o, s), cached), fitSearch(o, MaxStructuredBytes)), nil
	}}
}

// withCachedMarker marks the text of a result served from the cache.
func withCachedMarker(text string, cached bool) string {
	if cached {
		return cachedMarker + text
	}
	return text
}

// searchSettings sends every mode as explicit settings under search_mode "custom": R2R's
// own "advanced" preset adds HyDE, which costs LLM calls (DESIGN §3).
func searchSettings(mode string, filters map[string]any, limit int) *r2r.SearchSettings {
	t, f := true, false
	s := &r2r.SearchSettings{Filters: filters, Limit: &limit}
	switch mode {
	case r2r.SearchModeBasic:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &f, &f
	case r2r.SearchModeAdvanced:
		s.UseSemanticSearch, s.UseFulltextSearch, s.UseHybridSearch = &t, &t, &t
	}
	return s
}

func searchHit(rank int, c r2r.ChunkSearchResult) SearchHit {
	md := sanitizeMap(c.Metadata)
	delete(md, "associated_query") // R2R echoes the query into every hit
	if md == nil {
		md = map[string]any{}
	}
	ids := c.CollectionIDs
	if ids == nil {
		ids = []string{}
	}
	return SearchHit{
		Rank: rank, Score: c.Score, ID: c.ID, DocumentID: c.DocumentID,
		Title:         chunkTitle(md),
		Text:          Sanitize(c.Text),
		CollectionIDs: ids,
		Metadata:      md,
	}
}

// chunkTitle is the document title carried in chunk metadata.
func chunkTitle(md map[string]any) string {
	if t, ok := md["title"].(string); ok && strings.TrimSpace(t) != "" {
		return t
	}
	return untitled
}

func searchText(o SearchOutput, s *scope) string {
	var b strings.Builder
	if o.Count == 0 {
		fmt.Fprintf(&b, "No results for %s in %s (%s search).", quoteForText(o.Query, 200), s.label(), o.SearchMode)
		b.WriteString(" Try other words, search_mode \"advanced\", fewer filters, or check r2r_list_documents for what is ingested.")
		return b.String()
	}
	fmt.Fprintf(&b, "%s for %s in %s (%s search):\n", plural(o.Count, "result"), quoteForText(o.Query, 200), s.label(), o.SearchMode)
	var docs []string
	for _, h := range o.Results {
		fmt.Fprintf(&b, "%d. [%.2f] %s (doc %s) — %s\n", h.Rank, h.Score, oneLine(snippet(h.Title, 120)),
			shortID(h.DocumentID), focusedSnippet(stripTitlePrefix(h.Text), o.Query, snippetChars))
		if !slices.Contains(docs, h.DocumentID) {
			docs = append(docs, h.DocumentID)
		}
	}
	if o.Count >= o.Limit {
		next := min(o.Limit*2, 100)
		if o.Limit < 100 {
			fmt.Fprintf(&b, "Showing the top %d; more may match — call again with limit=%d (max 100) or a narrower query.\n", o.Count, next)
		} else {
			b.WriteString("Showing the top 100 (the maximum); narrow the query or add filters for others.\n")
		}
	}
	fmt.Fprintf(&b, "Document ids for r2r_get_document: %s", strings.Join(docs, ", "))
	return b.String()
}
