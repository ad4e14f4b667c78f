package r2rtest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
)

// DefaultRAGModel is what RAG reports as the model when the request names none: R2R's
// shipped [app] quality_llm, openai/gpt-5-2025-08-07, as the provider reports it.
const DefaultRAGModel = "gpt-5-2025-08-07"

// reportedModel is the model a completion reports for a requested LiteLLM model name: the
// provider gets, and answers with, the name without its "provider/" prefix (conformance
// test TestLive/rag/model_reported_without_provider_prefix).
func reportedModel(requested string) string {
	if _, name, ok := strings.Cut(requested, "/"); ok && name != "" {
		return name
	}
	return requested
}

// unservedModel is LiteLLM's error for a model R2R cannot call, "" when it can. Like the
// real R2R set up with one OpenAI-compatible provider, the emulator serves names without a
// provider prefix and openai/ ones; LiteLLM refuses a prefix it does not know, and one it
// knows fails without that provider's API key (conformance test TestLive/rag/unserved_model).
func unservedModel(requested string) string {
	provider, _, ok := strings.Cut(requested, "/")
	switch {
	case !ok || provider == "openai":
		return ""
	case provider == "anthropic":
		return "Anthropic API key not found. Set ANTHROPIC_API_KEY env var."
	}
	return "litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider you are trying to call. You passed model=" +
		requested + "\n Pass model as E.g. For 'Huggingface' inference endpoints pass in `completion(model='huggingface/starcoder',..)` " +
		"Learn more: https://docs.litellm.ai/docs/providers"
}

// searchSettings are the effective settings the emulator honours.
type searchSettings struct {
	semantic, fulltext, hybrid bool
	filters                    map[string]any
	limit, offset              int
	includeMetadatas           bool
	includeScores              bool
	chunksEnabled              bool
}

func defaultSettings(mode string) searchSettings {
	s := searchSettings{semantic: true, filters: map[string]any{}, limit: 10, includeMetadatas: true,
		includeScores: true, chunksEnabled: true}
	if mode == "advanced" {
		s.fulltext, s.hybrid = true, true
	}
	return s
}

// retrievalBody validates the JSON body shared by search and rag.
type retrievalBody struct {
	query    string
	mode     string
	settings map[string]any // nil = not provided
	raw      map[string]any
}

func (c *call) parseRetrievalBody() (*retrievalBody, bool) {
	if !c.jsonContentOK() {
		return nil, false
	}
	var raw map[string]any
	if err := jsonUnmarshal(c.body, &raw); err != nil || raw == nil {
		msg := "JSON decode error"
		if err == nil {
			msg = "Input should be a valid dictionary"
		}
		c.invalid(validationError{Type: "json_invalid", Loc: []any{"body", 0}, Msg: msg, Input: map[string]any{}})
		return nil, false
	}
	b := &retrievalBody{mode: "custom", raw: raw}
	var errs []validationError
	switch q := raw["query"].(type) {
	case string:
		b.query = q
	case nil:
		errs = append(errs, validationError{Type: "missing", Loc: []any{"body", "query"}, Msg: "Field required"})
	default:
		errs = append(errs, validationError{Type: "string_type", Loc: []any{"body", "query"}, Msg: "Input should be a valid string", Input: q})
	}
	if m, ok := raw["search_mode"]; ok && m != nil {
		s, _ := m.(string)
		switch s {
		case "basic", "advanced", "custom":
			b.mode = s
		default:
			errs = append(errs, validationError{Type: "enum", Loc: []any{"body", "search_mode"},
				Msg: "Input should be 'basic', 'advanced' or 'custom'", Input: m,
				Ctx: map[string]any{"expected": "'basic', 'advanced' or 'custom'"}})
		}
	}
	if v, ok := raw["search_settings"]; ok && v != nil {
		m, isMap := v.(map[string]any)
		if !isMap {
			errs = append(errs, validationError{Type: "model_attributes_type", Loc: []any{"body", "search_settings"},
				Msg: "Input should be a valid dictionary or object to extract fields from", Input: v})
		}
		b.settings = m
		errs = append(errs, validateSettings(m)...)
	}
	if len(errs) > 0 {
		c.invalid(errs...)
		return nil, false
	}
	return b, true
}

