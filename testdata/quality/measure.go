package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Record is everything measured for one question; the per-question JSON output is a list of
// these, so two runs (levers on and off) can be compared question by question.
type Record struct {
	Question
	Search ToolMeasure `json:"search"`
	Raw    RawMeasure  `json:"raw"`
	RAG    RAGMeasure  `json:"rag"`
	Grep   GrepMeasure `json:"grep"`
}

// GrepMeasure is the grep baseline for a question: the files `git grep -i` on its content
// words ranks first (grepIndex.rank) and the rank of the answering file among them.
type GrepMeasure struct {
	FileRank int      `json:"file_rank"`
	Files    []string `json:"files"`
}

// ToolMeasure is what r2r_search returned for a question.
type ToolMeasure struct {
	// DocRank is the 1-based position of the first result from the answering file; 0 = absent.
	DocRank int `json:"doc_rank"`
	// FileRank is the answering file's rank among the distinct files of the results (fileRank).
	FileRank         int      `json:"file_rank"`
	AnswerText       bool     `json:"answer_in_text"`
	AnswerStructured bool     `json:"answer_in_structured"`
	TextBytes        int      `json:"text_bytes"`
	StructuredBytes  int      `json:"structured_bytes"`
	Results          int      `json:"results"`
	DistinctDocs     int      `json:"distinct_docs"`
	Files            []string `json:"files"` // the file of each result, in order
	Millis           float64  `json:"ms"`
	Error            string   `json:"error,omitempty"`
}

// RawMeasure is what R2R's own search returned for the same query, limit and settings.
type RawMeasure struct {
	DocRank int `json:"doc_rank"`
	// AnswerRank is the 1-based position of the first chunk holding the answer; 0 = none.
	AnswerRank   int      `json:"answer_rank"`
	FileRank     int      `json:"file_rank"`
	TextBytes    int      `json:"text_bytes"` // the chunks' text, summed
	Chunks       int      `json:"chunks"`
	DistinctDocs int      `json:"distinct_docs"`
	Files        []string `json:"files"`
	Millis       float64  `json:"ms"`
	Error        string   `json:"error,omitempty"`
}

// RAGMeasure is what r2r_rag_query returned.
type RAGMeasure struct {
	CitesFile       bool     `json:"cites_file"`        // a cited source is the answering file
	SourcesFile     bool     `json:"sources_file"`      // a listed source is the answering file
	AnswerHasPhrase bool     `json:"answer_has_phrase"` // the generated answer holds the answer phrase
	Cited           []string `json:"cited"`
	TextBytes       int      `json:"text_bytes"`
	StructuredBytes int      `json:"structured_bytes"`
	Millis          float64  `json:"ms"`
	Error           string   `json:"error,omitempty"`
}

// runner asks one question through r2r-mcp and R2R.
type runner struct {
	mcp          *mcpclient.Client
	r2r          *r2r.Client
	collectionID string
	files        map[string]string // document id → corpus file
	mode         string
	limit        int
	rag          bool
}

func (r *runner) measure(ctx context.Context, q Question) Record {
	rec := Record{Question: q}
	phrase := plain(q.Answer)
	rec.Search = r.search(ctx, q, phrase)
	rec.Raw = r.raw(ctx, q, phrase)
	if r.rag {
		rec.RAG = r.ragQuery(ctx, q, phrase)
	}
	return rec
}

func (r *runner) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, string, []byte, float64, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	t0 := time.Now()
	res, err := r.mcp.CallTool(ctx, req)
	ms := float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		return nil, "", nil, ms, err
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	text := strings.Join(texts, "\n")
	if res.IsError {
		return nil, "", nil, ms, fmt.Errorf("%s returned an error: %.300s", name, text)
	}
	structured, err := compactJSON(res.StructuredContent)
	return res, text, structured, ms, err
}

