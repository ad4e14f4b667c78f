package modeldouble

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// SearchToolName is the tool R2R's agent searches its knowledge base with; the double calls
// it when a request offers it (or else the first offered tool whose name contains "search").
const SearchToolName = "search_file_knowledge"

// Finish reasons the double gives; R2R accepts these among a closed set.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)

// fingerprint is the system_fingerprint of every reply: one fixed backend.
const fingerprint = "fp_r2r_mcp_model_double"

// streamWords is how many words one streamed chunk carries.
const streamWords = 4

type chatRequest struct {
	Model         string          `json:"model"`
	Messages      []chatMessage   `json:"messages"`
	Tools         []chatTool      `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// chatTool is one offered tool; R2R's agent also sets a non-standard top-level "name".
type chatTool struct {
	Type     string `json:"type"`
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

func (t chatTool) name() string {
	if t.Function.Name != "" {
		return t.Function.Name
	}
	return t.Name
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// contentText is a message's text: a string, the text parts of a list of content parts, or
// "" for null.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("'content' must be a string, null or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// toolCall is a function call in a reply.
type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// reply is what the double answers, before it is put in the plain or streamed form.
type reply struct {
	content  string
	call     *toolCall
	finish   string
	inTokens int
}

// respond decides the reply to a valid request: a search tool call when tools are offered
// and the user spoke last, an answer from the tool results after tool messages, or an
// extractive answer to the last message's prompt.
func respond(req *chatRequest, texts []string, id string) reply {
	r := reply{finish: FinishStop}
	for _, t := range texts {
		r.inTokens += len(words(t))
	}
	last := len(req.Messages) - 1
	lastRole := req.Messages[last].Role
	if lastRole == "user" && len(req.Tools) > 0 && toolsAllowed(req.ToolChoice) {
		if name := searchTool(req.Tools); name != "" {
			args, _ := json.Marshal(map[string]string{"query": oneLine(texts[last])})
			c := &toolCall{ID: "call_" + id[len(id)-24:], Type: "function"}
			c.Function.Name, c.Function.Arguments = name, string(args)
			r.call, r.finish = c, FinishToolCalls
			return r
		}
	}
	switch {
	case lastRole == "tool" || lastRole == "function":
		// The results of the trailing run of tool messages answer the last user message.
		first := last
		for first > 0 && (req.Messages[first-1].Role == "tool" || req.Messages[first-1].Role == "function") {
			first--
		}
		query := ""
		for i := first - 1; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				query = texts[i]
				break
			}
		}
		r.content = answerFromContext(query, strings.Join(texts[first:], "\n"))
	default:
		prompt := texts[last]
		if q, ctx, ok := parseRAGPrompt(prompt); ok {
			r.content = answerFromContext(q, ctx)
		} else if doc, ok := documentOf(prompt); ok {
			r.content = summarize(doc)
		} else {
			r.content = genericReply(prompt)
		}
	}
	limit := 0
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if req.MaxCompletionTokens != nil {
		limit = *req.MaxCompletionTokens
	}
	var cut bool
	if r.content, cut = truncateWords(r.content, limit); cut {
		r.finish = FinishLength
	}
	return r
}

// toolsAllowed is false when tool_choice is "none".
func toolsAllowed(choice json.RawMessage) bool {
	var s string
	return json.Unmarshal(choice, &s) != nil || s != "none"
}

func searchTool(tools []chatTool) string {
	for _, t := range tools {
		if t.name() == SearchToolName {
			return t.name()
		}
	}
	for _, t := range tools {
		if strings.Contains(t.name(), "search") {
			return t.name()
		}
	}
	return ""
}

type respMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      respMessage `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type chatResponse struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []chatChoice `json:"choices"`
	Usage             usage        `json:"usage"`
}

func (d *Double) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !d.decode(w, r, &req) {
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "'model' is a required property", "model")
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "'messages' must be a non-empty array", "messages")
		return
	}
	texts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		if !validRoles[m.Role] {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("'messages[%d].role' must be one of system, developer, user, assistant, tool, function; got %q", i, m.Role), fmt.Sprintf("messages[%d].role", i))
			return
		}
		t, err := contentText(m.Content)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("'messages[%d]': %v", i, err), fmt.Sprintf("messages[%d].content", i))
			return
		}
		texts[i] = t
	}
	for _, lim := range []*int{req.MaxTokens, req.MaxCompletionTokens} {
		if lim != nil && *lim < 1 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("max_tokens must be at least 1, got %d", *lim), "max_tokens")
			return
		}
	}
	d.sawModel(req.Model)
	id := completionID(&req, texts)
	rep := respond(&req, texts, id)
	created := d.opts.Now().Unix()
	out := rep.completionTokens()
	u := usage{PromptTokens: rep.inTokens, CompletionTokens: out, TotalTokens: rep.inTokens + out}
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		d.stream(w, r, id, created, req.Model, rep, u, includeUsage)
		return
	}
	msg := respMessage{Role: "assistant"}
	if rep.call != nil {
		msg.ToolCalls = []toolCall{*rep.call}
	} else {
		msg.Content = &rep.content
	}
	writeJSON(w, http.StatusOK, chatResponse{
		ID: id, Object: "chat.completion", Created: created, Model: req.Model,
		SystemFingerprint: fingerprint,
		Choices:           []chatChoice{{Index: 0, Message: msg, FinishReason: rep.finish}},
		Usage:             u,
	})
}

func (rep reply) completionTokens() int {
	if rep.call != nil {
		return len(words(rep.call.Function.Arguments))
	}
	return len(words(rep.content))
}

// completionID is deterministic: the same conversation gets the same id.
func completionID(req *chatRequest, texts []string) string {
	h := sha256.New()
	h.Write([]byte(req.Model))
	for i, t := range texts {
		fmt.Fprintf(h, "\x00%s\x00", req.Messages[i].Role)
		h.Write([]byte(t))
	}
	return "chatcmpl-" + hex.EncodeToString(h.Sum(nil))[:24]
}