func validateSettings(m map[string]any) []validationError {
	var errs []validationError
	loc := func(k string) []any { return []any{"body", "search_settings", k} }
	for _, k := range []string{"limit", "offset"} {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		f, isNum := toFloat(v)
		switch {
		case !isNum || f != float64(int(f)):
			errs = append(errs, validationError{Type: "int_type", Loc: loc(k), Msg: "Input should be a valid integer", Input: v})
		case k == "limit" && f < 1:
			errs = append(errs, validationError{Type: "greater_than_equal", Loc: loc(k), Msg: "Input should be greater than or equal to 1", Input: v, Ctx: map[string]any{"ge": 1}})
		case k == "limit" && f > 1000:
			errs = append(errs, validationError{Type: "less_than_equal", Loc: loc(k), Msg: "Input should be less than or equal to 1000", Input: v, Ctx: map[string]any{"le": 1000}})
		case k == "offset" && f < 0:
			errs = append(errs, validationError{Type: "greater_than_equal", Loc: loc(k), Msg: "Input should be greater than or equal to 0", Input: v, Ctx: map[string]any{"ge": 0}})
		}
	}
	for _, k := range []string{"filters", "search_filters"} {
		if v, ok := m[k]; ok && v != nil {
			if _, isMap := v.(map[string]any); !isMap {
				errs = append(errs, validationError{Type: "dict_type", Loc: loc(k), Msg: "Input should be a valid dictionary", Input: v})
			}
		}
	}
	for _, k := range []string{"use_semantic_search", "use_fulltext_search", "use_hybrid_search", "include_metadatas", "include_scores"} {
		if v, ok := m[k]; ok && v != nil {
			if _, isBool := v.(bool); !isBool {
				errs = append(errs, validationError{Type: "bool_type", Loc: loc(k), Msg: "Input should be a valid boolean", Input: v})
			}
		}
	}
	return errs
}

// effectiveSettings merges mode defaults with the fields present in the request.
func effectiveSettings(mode string, given map[string]any) searchSettings {
	s := defaultSettings(mode)
	if given == nil {
		return s
	}
	if mode == "custom" {
		s = defaultSettings("custom")
	}
	boolField := func(k string, dst *bool) {
		if v, ok := given[k].(bool); ok {
			*dst = v
		}
	}
	boolField("use_semantic_search", &s.semantic)
	boolField("use_fulltext_search", &s.fulltext)
	boolField("use_hybrid_search", &s.hybrid)
	boolField("include_metadatas", &s.includeMetadatas)
	boolField("include_scores", &s.includeScores)
	if f, ok := toFloat(given["limit"]); ok {
		s.limit = int(f)
	}
	if f, ok := toFloat(given["offset"]); ok {
		s.offset = int(f)
	}
	if f, ok := given["filters"].(map[string]any); ok {
		s.filters = cloneMap(f)
	}
	if f, ok := given["search_filters"].(map[string]any); ok {
		for k, v := range f {
			s.filters[k] = cloneValue(v)
		}
	}
	if cs, ok := given["chunk_settings"].(map[string]any); ok {
		boolField := func(k string, dst *bool) {
			if v, ok := cs[k].(bool); ok {
				*dst = v
			}
		}
		boolField("enabled", &s.chunksEnabled)
	}
	return s
}

// scopeFilters is R2R's select_search_filters: non-superusers only see their own chunks or
// chunks in their collections (narrowed by a top-level collection_ids $overlap).
func scopeFilters(u *user, filters map[string]any) (map[string]any, error) {
	if u.superuser {
		return filters, nil
	}
	allowed := append([]string(nil), u.collectionIDs...)
	for _, key := range sortedKeys(filters) {
		if !strings.Contains(key, "collection_ids") {
			continue
		}
		var selected []string
		switch spec := filters[key].(type) {
		case map[string]any:
			ov, ok := spec["$overlap"]
			if !ok {
				return nil, &filterError{"KeyError", "'$overlap'"}
			}
			list, ok := ov.([]any)
			if !ok {
				return nil, &filterError{"TypeError", fmt.Sprintf("'%s' object is not iterable", pyType(ov))}
			}
			for _, item := range list {
				s, _ := item.(string)
				id, err := uuid.Parse(s)
				if err != nil {
					return nil, &filterError{"ValueError", "badly formed hexadecimal UUID string"}
				}
				selected = append(selected, id.String())
			}
		case []any:
			return nil, &filterError{"TypeError", "list indices must be integers or slices, not str"}
		default:
			return nil, &filterError{"TypeError", fmt.Sprintf("'%s' object is not subscriptable", pyType(spec))}
		}
		if len(selected) > 0 {
			var inter []string
			for _, id := range allowed {
				for _, s := range selected {
					if s == id {
						inter = append(inter, id)
						break
					}
				}
			}
			allowed = inter
		}
		break
	}
	ids := make([]any, len(allowed))
	for i, id := range allowed {
		ids[i] = id
	}
	scope := map[string]any{"$or": []any{
		map[string]any{"owner_id": map[string]any{"$eq": u.id}},
		map[string]any{"collection_ids": map[string]any{"$overlap": ids}},
	}}
	rest := cloneMap(filters)
	delete(rest, "collection_ids")
	if len(rest) == 0 {
		return scope, nil
	}
	return map[string]any{"$and": []any{scope, rest}}, nil
}

