package modeldouble

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

type chunkChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

type chatChunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
}

// stream writes rep as server-sent chat.completion.chunk events. Every chunk carries exactly
// one choice (R2R reads choices[0] of each), so usage, when asked for with
// stream_options.include_usage, rides on the last chunk instead of a chunk of its own.
func (d *Double) stream(w http.ResponseWriter, r *http.Request, id string, created int64, model string, rep reply, u usage, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(delta map[string]any, finish *string, u *usage) bool {
		if r.Context().Err() != nil {
			return false
		}
		b, err := json.Marshal(chatChunk{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
			SystemFingerprint: fingerprint,
			Choices:           []chunkChoice{{Index: 0, Delta: delta, FinishReason: finish}},
			Usage:             u,
		})
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		_ = rc.Flush()
		return true
	}
	var deltas []map[string]any
	if rep.call != nil {
		deltas = []map[string]any{
			{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{
				"index": 0, "id": rep.call.ID, "type": "function",
				"function": map[string]any{"name": rep.call.Function.Name, "arguments": ""},
			}}},
			{"tool_calls": []map[string]any{{
				"index": 0, "function": map[string]any{"arguments": rep.call.Function.Arguments},
			}}},
		}
	} else {
		deltas = []map[string]any{{"role": "assistant", "content": ""}}
		for _, piece := range streamPieces(rep.content, streamWords) {
			deltas = append(deltas, map[string]any{"content": piece})
		}
	}
	for _, delta := range deltas {
		if !send(delta, nil, nil) {
			return
		}
	}
	finish := rep.finish
	var last *usage
	if includeUsage {
		last = &u
	}
	if !send(map[string]any{}, &finish, last) {
		return
	}
	if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err == nil {
		_ = rc.Flush()
	}
}

// streamPieces splits s into pieces of n words each (a word keeps the space after it), so
// that the pieces concatenate back to s exactly.
func streamPieces(s string, n int) []string {
	var out []string
	ws := strings.SplitAfter(s, " ")
	for i := 0; i < len(ws); i += n {
		piece := strings.Join(ws[i:min(i+n, len(ws))], "")
		if piece != "" {
			out = append(out, piece)
		}
	}
	return out
}
