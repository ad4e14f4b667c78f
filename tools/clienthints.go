package tools

import (
	"github.com/mark3labs/mcp-go/mcp"
)

// Keys of a tool's _meta that Claude Code reads: a phrase its tool search matches besides
// the name and description, whether the tool is loaded at start rather than found through
// tool search, and how many characters a result may have before the client cuts it.
const (
	MetaSearchHint     = "anthropic/searchHint"
	MetaAlwaysLoad     = "anthropic/alwaysLoad"
	MetaMaxResultChars = "anthropic/maxResultSizeChars"
)

// ClientCapBytes is what Claude Code keeps of a tool description and of a server's
// instructions; the tests hold every description and the instructions under it.
const ClientCapBytes = 2048

// withMeta sets key in the tool's _meta.
func withMeta(key string, value any) mcp.ToolOption {
	return func(t *mcp.Tool) {
		if t.Meta == nil {
			t.Meta = &mcp.Meta{}
		}
		if t.Meta.AdditionalFields == nil {
			t.Meta.AdditionalFields = map[string]any{}
		}
		t.Meta.AdditionalFields[key] = value
	}
}

// searchHint gives a tool the words a developer would use for what it does, for clients
// that find tools by search.
func searchHint(words string) mcp.ToolOption { return withMeta(MetaSearchHint, words) }

// maxResultChars declares how long a result of the tool may be, in characters, when its
// text can pass what clients keep by default (see resultChars).
func maxResultChars(n int) mcp.ToolOption { return withMeta(MetaMaxResultChars, n) }

// resultFixedChars bounds what a result holds besides its one long text: titles,
// ids, metadata (maxMetadataOutBytes), the sources of an answer, notes.
const resultFixedChars = maxMetadataOutBytes + 4096

// resultChars is the most characters a result whose long text has at most textChars
// characters can take, in its text or as the JSON of its structured content (which some
// clients show instead): JSON escaping at most doubles a text (\n, \", \\; control
// characters are stripped before), plus the rest of the result.
func resultChars(textChars int) int { return 2*textChars + resultFixedChars }