type hit struct {
	doc   *document
	chunk *chunk
	score float64
}

// searchLocked runs a chunk search and returns the chunk result objects.
func (e *Emulator) searchLocked(u *user, query string, s searchSettings) ([]map[string]any, error) {
	if !s.chunksEnabled {
		return []map[string]any{}, nil
	}
	hybrid := s.hybrid || (s.semantic && s.fulltext)
	if !hybrid && !s.semantic && !s.fulltext {
		return nil, &filterError{"ValueError", "At least one of use_fulltext_search or use_semantic_search must be True"}
	}
	filters, err := scopeFilters(u, s.filters)
	if err != nil {
		return nil, err
	}
	p, err := compileFilter(filters)
	if err != nil {
		return nil, err
	}
	var corpus []*chunk
	var hits []hit
	docs := e.sortedDocsLocked(func(d *document) bool { return len(d.chunks) > 0 })
	for _, d := range docs {
		for _, ch := range d.chunks {
			corpus = append(corpus, ch)
			row := &filterRow{id: ch.id, documentID: d.id, ownerID: d.ownerID, collectionIDs: d.collectionIDs,
				text: ch.text, metadata: ch.metadata}
			if p(row) == fTrue {
				hits = append(hits, hit{doc: d, chunk: ch})
			}
		}
	}
	sc := newScorer(query, corpus)
	kept := hits[:0]
	for _, h := range hits {
		title := ""
		if h.doc.title != nil {
			title = *h.doc.title
		}
		h.score = sc.score(h.chunk, title)
		if !hybrid && !s.semantic && h.score == 0 {
			continue // full-text search only returns matching chunks
		}
		kept = append(kept, h)
	}
	hits = kept
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	lo, hi := window(len(hits), s.offset, s.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, h := range hits[lo:hi] {
		out = append(out, chunkResult(h, query, s))
	}
	return out, nil
}

func chunkResult(h hit, query string, s searchSettings) map[string]any {
	meta := map[string]any{}
	text := h.chunk.text
	if s.includeMetadatas {
		meta = cloneMap(h.chunk.metadata)
		if title, ok := meta["title"]; ok {
			text = "Document Title: " + pyStr(title) + "\n\nText: " + text
		}
	}
	meta["associated_query"] = query
	score := -1.0
	if s.includeScores {
		score = h.score
	}
	return map[string]any{
		"id":             h.chunk.id,
		"document_id":    h.doc.id,
		"owner_id":       h.doc.ownerID,
		"collection_ids": append([]string{}, h.doc.collectionIDs...),
		"score":          score,
		"text":           text,
		"metadata":       meta,
	}
}

func aggregate(chunks []map[string]any) map[string]any {
	return map[string]any{
		"chunk_search_results":    chunks,
		"graph_search_results":    []any{},
		"web_page_search_results": nil,
		"web_search_results":      nil,
		"document_search_results": nil,
		"generic_tool_result":     nil,
	}
}

func (c *call) searchError(handler string, err error) {
	fe, ok := err.(*filterError)
	if !ok {
		fe = &filterError{"Exception", err.Error()}
	}
	c.internal(handler, fe.errType, fe.msg)
}

func (c *call) handleSearch() {
	if !c.guard() {
		return
	}
	b, ok := c.parseRetrievalBody()
	if !ok {
		return
	}
	if b.query == "" {
		c.fail(http.StatusBadRequest, "Query cannot be empty")
		return
	}
	s := effectiveSettings(b.mode, b.settings)
	c.e.mu.Lock()
	res, err := c.e.searchLocked(c.user, b.query, s)
	c.e.mu.Unlock()
	if err != nil {
		c.searchError("search_app", err)
		return
	}
	c.ok(aggregate(res))
}

// genConfig is the part of rag_generation_config the emulator honours.
type genConfig struct {
	model     string
	requested string // the model the request named; "" = none
	maxTokens int    // 0 = unlimited
	stream    bool
}

func parseGenConfig(v any) genConfig {
	g := genConfig{model: DefaultRAGModel}
	m, ok := v.(map[string]any)
	if !ok {
		return g
	}
	if s, ok := m["model"].(string); ok && s != "" {
		g.model, g.requested = reportedModel(s), s
	}
	for _, k := range []string{"max_tokens_to_sample", "max_tokens"} {
		if f, ok := toFloat(m[k]); ok && f > 0 {
			g.maxTokens = int(f)
		}
	}
	g.stream, _ = m["stream"].(bool)
	return g
}

// composeAnswer builds a deterministic extractive answer: from the top three chunks, the
// (at most three) sentences that share the most query terms, weighted by rarity, in rank
// order, each run from one chunk followed by that chunk's [shortid] citation, capped at
// maxWords words. A chunk
// whose sentences share no query term contributes its first sentence only when nothing else
// matched.
func composeAnswer(query string, chunks []map[string]any, maxWords int) (string, []string, bool) {
	if len(chunks) == 0 {
		return "I could not find any relevant information in the provided context to answer this question.", nil, false
	}
	type sentence struct {
		text   string
		sid    string
		rank   int // chunk rank, then position in the chunk
		pos    int
		weight float64
	}
	top := chunks[:min(3, len(chunks))]
	var corpus []*chunk
	for _, ch := range top {
		corpus = append(corpus, newChunk("", chunkBody(ch["text"].(string)), 0, nil))
	}
	sc := newScorer(query, corpus)
	var cands []sentence
	for i, ch := range top {
		for j, sent := range proseSentences(chunkBody(ch["text"].(string))) {
			w := 0.0
			terms := map[string]bool{}
			for _, t := range tokenize(sent) {
				terms[t] = true
			}
			for _, t := range sc.query {
				if terms[t] {
					w += sc.idf(t)
				}
			}
			cands = append(cands, sentence{text: sent, sid: ch["id"].(string)[:7], rank: i, pos: j, weight: w})
		}
	}
	best := slices.Clone(cands)
	slices.SortStableFunc(best, func(a, b sentence) int { return cmp.Compare(b.weight, a.weight) })
	var picked []sentence
	for _, c := range best {
		if len(picked) == 3 || c.weight == 0 {
			break
		}
		picked = append(picked, c)
	}
	if len(picked) == 0 && len(cands) > 0 {
		picked = cands[:1]
	}
	slices.SortStableFunc(picked, func(a, b sentence) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.pos, b.pos))
	})
	var parts, cited []string
	words, truncated := 0, false
	for i, p := range picked {
		fields := strings.Fields(p.text)
		if len(fields) > 60 {
			fields = fields[:60]
		}
		if maxWords > 0 && words+len(fields) > maxWords {
			fields = fields[:max(0, maxWords-words)]
			truncated = true
		}
		if len(fields) == 0 {
			break
		}
		words += len(fields)
		parts = append(parts, strings.Join(fields, " "))
		// A run of sentences from one chunk is cited once, after its last sentence.
		if i+1 == len(picked) || picked[i+1].sid != p.sid || truncated {
			parts[len(parts)-1] += " [" + p.sid + "]"
			if !slices.Contains(cited, p.sid) {
				cited = append(cited, p.sid)
			}
		}
		if truncated {
			break
		}
	}
	return strings.Join(parts, " "), cited, truncated
}

