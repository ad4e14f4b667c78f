package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// cleanResults is the last step of every tool: whatever a handler built from R2R's data
// (collection names, titles, error text, metadata), no control, invisible or BiDi
// character reaches the model (Sanitize), in the text and in the structured content.
func cleanResults(h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := h(ctx, req)
		if res != nil {
			cleanResult(res)
		}
		return res, err
	}
}

// cleanResult sanitises res in place. The structured content keeps its Go type unless a
// string in it had to change; then it is replaced by the cleaned JSON value.
func cleanResult(res *mcp.CallToolResult) {
	switch res.StructuredContent.(type) {
	case cleanJSON, cleanHit:
		return // a cache hit: its text and JSON were cleaned when the answer was made (finish)
	}
	for i, c := range res.Content {
		switch t := c.(type) {
		case mcp.TextContent:
			t.Text = Sanitize(t.Text)
			res.Content[i] = t
		case *mcp.TextContent:
			t.Text = Sanitize(t.Text)
		}
	}
	if res.StructuredContent == nil {
		return
	}
	// A cache hit's structured content is already encoded: check those bytes as they are
	// rather than re-encode them.
	b, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(res.StructuredContent); err != nil {
			return
		}
	}
	if !dirtyJSON(b) {
		return
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return
	}
	if cleaned := sanitizeValue(v); !reflect.DeepEqual(cleaned, v) {
		res.StructuredContent = cleaned
	}
}

// dirtyJSON reports whether JSON text from encoding/json may hold a string that Sanitize
// changes: a character it drops or replaces, or one the encoder escapes — a control
// character (\b, \f or \u0000–\u001f; tab, newline and carriage return are kept) or the
// line and paragraph separators (\u2028, \u2029). A false alarm (an escaped backslash
// before b or f) only costs the slower, exact check.
func dirtyJSON(b []byte) bool {
	for _, esc := range dirtyEscapes {
		if bytes.Contains(b, esc) {
			return true
		}
	}
	return !utf8.Valid(b) || bytes.IndexFunc(b, cleantext.Changes) >= 0
}

// dirtyEscapes are the escapes dirtyJSON looks for.
var dirtyEscapes = [][]byte{[]byte(`\u000`), []byte(`\u001`), []byte(`\b`), []byte(`\f`), []byte(`\u2028`), []byte(`\u2029`)}

// resourceReads is the rate limiter's name for resource reads (not a tool).
const resourceReads = "resources/read"

// guardResourceRead applies what every resource read gets beside its deadline: the
// rate limit of "resources/read" (the default class's limit) and clean text.
func guardResourceRead(d *Deps, h server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	d.setup()
	tl, now := d.limiter.local.get(resourceReads, ""), d.limiter.now
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if wait, ok := tl.admit(now()); !ok {
			secs := math.Ceil(wait.Seconds()*1000) / 1000
			return nil, fmt.Errorf("too many resource reads: r2r-mcp allows %s per second (bursts of %d) to protect R2R; retry in %s s",
				strconv.FormatFloat(tl.cfg.Rate, 'f', -1, 64), tl.cfg.Burst, strconv.FormatFloat(secs, 'f', -1, 64))
		}
		out, err := h(ctx, req)
		for i, c := range out {
			if t, ok := c.(mcp.TextResourceContents); ok {
				t.Text = Sanitize(t.Text)
				out[i] = t
			}
		}
		return out, err
	}
}

// maxErrorEcho is how much of an error's text a result repeats.
const maxErrorEcho = 600

// errText is err's text as a result may show it: cleaned and clipped (an error may carry
// R2R's error body, or a caller's input).
func errText(err error) string {
	return cleantext.Clip(cleantext.Line(err.Error()), maxErrorEcho)
}
