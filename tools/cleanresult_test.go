package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestCleanResult(t *testing.T) {
	type out struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	clean := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("fine")}, StructuredContent: out{Name: "ok", N: 1}}
	cleanResult(clean)
	if _, kept := clean.StructuredContent.(out); !kept {
		t.Error("a clean structured value lost its type")
	}
	dirty := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a\x1b[2Jb\u202E")},
		StructuredContent: out{Name: "x\u200By\x00", N: 2}}
	cleanResult(dirty)
	if txt := dirty.Content[0].(mcp.TextContent).Text; txt != "a[2Jb" {
		t.Errorf("text = %q", txt)
	}
	m, ok := dirty.StructuredContent.(map[string]any)
	if !ok || m["name"] != "xy" || m["n"] != float64(2) {
		t.Errorf("structured = %#v", dirty.StructuredContent)
	}
}

func TestGuardResourceReadLimitsAndCleans(t *testing.T) {
	now := time.Unix(1000, 0)
	d := &Deps{Config: rated(1, 1), Now: func() time.Time { return now }}
	h := guardResourceRead(d, func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: "r2r://x", Text: "t\u202Ex\x00"}}, nil
	})
	got, err := h(context.Background(), mcp.ReadResourceRequest{})
	if err != nil || got[0].(mcp.TextResourceContents).Text != "tx" {
		t.Fatalf("first read = %v, %v", got, err)
	}
	if _, err := h(context.Background(), mcp.ReadResourceRequest{}); err == nil || !strings.Contains(err.Error(), "retry in 1 s") {
		t.Fatalf("second read at once = %v, want the rate limit", err)
	}
	now = now.Add(time.Second)
	if _, err := h(context.Background(), mcp.ReadResourceRequest{}); err != nil {
		t.Fatalf("a read a second later = %v", err)
	}
}

func TestErrText(t *testing.T) {
	s := errText(errors.New("bad\x1b\n" + strings.Repeat("x", 5000)))
	if len(s) > maxErrorEcho+40 || strings.ContainsAny(s, "\x1b\n") {
		t.Errorf("errText = %q", s)
	}
}

func TestDirtyJSON(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{map[string]any{"a": "plain — text… <b>&"}, false},
		{map[string]any{"a": "tab\tnewline\n"}, false},
		{map[string]any{"a": "esc\x1b"}, true},
		{map[string]any{"a": "bell\b"}, true},
		{map[string]any{"a": "bidi\u202e"}, true},
		{map[string]any{"a": "c1\u0085"}, true},
		{map[string]any{"zero\u200bwidth": 1}, true},
		{map[string]any{"a": "line\u2028paragraph\u2029"}, true},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(tt.v)
		if got := dirtyJSON(b); got != tt.want {
			t.Errorf("dirtyJSON(%s) = %v, want %v", b, got, tt.want)
		}
	}
}

// sharedHitJSON is the hit's JSON of a as a shared cache keeps it.
func sharedHitJSON[T output](t *testing.T, a answer[T]) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back answer[T]
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back.HitJSON
}

// TestHitServedAsEncoded: a cache hit serves its structured content as a value when
// cleaning changed nothing, and as the cleaned JSON otherwise; either way a client reads
// the bytes finish encoded (those a shared cache keeps), and cleanResult leaves both alone.
func TestHitServedAsEncoded(t *testing.T) {
	hits := []SearchHit{{Rank: 1, Relevance: 1, Title: "a <b> & c.md", DocumentID: "d1", Text: "x ünïcödé \"q\" y"}}
	tests := []struct {
		name      string
		out       output
		hit       output
		wantValue bool
	}{
		{"clean search", SearchOutput{Results: hits, Count: 1, Query: "q", SearchMode: "advanced", Limit: 10},
			SearchOutput{Results: hits, Count: 1, Cached: true, Query: "q", SearchMode: "advanced", Limit: 10}, true},
		{"dirty search", SearchOutput{Results: hits, Count: 1, Query: "q\x01\u200b", Limit: 10},
			SearchOutput{Results: hits, Count: 1, Cached: true, Query: "q\x01\u200b", Limit: 10}, false},
		{"clean rag", RAGOutput{Answer: "yes", Sources: []RAGSource{{ID: "s", Title: "t", Score: 0.5}}},
			RAGOutput{Answer: "yes", Sources: []RAGSource{{ID: "s", Title: "t", Score: 0.5}}, Cached: true}, true},
		{"dirty rag", RAGOutput{Answer: "y\u202ees"}, RAGOutput{Answer: "y\u202ees", Cached: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res *mcp.CallToolResult
			var hitJSON json.RawMessage
			switch out := tt.out.(type) {
			case SearchOutput:
				a, err := finish(out, tt.hit.(SearchOutput), "text")
				if err != nil {
					t.Fatal(err)
				}
				res, hitJSON = served(a, true), sharedHitJSON(t, a)
			case RAGOutput:
				a, err := finish(out, tt.hit.(RAGOutput), "text")
				if err != nil {
					t.Fatal(err)
				}
				res, hitJSON = served(a, true), sharedHitJSON(t, a)
			}
			if _, isValue := res.StructuredContent.(cleanHit); isValue != tt.wantValue {
				t.Errorf("served as a value: %v, want %v (%T)", isValue, tt.wantValue, res.StructuredContent)
			}
			if txt := res.Content[0].(mcp.TextContent).Text; txt != cachedMarker+"text" {
				t.Errorf("hit text = %q", txt)
			}
			before := fmt.Sprintf("%T %p", res.StructuredContent, res.StructuredContent)
			cleanResult(res)
			if after := fmt.Sprintf("%T %p", res.StructuredContent, res.StructuredContent); after != before {
				t.Errorf("cleanResult replaced a cache hit's structured content: %s, was %s", after, before)
			}
			got, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(&mcp.CallToolResult{Content: res.Content, StructuredContent: cleanJSON(hitJSON)})
			if string(got) != string(want) {
				t.Errorf("hit encodes as\n%s\nwant\n%s", got, want)
			}
			if !tt.wantValue && strings.ContainsAny(string(got), "\x01\u200b\u202e") {
				t.Errorf("dirty hit not cleaned: %s", got)
			}
		})
	}
}