// proseSentences are the sentences of a chunk's prose, as an answer may quote them: without
// Markdown headings, fenced code and list or quote markers.
func proseSentences(text string) []string {
	var out []string
	fenced := false
	for _, para := range splitParagraphs(text) {
		var lines []string
		for _, l := range strings.Split(para, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "```") {
				fenced = !fenced
				continue
			}
			if fenced || l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "|") {
				continue
			}
			l = strings.TrimLeft(l, "-*> ")
			if i := strings.Index(l, ". "); i > 0 && i <= 3 && strings.Trim(l[:i], "0123456789") == "" {
				l = l[i+2:]
			}
			lines = append(lines, l)
		}
		if len(lines) > 0 {
			out = append(out, splitSentences(strings.Join(strings.Fields(strings.Join(lines, " ")), " "))...)
		}
	}
	return out
}

// chunkBody strips the "Document Title: …\n\nText: " header R2R puts before a chunk's text
// when metadata is included.
func chunkBody(text string) string {
	if k := strings.Index(text, "\n\nText: "); strings.HasPrefix(text, "Document Title: ") && k >= 0 {
		return text[k+len("\n\nText: "):]
	}
	return text
}

func (c *call) handleRAG() {
	if !c.guard() {
		return
	}
	b, ok := c.parseRetrievalBody()
	if !ok {
		return
	}
	g := parseGenConfig(b.raw["rag_generation_config"])
	if msg := unservedModel(g.requested); msg != "" {
		c.internal("rag_app", "HTTPException", "500: Internal RAG Error - "+msg)
		return
	}
	s := effectiveSettings(b.mode, b.settings)
	c.e.mu.Lock()
	res, err := c.e.searchLocked(c.user, b.query, s)
	c.e.mu.Unlock()
	if err != nil {
		c.searchError("rag_app", err)
		return
	}
	answer, cited, truncated := composeAnswer(b.query, res, g.maxTokens)
	byShort := map[string]map[string]any{}
	for _, r := range res {
		id := r["id"].(string)
		if _, dup := byShort[id[:7]]; !dup {
			byShort[id[:7]] = r
		}
	}
	if g.stream {
		c.streamRAG(answer, res, cited, byShort)
		return
	}
	citations := make([]map[string]any, 0, len(cited))
	for _, sid := range cited {
		var payload any
		if p, ok := byShort[sid]; ok {
			payload = p
		}
		citations = append(citations, map[string]any{"id": sid, "object": "citation", "is_new": true,
			"span": nil, "source_type": nil, "payload": payload})
	}
	finish := "stop"
	if truncated {
		finish = "length"
	}
	completionTokens := len(strings.Fields(answer))
	promptTokens := len(strings.Fields(b.query))
	for _, r := range res {
		promptTokens += len(strings.Fields(r["text"].(string)))
	}
	meta := map[string]any{
		"id":                 "chatcmpl-" + strings.ReplaceAll(newUUID(), "-", "")[:24],
		"created":            time.Now().Unix(),
		"model":              g.model,
		"object":             "chat.completion",
		"system_fingerprint": nil,
		"choices": []any{map[string]any{"finish_reason": finish, "index": 0,
			"message": map[string]any{"role": "assistant", "tool_calls": nil, "function_call": nil}}},
		"usage": map[string]any{"completion_tokens": completionTokens, "prompt_tokens": promptTokens,
			"total_tokens": completionTokens + promptTokens},
	}
	c.ok(map[string]any{
		"generated_answer": answer,
		"search_results":   aggregate(res),
		"citations":        citations,
		"metadata":         meta,
		"completion":       answer,
	})
}

