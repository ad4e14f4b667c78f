package modeldouble

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixedNow makes "created" deterministic.
var fixedNow = func() time.Time { return time.Unix(1_700_000_000, 0) }

// newTestServer starts a Double for one test.
func newTestServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	_, srv := NewServer(opts)
	t.Cleanup(srv.Close)
	return srv
}

// post sends body (a string, or a value to marshal) and returns the status and the body.
func post(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	resp, err := http.Post(url, "application/json", r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// ragPrompt renders R2R's "rag" task prompt as R2R sends it: the YAML template is a folded
// block, so paragraphs are separated by one blank line and lines inside it by a newline.
func ragPrompt(query, context string) string {
	return "## Task:\nAnswer the query given immediately below given the context which follows later. " +
		"Use line item references to like [c910e2e], [b12cd2f], ... refer to provided search results.\n\n" +
		"### Query:\n" + query + "\n\n### Context:\n" + context + "\n\n### Query:\n" + query + "\n\n" +
		"REMINDER - Use line item references to like [c910e2e], [b12cd2f], to refer to the specific search result IDs returned in the provided context.\n" +
		"## Response:"
}

// r2rContext formats chunk search results as R2R does: a header, then for each result a
// "Source ID [id]:" line and its text, joined by newlines. Pairs are id, text, id, text, …
func r2rContext(pairs ...string) string {
	lines := []string{"Vector Search Results:"}
	for i := 0; i+1 < len(pairs); i += 2 {
		lines = append(lines, "Source ID ["+pairs[i]+"]:", pairs[i+1])
	}
	return strings.Join(lines, "\n")
}

// ragRequest is a chat request as R2R's RAG sends it: the system prompt and the task prompt.
func ragRequest(query, context string, extra map[string]any) map[string]any {
	req := map[string]any{
		"model": "gpt-4o-mini",
		"messages": []map[string]any{
			{"role": "system", "content": "You are a helpful agent."},
			{"role": "user", "content": ragPrompt(query, context)},
		},
		"temperature": 0.1, "top_p": 1, "max_tokens": 1024,
	}
	for k, v := range extra {
		req[k] = v
	}
	return req
}

// searchTools is the tools list R2R's RAG agent offers, with its non-standard top-level
// "name".
var searchTools = []map[string]any{
	{"type": "function", "name": "search_file_knowledge", "function": map[string]any{
		"name": "search_file_knowledge", "description": "Search your local knowledge base.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}, "required": []string{"query"}},
	}},
	{"type": "function", "name": "get_file_content", "function": map[string]any{
		"name": "get_file_content", "parameters": map[string]any{"type": "object"},
	}},
}

// syncLog is a goroutine-safe log sink.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
