package chunking

import (
	"strings"
	"testing"
)

// Source files reach the index whole as r2r-mcp's own chunks, whatever R2R would parse them
// as: R2R 3.6.6's .py/.js/.ts parsers keep an outline and drop every function body, so a
// constant or an error message inside a body would never be searchable.
func TestForSendsSourceFilesAsOwnChunks(t *testing.T) {
	for _, tc := range []struct {
		file, body, want string
		asText           bool
	}{
		{"pkg/cache.py", "def put(self, v):\n    if size > maxsize:\n        raise ValueError(\"value too large\")\n", `raise ValueError("value too large")`, false},
		{"lib/parse.js", "var parse = function (str) {\n    throw new RangeError('Input depth exceeded');\n};\n", "throw new RangeError('Input depth exceeded');", false},
		{"src/a.ts", "export function f(): number {\n  const LIMIT = 1024;\n  return LIMIT;\n}\n", "const LIMIT = 1024;", false},
		{"main.go", "package main\n\nfunc f() {\n\tpanic(\"boom\")\n}\n", `panic("boom")`, true},
	} {
		chunks := For(tc.file, []byte(tc.body), tc.asText)
		if !strings.Contains(strings.Join(chunks, "\n"), tc.want) {
			t.Errorf("For(%s) = %q, want chunks holding %q", tc.file, chunks, tc.want)
		}
	}
	if got := For("doc.pdf", []byte("%PDF-1.4"), false); got != nil {
		t.Errorf("For(doc.pdf) = %q, want nil: R2R parses it", got)
	}
	if got := For("a.py", []byte("x = '\xff'\n"), false); got != nil {
		t.Errorf("For(invalid UTF-8 .py) = %q, want nil", got)
	}
}
