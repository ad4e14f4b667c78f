package modeldouble

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// citationRE is how R2R finds citations in an answer: bracketed ids of 7 or 8 characters.
var citationRE = regexp.MustCompile(`\[([A-Za-z0-9]{7,8})\]`)

func citations(s string) []string {
	var out []string
	for _, m := range citationRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// completion is a validated chat.completion reply.
type completion struct {
	content   *string
	toolCalls []toolCall
	finish    string
	id        string
}

// validateCompletion checks a reply the way R2R's LLMChatCompletion model does (required
// fields and their types, the allowed finish reasons, no service_tier) and that usage adds
// up, and returns its one choice.
func validateCompletion(t *testing.T, body []byte, model string) completion {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("reply is not JSON: %v: %s", err, body)
	}
	if _, ok := raw["service_tier"]; ok {
		t.Errorf("reply has service_tier: %s", body)
	}
	if id, _ := raw["id"].(string); id == "" {
		t.Errorf("id = %v", raw["id"])
	}
	if raw["object"] != "chat.completion" {
		t.Errorf("object = %v", raw["object"])
	}
	if n, ok := raw["created"].(json.Number); !ok || strings.ContainsAny(n.String(), ".eE") {
		t.Errorf("created = %v, want an integer", raw["created"])
	}
	if raw["model"] != model {
		t.Errorf("model = %v, want %q", raw["model"], model)
	}
	var typed struct {
		ID      string `json:"id"`
		Choices []struct {
			Index   *int `json:"index"`
			Message struct {
				Role      string     `json:"role"`
				Content   *string    `json:"content"`
				ToolCalls []toolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &typed); err != nil {
		t.Fatalf("reply does not have the completion's types: %v: %s", err, body)
	}
	if len(typed.Choices) != 1 {
		t.Fatalf("%d choices, want 1: %s", len(typed.Choices), body)
	}
	c := typed.Choices[0]
	if c.Index == nil || *c.Index != 0 || c.Message.Role != "assistant" {
		t.Errorf("choice index %v role %q", c.Index, c.Message.Role)
	}
	switch c.FinishReason {
	case FinishStop, FinishLength, FinishToolCalls:
	default:
		t.Errorf("finish_reason = %q", c.FinishReason)
	}
	if (c.FinishReason == FinishToolCalls) != (len(c.Message.ToolCalls) > 0) {
		t.Errorf("finish_reason %q with %d tool calls", c.FinishReason, len(c.Message.ToolCalls))
	}
	for _, tc := range c.Message.ToolCalls {
		if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" || !json.Valid([]byte(tc.Function.Arguments)) {
			t.Errorf("bad tool call %+v", tc)
		}
	}
	if c.Message.ToolCalls == nil && c.Message.Content == nil {
		t.Errorf("no content and no tool calls: %s", body)
	}
	if u := typed.Usage; u == nil || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.PromptTokens <= 0 {
		t.Errorf("usage = %+v", typed.Usage)
	}
	return completion{content: c.Message.Content, toolCalls: c.Message.ToolCalls, finish: c.FinishReason, id: typed.ID}
}

const (
	payoutText = "Payouts are batched every hour. When the payout queue backs up, the worker sheds load and pages the on-call engineer."
	ledgerText = "The ledger is append-only. It is reconciled nightly against the bank statements."
)

func TestChatAnswers(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := r2rContext("1a2b3c4", payoutText, "9f8e7d6", ledgerText)
	toolResult := map[string]any{"role": "tool", "tool_call_id": "call_1", "name": "search_file_knowledge", "content": ctx}
	assistantCall := map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{
		"id": "call_1", "type": "function", "function": map[string]any{"name": "search_file_knowledge", "arguments": `{"query":"payout queue"}`},
	}}}
	tests := []struct {
		name string
		req  map[string]any
		// want* are checked when set.
		wantFinish   string
		wantCites    []string // exactly these citations, in order
		wantContains []string
		wantPrefix   string
		wantTool     string
		wantArgs     string
		maxWords     int
	}{
		{
			name:         "rag cites the matching source",
			req:          ragRequest("What happens when the payout queue backs up?", ctx, nil),
			wantFinish:   FinishStop,
			wantCites:    []string{"1a2b3c4"},
			wantContains: []string{"When the payout queue backs up, the worker sheds load and pages the on-call engineer. [1a2b3c4]"},
		},
		{
			name:         "rag cites another source for another query",
			req:          ragRequest("How is the ledger reconciled?", ctx, nil),
			wantFinish:   FinishStop,
			wantCites:    []string{"9f8e7d6"},
			wantContains: []string{"The ledger is append-only. It is reconciled nightly against the bank statements. [9f8e7d6]"},
		},
		{
			name:         "rag cites each source of a mixed answer",
			req:          ragRequest("payout ledger", ctx, nil),
			wantFinish:   FinishStop,
			wantCites:    []string{"1a2b3c4", "9f8e7d6"},
			wantContains: []string{payoutText + " [1a2b3c4] The ledger is append-only. [9f8e7d6]"},
		},
		{
			name:         "rag with 8-character ids and chunk ids",
			req:          ragRequest("ledger", "Local Context Documents:\nFull Document ID: 9f8e7d60-0000\nShortened Document ID: 9f8e7d6\n\nChunk ID 5e5e5e5:\n"+ledgerText+"\nSource ID [abcd1234]:\nThe ledger has an index.", nil),
			wantFinish:   FinishStop,
			wantContains: []string{"[5e5e5e5]", "The ledger has an index. [abcd1234]"},
		},
		{
			name:       "rag with no matching term falls back to the first source",
			req:        ragRequest("zebra", ctx, nil),
			wantFinish: FinishStop,
			wantCites:  []string{"1a2b3c4"},
		},
		{
			name:         "rag with an empty context says so",
			req:          ragRequest("What happens when the payout queue backs up?", "", nil),
			wantFinish:   FinishStop,
			wantCites:    []string{},
			wantContains: []string{"no information", "payout queue"},
		},
		{
			name:       "max_tokens truncates",
			req:        ragRequest("payout queue", ctx, map[string]any{"max_tokens": 5}),
			wantFinish: FinishLength,
			maxWords:   5,
		},
		{
			name:       "max_completion_tokens truncates",
			req:        ragRequest("payout queue", ctx, map[string]any{"max_completion_tokens": 3}),
			wantFinish: FinishLength,
			maxWords:   3,
		},
		{
			name: "content parts",
			req: map[string]any{"model": "gpt-4o-mini", "messages": []map[string]any{
				{"role": "user", "content": []map[string]any{{"type": "text", "text": ragPrompt("ledger", ctx)}}},
			}},
			wantFinish: FinishStop,
			wantCites:  []string{"9f8e7d6"},
		},
		{
			name: "agent calls the search tool",
			req: map[string]any{"model": "gpt-4o-mini", "tools": searchTools, "messages": []map[string]any{
				{"role": "system", "content": "You are a helpful agent."},
				{"role": "user", "content": "What happens when the payout\nqueue backs up?"},
			}},
			wantFinish: FinishToolCalls,
			wantTool:   "search_file_knowledge",
			wantArgs:   `{"query":"What happens when the payout queue backs up?"}`,
		},
		{
			name: "agent answers from the tool result",
			req: map[string]any{"model": "gpt-4o-mini", "tools": searchTools, "messages": []map[string]any{
				{"role": "system", "content": "You are a helpful agent."},
				{"role": "user", "content": "What happens when the payout queue backs up?"},
				assistantCall, toolResult,
			}},
			wantFinish:   FinishStop,
			wantCites:    []string{"1a2b3c4"},
			wantContains: []string{"sheds load"},
		},
		{
			name: "tool_choice none answers instead",
			req: map[string]any{"model": "gpt-4o-mini", "tools": searchTools, "tool_choice": "none", "messages": []map[string]any{
				{"role": "user", "content": "Hello there. How are you? Fine."},
			}},
			wantFinish: FinishStop,
			wantPrefix: "Hello there. How are you?",
		},
		{
			name: "no search tool offered answers instead",
			req: map[string]any{"model": "gpt-4o-mini", "tools": searchTools[1:], "messages": []map[string]any{
				{"role": "user", "content": "Hello there."},
			}},
			wantFinish: FinishStop,
			wantPrefix: "Hello there.",
		},
		{
			name: "document summary prompt",
			req: map[string]any{"model": "gpt-4o-mini", "messages": []map[string]any{
				{"role": "system", "content": "You are a helpful agent."},
				{"role": "user", "content": "## Task:\nYour task is to generate a descriptive summary of the document that follows.\n\n### Document:\n# Payouts\n### Queue\n" + payoutText + "\n\n### Query:\nReminder: Your task is to generate a descriptive summary.\n## Response:"},
			}},
			wantFinish:   FinishStop,
			wantPrefix:   "The document contains # Payouts ### Queue Payouts are batched every hour.",
			wantCites:    []string{},
			wantContains: []string{},
		},
		{
			name: "other prompt gets an extract of itself",
			req: map[string]any{"model": "gpt-4o-mini", "messages": []map[string]any{
				{"role": "user", "content": "Generate a title. For this conversation about payouts! Ignore this."},
			}},
			wantFinish: FinishStop,
			wantPrefix: "Generate a title. For this conversation about payouts!",
		},
		{
			name: "unknown request keys are accepted",
			req: ragRequest("ledger", ctx, map[string]any{
				"stream": false, "seed": 1, "drop_params": true, "response_format": nil, "user": "x",
				"tools": nil, "extra_headers": map[string]any{}, "metadata": map[string]any{"a": 1},
			}),
			wantFinish: FinishStop,
			wantCites:  []string{"9f8e7d6"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL+"/v1/chat/completions", tt.req)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			c := validateCompletion(t, body, tt.req["model"].(string))
			if c.finish != tt.wantFinish {
				t.Errorf("finish_reason = %q, want %q", c.finish, tt.wantFinish)
			}
			if tt.wantTool != "" {
				if len(c.toolCalls) != 1 || c.toolCalls[0].Function.Name != tt.wantTool || c.toolCalls[0].Function.Arguments != tt.wantArgs {
					t.Fatalf("tool calls = %+v, want one %s(%s)", c.toolCalls, tt.wantTool, tt.wantArgs)
				}
				if c.content != nil {
					t.Errorf("tool call with content %q", *c.content)
				}
				return
			}
			if c.content == nil {
				t.Fatalf("no content: %s", body)
			}
			got := *c.content
			if tt.wantCites != nil {
				cites := citations(got)
				if strings.Join(cites, ",") != strings.Join(tt.wantCites, ",") {
					t.Errorf("citations %v, want %v in %q", cites, tt.wantCites, got)
				}
			}
			for _, s := range tt.wantContains {
				if !strings.Contains(got, s) {
					t.Errorf("answer %q lacks %q", got, s)
				}
			}
			if !strings.HasPrefix(got, tt.wantPrefix) {
				t.Errorf("answer %q does not start with %q", got, tt.wantPrefix)
			}
			if tt.maxWords > 0 && len(strings.Fields(got)) > tt.maxWords {
				t.Errorf("answer %q has more than %d words", got, tt.maxWords)
			}
		})
	}
}

