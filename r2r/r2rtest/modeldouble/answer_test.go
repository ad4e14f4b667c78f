package modeldouble

import (
	"reflect"
	"testing"
)

func TestParseRAGPrompt(t *testing.T) {
	ctx := r2rContext("1a2b3c4", "### Query: inside a chunk", "9f8e7d6", "text")
	tests := []struct {
		name, prompt, query, context string
		ok                           bool
	}{
		{"r2r template", ragPrompt("What is X?", ctx), "What is X?", ctx, true},
		{"empty context", ragPrompt("q", ""), "q", "", true},
		{"query only after the context", "### Context:\nSource ID [1a2b3c4]:\nfoo\n\n### Query:\nbar\n\nREMINDER", "bar", "Source ID [1a2b3c4]:\nfoo", true},
		{"ends at the response marker", "### Query:\nq\n### Context:\nctx\n## Response:", "q", "ctx", true},
		{"no context", "### Query:\nq", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, c, ok := parseRAGPrompt(tt.prompt)
			if q != tt.query || c != tt.context || ok != tt.ok {
				t.Errorf("parseRAGPrompt = %q, %q, %v; want %q, %q, %v", q, c, ok, tt.query, tt.context, tt.ok)
			}
		})
	}
}

func TestParseSources(t *testing.T) {
	tests := []struct {
		name, context string
		want          []source
	}{
		{"chunks", r2rContext("1a2b3c4", "line one\nline two", "abcd1234", "x"), []source{{"1a2b3c4", "line one\nline two"}, {"abcd1234", "x"}}},
		{"sections and an empty source", "Vector Search Results:\nSource ID [1a2b3c4]:\n\nGraph Search Results:\nSource ID [2b3c4d5]:\nEntity Name: Payouts\nDescription: d", []source{{"2b3c4d5", "Entity Name: Payouts\nDescription: d"}}},
		{"no ids", "just text", []source{{"", "just text"}}},
		{"too short an id is text", "Source ID [abc]:\nfoo", []source{{"", "Source ID [abc]:\nfoo"}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseSources(tt.context); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseSources = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"One. Two!  Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"a.b is one. Line\nbreak", []string{"a.b is one.", "Line", "break"}},
		{"  \n\n ", nil},
		{"Ünï. ok", []string{"Ünï.", "ok"}},
	}
	for _, tt := range tests {
		if got := sentences(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("sentences(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"The Documents' queries, and a class!", []string{"document", "query", "class"}},
		{"the of and", []string{"the", "of", "and"}},
		{"...", []string{}},
	}
	for _, tt := range tests {
		if got := terms(tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestTruncateWords(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"a b c", 0, "a b c", false},
		{"a b c", 3, "a b c", false},
		{"a b c [1a2b3c4]", 3, "a b c", true},
	}
	for _, tt := range tests {
		if got, cut := truncateWords(tt.s, tt.n); got != tt.want || cut != tt.cut {
			t.Errorf("truncateWords(%q, %d) = %q, %v", tt.s, tt.n, got, cut)
		}
	}
}