func (r *runner) search(ctx context.Context, q Question, phrase string) ToolMeasure {
	res, text, structured, ms, err := r.call(ctx, "r2r_search", map[string]any{"query": q.Question, "limit": r.limit, "search_mode": r.mode})
	m := ToolMeasure{Millis: ms}
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.TextBytes, m.StructuredBytes = len(text), len(structured)
	m.AnswerText = containsPlain(text, phrase)
	m.AnswerStructured = anyString(res.StructuredContent, func(s string) bool { return containsPlain(s, phrase) })
	var out struct {
		Results []struct {
			DocumentID string `json:"document_id"`
		} `json:"results"`
	}
	if err := json.Unmarshal(structured, &out); err != nil {
		m.Error = "structuredContent: " + err.Error()
		return m
	}
	ids := make([]string, len(out.Results))
	for i, h := range out.Results {
		ids[i] = h.DocumentID
	}
	m.Results = len(ids)
	m.Files, m.DocRank, m.DistinctDocs = r.placeFiles(ids, q.File)
	m.FileRank = fileRank(m.Files, q.File)
	return m
}

func (r *runner) raw(ctx context.Context, q Question, phrase string) RawMeasure {
	t0 := time.Now()
	res, err := r.r2r.Search(ctx, r2r.SearchRequest{Query: q.Question, SearchMode: r2r.SearchModeCustom,
		SearchSettings: r2r.ModeSettings(r.mode, r2r.ScopedFilters(r.collectionID, nil), r.limit)})
	m := RawMeasure{Millis: float64(time.Since(t0).Microseconds()) / 1000}
	if err != nil {
		m.Error = err.Error()
		return m
	}
	ids := make([]string, len(res.ChunkSearchResults))
	for i, c := range res.ChunkSearchResults {
		ids[i] = c.DocumentID
		m.TextBytes += len(c.Text)
		if m.AnswerRank == 0 && containsPlain(c.Text, phrase) {
			m.AnswerRank = i + 1
		}
	}
	m.Chunks = len(ids)
	m.Files, m.DocRank, m.DistinctDocs = r.placeFiles(ids, q.File)
	m.FileRank = fileRank(m.Files, q.File)
	return m
}

func (r *runner) ragQuery(ctx context.Context, q Question, phrase string) RAGMeasure {
	_, text, structured, ms, err := r.call(ctx, "r2r_rag_query", map[string]any{"question": q.Question})
	m := RAGMeasure{Millis: ms}
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.TextBytes, m.StructuredBytes = len(text), len(structured)
	var out struct {
		Answer  string `json:"answer"`
		Sources []struct {
			DocumentID string `json:"document_id"`
			Cited      bool   `json:"cited"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(structured, &out); err != nil {
		m.Error = "structuredContent: " + err.Error()
		return m
	}
	m.AnswerHasPhrase = containsPlain(out.Answer, phrase)
	for _, s := range out.Sources {
		f := r.fileOf(s.DocumentID)
		if f == q.File {
			m.SourcesFile = true
			m.CitesFile = m.CitesFile || s.Cited
		}
		if s.Cited {
			m.Cited = append(m.Cited, f)
		}
	}
	return m
}

// placeFiles maps result document ids to files: the files in order, the 1-based rank of the
// first result from want (0 = none) and the number of distinct documents.
func (r *runner) placeFiles(ids []string, want string) (files []string, rank, distinct int) {
	seen := map[string]bool{}
	files = make([]string, len(ids))
	for i, id := range ids {
		files[i] = r.fileOf(id)
		if rank == 0 && files[i] == want {
			rank = i + 1
		}
		if !seen[id] {
			seen[id] = true
			distinct++
		}
	}
	return files, rank, distinct
}

func (r *runner) fileOf(id string) string {
	if f, ok := r.files[id]; ok {
		return f
	}
	return "?" + id
}

// compactJSON is v encoded as a JavaScript client's JSON.stringify would send it to a model:
// compact, with <, > and & as they are.
func compactJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// anyString reports whether f holds for one of the strings inside v (a decoded JSON value):
// an answer counts as in the structured form when one field holds it whole.
func anyString(v any, f func(string) bool) bool {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		for _, e := range x {
			if anyString(e, f) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if anyString(e, f) {
				return true
			}
		}
	}
	return false
}
