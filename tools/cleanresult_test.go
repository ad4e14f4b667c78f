package tools

import (
	"context"
	"encoding/json"
	"errors"
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
	}
	for _, tt := range tests {
		b, _ := json.Marshal(tt.v)
		if got := dirtyJSON(b); got != tt.want {
			t.Errorf("dirtyJSON(%s) = %v, want %v", b, got, tt.want)
		}
	}
}
