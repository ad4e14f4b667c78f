package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// rawHit stands for a cached structured content that encodes itself from stored bytes.
type rawHit []byte

func (h rawHit) MarshalJSON() ([]byte, error) { return h, nil }

// TestEncodeMessage holds encodeMessage to json.Marshal byte for byte: the splice of a
// tool result's own encoding must be exactly what mcp-go's stdio server writes.
func TestEncodeMessage(t *testing.T) {
	text := "a <b> & c\u2028d \"q\" \\ \x01 \xff é 🙂"
	tool := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.TextContent{Type: "text", Text: text}},
		StructuredContent: map[string]any{"results": []any{map[string]any{"text": text, "rank": 1}}},
	}
	errResult := mcp.NewToolResultError("R2R unreachable <here>")
	errResult.Meta = &mcp.Meta{AdditionalFields: map[string]any{"code": -32010, "retryable": true}}
	raw := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "x"}},
		StructuredContent: rawHit(`{ "spaced" : "<json>",  "n":[1, 2] }`)}
	cases := map[string]mcp.JSONRPCMessage{
		"tool result, number id":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(7)), tool),
		"tool result, string id":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId("a\"<id>"), tool),
		"tool result as a value":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(1)), *tool),
		"error result with _meta":  mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(2)), errResult),
		"uncompacted structured":   mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(3)), raw),
		"nil tool result":          mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(4)), (*mcp.CallToolResult)(nil)),
		"other result":             mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(5)), map[string]any{"a": "<b>"}),
		"JSON-RPC error":           mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(6)), Error: mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "<x>"}},
		"notification":             mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: "notifications/message"}},
		"empty tool result, no id": mcp.NewJSONRPCResultResponse(mcp.RequestId{}, &mcp.CallToolResult{}),
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeMessage(msg)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encodeMessage:\n got %s\nwant %s", got, want)
			}
		})
	}
}
