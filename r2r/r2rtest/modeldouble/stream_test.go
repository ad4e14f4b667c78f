package modeldouble

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// streamed is a parsed chat.completion.chunk stream.
type streamed struct {
	content   string
	toolName  string
	toolID    string
	toolArgs  string
	finish    string
	chunks    int
	lastUsage *usage
}

// parseStream reads server-sent events: "data: …" lines separated by blank lines, ending
// with "data: [DONE]". It checks each chunk's envelope and that only the last one has a
// finish_reason.
func parseStream(t *testing.T, body []byte, model string) streamed {
	t.Helper()
	var s streamed
	var id string
	done := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		if expectBlank {
			if line != "" {
				t.Fatalf("event not followed by a blank line: %q", line)
			}
			expectBlank = false
			continue
		}
		if done {
			t.Fatalf("data after [DONE]: %q", line)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line is not a data line: %q", line)
		}
		expectBlank = true
		if data == "[DONE]" {
			done = true
			continue
		}
		if s.finish != "" {
			t.Fatalf("chunk after the finish_reason chunk: %s", data)
		}
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created *int64 `json:"created"`
			Model   string `json:"model"`
			Choices []struct {
				Index *int `json:"index"`
				Delta struct {
					Role      *string `json:"role"`
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    *int   `json:"index"`
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk is not JSON: %v: %s", err, data)
		}
		if c.Object != "chat.completion.chunk" || c.Created == nil || c.Model != model || c.ID == "" {
			t.Fatalf("bad chunk envelope: %s", data)
		}
		if id == "" {
			id = c.ID
		} else if c.ID != id {
			t.Errorf("chunk id %q differs from %q", c.ID, id)
		}
		if len(c.Choices) != 1 || c.Choices[0].Index == nil || *c.Choices[0].Index != 0 {
			t.Fatalf("chunk does not have exactly one choice with index 0: %s", data)
		}
		s.chunks++
		ch := c.Choices[0]
		if ch.Delta.Role != nil && *ch.Delta.Role != "assistant" {
			t.Errorf("delta role %q", *ch.Delta.Role)
		}
		if ch.Delta.Content != nil {
			s.content += *ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index == nil || *tc.Index != 0 {
				t.Errorf("tool call delta without index 0: %s", data)
			}
			if tc.ID != "" {
				s.toolID = tc.ID
			}
			if tc.Function.Name != "" {
				s.toolName = tc.Function.Name
			}
			s.toolArgs += tc.Function.Arguments
		}
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
			s.lastUsage = c.Usage
		} else if c.Usage != nil {
			t.Errorf("usage on a chunk before the last: %s", data)
		}
	}
	if !done {
		t.Fatal("stream does not end with data: [DONE]")
	}
	if s.finish == "" {
		t.Fatal("no chunk has a finish_reason")
	}
	return s
}

func TestChatStreaming(t *testing.T) {
	srv := newTestServer(t, Options{})
	ctx := r2rContext("1a2b3c4", payoutText, "9f8e7d6", ledgerText)
	tests := []struct {
		name       string
		req        map[string]any
		wantFinish string
		wantUsage  bool
		wantTool   string
	}{
		{"rag", ragRequest("What happens when the payout queue backs up?", ctx, nil), FinishStop, false, ""},
		{"rag with usage", ragRequest("ledger", ctx, map[string]any{"stream_options": map[string]any{"include_usage": true}}), FinishStop, true, ""},
		{"truncated", ragRequest("payout", ctx, map[string]any{"max_tokens": 6}), FinishLength, false, ""},
		{"empty context", ragRequest("payout", "", nil), FinishStop, false, ""},
		{"tool call", map[string]any{"model": "gpt-4o-mini", "tools": searchTools, "messages": []map[string]any{
			{"role": "system", "content": "You are a helpful agent."},
			{"role": "user", "content": "payout queue"},
		}}, FinishToolCalls, false, "search_file_knowledge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plainStatus, plainBody := post(t, srv.URL+"/v1/chat/completions", tt.req)
			if plainStatus != http.StatusOK {
				t.Fatalf("plain: status %d: %s", plainStatus, plainBody)
			}
			plain := validateCompletion(t, plainBody, "gpt-4o-mini")

			req := map[string]any{"stream": true}
			for k, v := range tt.req {
				req[k] = v
			}
			b, _ := json.Marshal(req)
			resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
				t.Fatalf("status %d content type %q", resp.StatusCode, ct)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			s := parseStream(t, buf.Bytes(), "gpt-4o-mini")

			if s.finish != tt.wantFinish || s.finish != plain.finish {
				t.Errorf("finish_reason %q (plain %q), want %q", s.finish, plain.finish, tt.wantFinish)
			}
			if (s.lastUsage != nil) != tt.wantUsage {
				t.Errorf("usage on the last chunk: %v, want %v", s.lastUsage, tt.wantUsage)
			}
			if tt.wantTool != "" {
				if len(plain.toolCalls) != 1 {
					t.Fatalf("plain reply has %d tool calls", len(plain.toolCalls))
				}
				p := plain.toolCalls[0]
				if s.toolName != tt.wantTool || s.toolID != p.ID || s.toolArgs != p.Function.Arguments || s.content != "" {
					t.Errorf("streamed tool call %s %s(%s) content %q, want %s %s(%s)", s.toolID, s.toolName, s.toolArgs, s.content, p.ID, p.Function.Name, p.Function.Arguments)
				}
				return
			}
			if plain.content == nil || s.content != *plain.content {
				t.Errorf("streamed content %q differs from the plain reply %v", s.content, plain.content)
			}
			if s.chunks < 3 {
				t.Errorf("only %d chunks", s.chunks)
			}
		})
	}
}

func TestStreamPiecesConcatenateBack(t *testing.T) {
	for _, s := range []string{"", "one", "one two", "a b c d e f g h i", " lead and trail ", "double  space"} {
		for _, n := range []int{1, 2, 4} {
			if got := strings.Join(streamPieces(s, n), ""); got != s {
				t.Errorf("streamPieces(%q, %d) joins to %q", s, n, got)
			}
		}
	}
}
