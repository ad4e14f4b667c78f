package tools

import (
	"regexp"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestShortDocumentIDs: the 8-character id a search line shows ("doc e5156baf") reads the
// document with r2r_get_document and r2r_monitor_task; an id no result showed, or one that
// is ambiguous, gets an error that says what to pass instead.
func TestShortDocumentIDs(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	var io IngestOutput
	structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"}), &io)

	short := io.DocumentID[:8]
	if _, info := e.fail("r2r_get_document", map[string]any{"document_id": short}); !strings.Contains(info.Message, "matches no document this session has shown") {
		t.Fatalf("before any search: %+v", info)
	}
	found := text(e.ok("r2r_search", map[string]any{"query": "payouts"}))
	m := regexp.MustCompile(`doc ([0-9a-f]{8})`).FindStringSubmatch(found)
	if m == nil || m[1] != short {
		t.Fatalf("search text shows no short id %s:\n%s", short, found)
	}
	for _, tool := range []string{"r2r_get_document", "r2r_monitor_task"} {
		for _, id := range []string{short, short[:7], strings.ToUpper(short)} {
			res := e.ok(tool, map[string]any{"document_id": id})
			var out struct {
				DocumentID string `json:"document_id"`
			}
			structured(t, res, &out)
			if out.DocumentID != io.DocumentID {
				t.Errorf("%s %q read %q, want %s", tool, id, out.DocumentID, io.DocumentID)
			}
		}
	}

	e.deps.shown.remember(short + "-0000-4000-8000-000000000000")
	if _, info := e.fail("r2r_get_document", map[string]any{"document_id": short}); !strings.Contains(info.Message, "is ambiguous") ||
		!strings.Contains(info.Message, io.DocumentID) {
		t.Fatalf("ambiguous: %+v", info)
	}
	for _, bad := range []string{"abc", "not-a-hex-id", "zzzzzzzz"} {
		if _, info := e.fail("r2r_get_document", map[string]any{"document_id": bad}); info.Code != toolerr.CodeInvalidParams {
			t.Errorf("%q: %+v", bad, info)
		}
	}
}

func TestShownIDsBounded(t *testing.T) {
	var s shownIDs
	for i := range maxShownIDs + 10 {
		s.remember(strings.Repeat("0", 28) + sprintf8(i))
	}
	if n := len(s.order); n != maxShownIDs || len(s.set) != maxShownIDs {
		t.Fatalf("%d ids kept, want %d", n, maxShownIDs)
	}
	if got := s.matching(strings.Repeat("0", 28) + sprintf8(0)); got != nil {
		t.Errorf("the oldest id was kept: %v", got)
	}
}

func sprintf8(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("00000000")
	for j := 7; j >= 0 && i > 0; j-- {
		b[j] = hex[i%16]
		i /= 16
	}
	return string(b)
}
