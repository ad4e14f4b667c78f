package tools

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func TestSanitize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "hello world", "hello world"},
		{"keeps whitespace", "a\tb\nc\r\n", "a\tb\nc\r\n"},
		{"keeps non-latin", "Grüße, 日本語, emoji 👍", "Grüße, 日本語, emoji 👍"},
		{"zero width", "pass\u200bword\u200c\u200d\u200e\u200f", "password"},
		{"bidi overrides", "\u202aa\u202bb\u202cc\u202dd\u202ee", "abcde"},
		{"bidi isolates", "\u2066x\u2067y\u2068z\u2069", "xyz"},
		{"bom", "\ufeffstart", "start"},
		{"tag characters", "hi\U000E0041\U000E0042", "hi"},
		{"variation selector supplement", "a\U000E0100b", "ab"},
		{"soft hyphen and word joiner", "co\u00adop\u2060x", "coopx"},
		{"c0 and c1 controls", "a\x00b\x1bc\u0085d\x7f", "abcd"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sanitize(tt.in); got != tt.want {
				t.Fatalf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeValueCleansNestedStringsAndKeys(t *testing.T) {
	in := map[string]any{"ti\u202etle": "x\u200by", "list": []any{"a\u2066b", 1.0}, "n": map[string]any{"k": "\ufeffv"}}
	got := sanitizeValue(in).(map[string]any)
	if got["title"] != "xy" || got["list"].([]any)[0] != "ab" || got["n"].(map[string]any)["k"] != "v" {
		t.Fatalf("got %#v", got)
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("word ", 100)
	s := snippet(text, 50)
	if n := utf8.RuneCountInString(s); n > 51 {
		t.Fatalf("snippet has %d characters", n)
	}
	if !strings.HasSuffix(s, "…") || strings.Contains(s, "  ") {
		t.Fatalf("snippet = %q", s)
	}
	if got := snippet("short\n\ntext", 50); got != "short text" {
		t.Fatalf("got %q", got)
	}
	// Multi-byte text is cut on rune boundaries.
	if got := snippet(strings.Repeat("日本", 100), 7); !utf8.ValidString(got) || utf8.RuneCountInString(got) != 8 {
		t.Fatalf("got %q", got)
	}
}

func TestStripTitlePrefix(t *testing.T) {
	if got := stripTitlePrefix("Document Title: a.md\n\nText: body"); got != "body" {
		t.Fatalf("got %q", got)
	}
	if got := stripTitlePrefix("body"); got != "body" {
		t.Fatalf("got %q", got)
	}
}

func TestCapText(t *testing.T) {
	s := strings.Repeat("ü", 1000) // 2000 bytes
	got := capText(s, 500)
	if len(got) > 500 || !utf8.ValidString(got) || !strings.Contains(got, "[Output truncated: it exceeded 500 bytes") {
		t.Fatalf("len %d, valid %v: %q", len(got), utf8.ValidString(got), got[len(got)-120:])
	}
	if capText("short", 500) != "short" {
		t.Fatal("short text changed")
	}
}

func TestReassembleRemovesOverlap(t *testing.T) {
	a := "The ledger is the source of truth for every balance in the system. "
	b := "every balance in the system. Payouts read from it nightly."
	c := "Completely separate paragraph without overlap at all here."
	chunks := []r2r.Chunk{
		{Text: c, Metadata: map[string]any{"chunk_order": 2.0}},
		{Text: a, Metadata: map[string]any{"chunk_order": 0.0}},
		{Text: b, Metadata: map[string]any{"chunk_order": 1.0}},
	}
	sortChunks(chunks)
	got := reassemble(chunks)
	want := "The ledger is the source of truth for every balance in the system. Payouts read from it nightly.\n\n" + c
	if got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestIngestionProgressIsMonotonic(t *testing.T) {
	flow := []string{r2r.IngestionPending, r2r.IngestionParsing, r2r.IngestionAugment, r2r.IngestionEmbedding,
		r2r.IngestionStoring, r2r.IngestionSuccess}
	prev := -1.0
	for _, s := range flow {
		p := ingestionProgress(s)
		if p <= prev || p < 0 || p > 1 {
			t.Fatalf("progress(%s) = %v after %v", s, p, prev)
		}
		prev = p
	}
	if ingestionProgress(r2r.IngestionSuccess) != 1 {
		t.Fatal("success must be 1")
	}
}
