package chunking

import (
	"strings"
	"testing"
)

const goSource = `// Package mw has middlewares.
package mw

import "net/http"

const (
	errCapacityExceeded = "Server capacity exceeded."
	errTimedOut         = "Timed out while waiting."
)

// Throttle is a middleware that limits the number of requests processed at a time.
// It answers 429 when the backlog is full, and keeps a request waiting at most sixty
// seconds before giving up on it, so that a burst does not pile up without bound.
func Throttle(limit int) func(http.Handler) http.Handler {
	if limit <= 0 {
		panic("chi/middleware: Throttle expects limit > 0")
	}
	return nil
}

type throttler struct {
	tokens chan token
}

// ServeHTTP serves one request, waiting for a token first; it writes errCapacityExceeded when
// there is none and the backlog is full, and errTimedOut when the wait is too long, so that
// a client can tell the two apart from the body alone, whatever status it reads.
func (t *throttler[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.Error(w, errCapacityExceeded, http.StatusTooManyRequests)
}
`

// Go files are cut by go/parser at declarations, each with its doc comment: a declaration
// that fills a chunk has it alone, under a context line naming the receiver type and the
// signature; small ones share a chunk under what their paths share (a type and its methods:
// the type).
func TestSplitGoDeclarations(t *testing.T) {
	big := "\n// Big fills a chunk of its own.\nfunc Big(n int) (int, error) {\n" + strings.Repeat("\tn++ // count once more\n", 20) + "\treturn n, nil\n}\n"
	chunks := Split("mw/throttle.go", goSource+big)
	for _, tc := range []struct{ context, holds string }{
		{"§ mw/throttle.go", `panic("chi/middleware: Throttle expects limit > 0")`},
		{"§ mw/throttle.go › throttler ¶", "// ServeHTTP serves one request"},
		{"§ mw/throttle.go › throttler ¶", "type throttler struct"},
		{"§ mw/throttle.go › func Big(n int) (int, error) ¶", "// Big fills a chunk of its own."},
	} {
		found := false
		for _, c := range chunks {
			line, body, _ := strings.Cut(c, "\n")
			if strings.HasPrefix(line, tc.context) && strings.Contains(body, tc.holds) {
				found = true
			}
		}
		if !found {
			t.Errorf("no chunk opens with %q and holds %q; chunks:\n%s", tc.context, tc.holds, strings.Join(chunks, "\n----\n"))
		}
	}
	// A file that does not parse is still cut, at blank lines.
	if got := Split("bad.go", "package x\n\nfunc (\n"); len(got) == 0 || !strings.Contains(got[0], "func (") {
		t.Errorf("Split(bad.go) = %q", got)
	}
}

func TestSignatureBounded(t *testing.T) {
	if got := signature("func   F(\n\ta int,\n\tb string)"); got != "func F( a int, b string)" {
		t.Errorf("signature = %q", got)
	}
	if got := []rune(signature(strings.Repeat("x", 500))); len(got) != maxSignature {
		t.Errorf("signature length %d, want %d", len(got), maxSignature)
	}
}

// A chunk of declarations that ends under minChunk characters (a constant before a function
// too long to share a chunk) joins the chunk of declarations before it when that has room,
// under what their paths share, rather than standing alone; a Markdown section never does.
func TestSplitJoinsSmallDeclarationChunk(t *testing.T) {
	first := "// First is long enough to start a chunk of its own.\nfunc First() {\n" + strings.Repeat("\tfirst++\n", 40) + "}\n"
	limit := "\n// limit bounds a segment.\nconst limit = 1024\n"
	long := "\n// Encode walks the string in segments.\nfunc Encode(s string) {\n" + strings.Repeat("\tencode(s[:limit])\n", 60) + "}\n"
	for _, tc := range []struct {
		file, text, holds string
		chunks            int
	}{
		{"enc.go", "package enc\n\n" + first + limit + long, "first++\n}\n\n// limit bounds a segment.\nconst limit = 1024", 3},
		{"enc.md", "# First\n\n" + strings.Repeat("first words ", 40) + "\n\n## Limit\n\nA segment is 1024.\n\n## Encode\n\n" + strings.Repeat("encode words ", 80), "## Limit\n\nA segment is 1024.", 4},
	} {
		chunks := Split(tc.file, tc.text)
		if len(chunks) != tc.chunks || !strings.Contains(strings.Join(chunks, "\n"), tc.holds) {
			t.Errorf("%s: %d chunks, want %d, one holding %q:\n%s", tc.file, len(chunks), tc.chunks, tc.holds, strings.Join(chunks, "\n----\n"))
		}
	}
	if got := Split("enc.go", "package enc\n\n"+first+limit+long); !strings.HasPrefix(got[0], "§ enc.go ¶1\n") {
		t.Errorf("joined chunk opens with %q, want the file alone (its declarations share no path)", strings.SplitN(got[0], "\n", 2)[0])
	}
}