func TestChatIsDeterministic(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := r2rContext("1a2b3c4", payoutText, "9f8e7d6", ledgerText)
	for _, req := range []map[string]any{
		ragRequest("payout queue ledger", ctx, nil),
		ragRequest("payout queue ledger", ctx, map[string]any{"stream": true}),
		{"model": "m", "tools": searchTools, "messages": []map[string]any{{"role": "user", "content": "q"}}},
	} {
		_, a := post(t, srv.URL+"/v1/chat/completions", req)
		_, b := post(t, srv.URL+"/chat/completions", req)
		if !bytes.Equal(a, b) {
			t.Errorf("two identical requests got different replies:\n%s\n%s", a, b)
		}
	}
}

func TestChatErrors(t *testing.T) {
	srv := newTestServer(t, Options{MaxBodyBytes: 1024})
	msgs := []map[string]any{{"role": "user", "content": "hi"}}
	tests := []struct {
		name    string
		body    any
		status  int
		wantMsg string
	}{
		{"not JSON", "[", 400, "not valid JSON"},
		{"array body", "[]", 400, "must be a JSON object, got a JSON array"},
		{"string messages", `{"model":"m","messages":"hi"}`, 400, "'messages' has the wrong type: got a JSON string"},
		{"string stream flag", `{"model":"m","messages":[],"stream":"yes"}`, 400, "'stream' has the wrong type"},
		{"fractional max_tokens", `{"model":"m","messages":[],"max_tokens":1.5}`, 400, "'max_tokens' has the wrong type"},
		{"no model", map[string]any{"messages": msgs}, 400, "'model'"},
		{"no messages", map[string]any{"model": "m"}, 400, "'messages'"},
		{"empty messages", map[string]any{"model": "m", "messages": []any{}}, 400, "'messages'"},
		{"bad role", map[string]any{"model": "m", "messages": []map[string]any{{"role": "robot", "content": "x"}}}, 400, "'messages[0].role'"},
		{"bad content", map[string]any{"model": "m", "messages": []map[string]any{{"role": "user", "content": 3}}}, 400, "'messages[0]'"},
		{"zero max_tokens", map[string]any{"model": "m", "messages": msgs, "max_tokens": 0}, 400, "max_tokens"},
		{"too large", map[string]any{"model": "m", "messages": []map[string]any{{"role": "user", "content": strings.Repeat("x", 2000)}}}, 413, "limit of 1024 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL+"/v1/chat/completions", tt.body)
			checkError(t, status, tt.status, body, tt.wantMsg)
		})
	}
}

