// Package toolerr is r2r-mcp's error contract: the codes of error results, the
// structured data sent with them in _meta, and how to build and read such a result. Every
// layer (the tools, the stdio guard, the gateway, metrics, doctor) speaks it
// through this package; which failure gets which code and text is decided in one place,
// the tools package's errors.go.
package toolerr

import (
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Codes of error results, in Info.Code.
const (
	CodeR2RAPI        = -32001 // R2R answered with an error, or could not be reached
	CodeAuth          = -32002 // R2R rejected the credentials, or they could not be applied
	CodeBreakerOpen   = -32003 // the circuit breaker is open: R2R failed repeatedly
	CodeRateLimited   = -32004 // a rate limit: r2r-mcp's own per tool, or R2R's (429)
	CodeInvalidParams = -32602 // the arguments are wrong
	CodeInternal      = -32603 // not R2R's doing: a cancelled call, a bug, a configuration problem
)

// MetaKey is the key in an error result's _meta under which Info is sent.
//
// Error results carry no structuredContent: the MCP spec requires structuredContent to
// conform to the tool's outputSchema, and the official TypeScript SDK (Claude Code and
// most clients) checks that even on isError results, so an error object there turns the
// whole answer into a protocol error and the model never sees the text.
const MetaKey = "r2r-mcp/error"

// Info is the structured data of an error result, sent in _meta[MetaKey]. The message is
// the result's text and is not repeated there.
type Info struct {
	Type       string   `json:"type"`
	Code       int      `json:"code"`
	Retryable  bool     `json:"retryable"`
	RetryAfter *float64 `json:"retry_after,omitempty"` // seconds
	Status     int      `json:"status,omitempty"`      // R2R's HTTP status
	Message    string   `json:"-"`                     // the result's text
}

// Result builds an isError result: info.Message as the text, the rest of info in
// _meta[MetaKey], and no structured content (see MetaKey).
func Result(info Info) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Result:  mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{MetaKey: info}}},
		Content: []mcp.Content{mcp.NewTextContent(info.Message)},
		IsError: true,
	}
}

// Of returns the Info of an error result, with Message set from its text. It reads
// results built by Result as well as ones decoded from the wire (where _meta holds plain
// JSON). ok is false for successful results and for error results without r2r-mcp's error
// data.
func Of(res *mcp.CallToolResult) (info Info, ok bool) {
	if res == nil || !res.IsError || res.Meta == nil {
		return Info{}, false
	}
	switch v := res.Meta.AdditionalFields[MetaKey].(type) {
	case Info:
		info = v
	case *Info:
		if v == nil {
			return Info{}, false
		}
		info = *v
	case map[string]any:
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &info) != nil || info.Code == 0 {
			return Info{}, false
		}
	default:
		return Info{}, false
	}
	var texts []string
	for _, c := range res.Content {
		if t, isText := mcp.AsTextContent(c); isText {
			texts = append(texts, t.Text)
		}
	}
	info.Message = strings.Join(texts, "\n")
	return info, true
}