// streamRAG writes R2R's SSE event sequence of a streamed RAG answer (search_results,
// message deltas, citations, final_answer, done).
func (c *call) streamRAG(answer string, res []map[string]any, cited []string, byShort map[string]map[string]any) {
	c.w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	emit := func(event string, data any) bool {
		var payload string
		if s, ok := data.(string); ok {
			payload = s
		} else {
			payload = string(mustJSON(data))
		}
		if _, err := fmt.Fprintf(c.w, "event: %s\ndata: %s\n\n", event, payload); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return c.r.Context().Err() == nil
	}
	agg := aggregate(res)
	agg["web_page_search_results"], agg["web_search_results"], agg["document_search_results"] = []any{}, []any{}, []any{}
	if !emit("search_results", map[string]any{"id": "search_1", "object": "rag.search_results", "data": agg}) {
		return
	}
	msgID := "msg_" + strings.ReplaceAll(newUUID(), "-", "")[:8]
	seen := map[string]bool{}
	pos := 0
	for _, tok := range strings.SplitAfter(answer, " ") {
		if !emit("message", map[string]any{"id": msgID, "object": "agent.message.delta",
			"delta": map[string]any{"content": []any{map[string]any{"type": "text",
				"payload": map[string]any{"value": tok, "annotations": []any{}}}}}}) {
			return
		}
		trim := strings.TrimSpace(tok)
		if strings.HasPrefix(trim, "[") && strings.HasSuffix(trim, "]") && len(trim) == 9 {
			sid := trim[1:8]
			ev := map[string]any{"id": sid, "object": "citation", "is_new": !seen[sid],
				"span": map[string]any{"start": pos, "end": pos + len(trim)}, "payload": nil}
			if !seen[sid] {
				if p, ok := byShort[sid]; ok {
					ev["payload"] = p
				}
			}
			seen[sid] = true
			if !emit("citation", ev) {
				return
			}
		}
		pos += len(tok)
	}
	var finals []any
	for _, sid := range cited {
		start := strings.Index(answer, "["+sid+"]")
		var payload any
		if p, ok := byShort[sid]; ok {
			payload = p
		}
		finals = append(finals, map[string]any{"id": sid, "object": "citation",
			"spans": []any{map[string]any{"start": start, "end": start + 9}}, "payload": payload})
	}
	if finals == nil {
		finals = []any{}
	}
	if !emit("final_answer", map[string]any{"id": "msg_final", "object": "rag.final_answer",
		"generated_answer": answer, "citations": finals}) {
		return
	}
	emit("done", "[DONE]")
}