func TestRoutes(t *testing.T) {
	srv := newTestServer(t, Options{})
	tests := []struct {
		method, path string
		status       int
		wantMsg      string
	}{
		{"GET", "/v1/chat/completions", 405, "not allowed"},
		{"PUT", "/embeddings", 405, "not allowed"},
		{"POST", "/v1/models", 405, "not allowed"},
		{"POST", "/v1/completions", 404, "Invalid URL"},
		{"GET", "/", 404, "Invalid URL"},
		{"GET", "/v2/models", 404, "Invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			checkError(t, resp.StatusCode, tt.status, buf.Bytes(), tt.wantMsg)
		})
	}
}

func TestModelsListsDefaultsAndUsedModels(t *testing.T) {
	d, srv := NewServer(Options{ChatModel: "chat-x", EmbeddingModel: "text-embedding-3-large"})
	defer srv.Close()
	post(t, srv.URL+"/v1/chat/completions", map[string]any{"model": "openai-chat", "messages": []map[string]any{{"role": "user", "content": "hi"}}})
	post(t, srv.URL+"/v1/embeddings", map[string]any{"model": "emb-y", "input": "x"})
	post(t, srv.URL+"/v1/embeddings", map[string]any{"model": "not-listed", "input": "x", "dimensions": 0}) // rejected: not listed
	for _, path := range []string{"/v1/models", "/models"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || list.Object != "list" {
			t.Fatalf("%s: %v %+v", path, err, list)
		}
		var ids []string
		for _, m := range list.Data {
			if m.Object != "model" {
				t.Errorf("object = %q", m.Object)
			}
			ids = append(ids, m.ID)
		}
		if got, want := strings.Join(ids, ","), "chat-x,emb-y,openai-chat,text-embedding-3-large"; got != want {
			t.Errorf("%s lists %s, want %s", path, got, want)
		}
	}
	for i := range 2 * maxModels {
		d.sawModel(strings.Repeat("m", i+1))
	}
	if n := len(d.Models()); n != maxModels {
		t.Errorf("%d models remembered, want the bound %d", n, maxModels)
	}
}

func TestConcurrentRequests(t *testing.T) {
	var log syncLog
	d, srv := NewServer(Options{Logger: &log})
	defer srv.Close()
	ctx := r2rContext("1a2b3c4", payoutText, "9f8e7d6", ledgerText)
	const n = 8
	errc := make(chan error, n)
	for i := range n {
		go func() {
			path, req := "/v1/chat/completions", ragRequest("ledger", ctx, map[string]any{"model": fmt.Sprint("chat-", i), "stream": i%4 == 1})
			if i%2 == 0 {
				path, req = "/v1/embeddings", map[string]any{"model": fmt.Sprint("emb-", i), "input": []string{"a", "b"}}
			}
			b, _ := json.Marshal(req)
			resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(b))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("%s: status %d", path, resp.StatusCode)
				}
			}
			errc <- err
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
	srv.Close() // waits for the handlers, which log after they reply
	if got := len(d.Models()); got != 2+n {
		t.Errorf("%d models listed, want %d", got, 2+n)
	}
	if lines := strings.Count(log.String(), "\n"); lines != n {
		t.Errorf("%d log lines, want %d:\n%s", lines, n, log.String())
	}
}
