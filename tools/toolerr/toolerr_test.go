package toolerr

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestResultWire: an error result has text, isError and _meta["r2r-mcp/error"], and
// no structuredContent (which MCP clients check against the tool's outputSchema even on
// errors); Of reads it back both in-process and after a JSON round trip.
func TestResultWire(t *testing.T) {
	secs := 2.5
	want := Info{Type: "rate_limited", Code: CodeRateLimited, Retryable: true, RetryAfter: &secs, Status: 429,
		Message: "Slow down. Retry in 2.5 s."}
	res := Result(want)

	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(b, &wire); err != nil {
		t.Fatal(err)
	}
	if _, ok := wire["structuredContent"]; ok {
		t.Errorf("error result has structuredContent: %s", b)
	}
	if wire["isError"] != true {
		t.Errorf("isError missing: %s", b)
	}
	meta, _ := wire["_meta"].(map[string]any)
	got, _ := meta[MetaKey].(map[string]any)
	wantWire := map[string]any{"type": "rate_limited", "code": float64(CodeRateLimited), "retryable": true,
		"retry_after": 2.5, "status": float64(429)}
	if fmt.Sprint(got) != fmt.Sprint(wantWire) {
		t.Errorf("_meta[%q] = %v, want %v", MetaKey, got, wantWire)
	}

	var decoded mcp.CallToolResult
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*mcp.CallToolResult{"in-process": res, "decoded": &decoded} {
		info, ok := Of(r)
		if !ok || info.Type != want.Type || info.Code != want.Code || !info.Retryable || info.RetryAfter == nil ||
			*info.RetryAfter != secs || info.Status != 429 || info.Message != want.Message {
			t.Errorf("%s: Of = %+v, %v", name, info, ok)
		}
	}
	if _, ok := Of(mcp.NewToolResultText("fine")); ok {
		t.Error("Of reported an error for a successful result")
	}
}
