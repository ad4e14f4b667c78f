package tools

import (
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestIngestEmptyFile: r2r_ingest_document on a file with no text (empty, or whitespace
// only) is refused as the ingest rules word it — what is wrong and what to do, type
// empty_file — with nothing sent, not with R2R's or the request encoder's message.
func TestIngestEmptyFile(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ path, content string }{
		{"pkg/py.typed", ""}, // sent as text: was an empty raw_text
		{"pkg/__init__.py", ""},
		{"docs/empty.md", ""},
		{"docs/blank.md", " \n\t\n"},
		{"go.sum", "\n"},
	} {
		t.Run(c.path, func(t *testing.T) {
			e.write(c.path, c.content)
			_, info := e.fail("r2r_ingest_document", map[string]any{"file_path": c.path})
			if info.Type != confine.Empty || info.Code != toolerr.CodeInvalidParams || !strings.HasPrefix(info.Message, "Not ingested: "+c.path+" is empty") ||
				!strings.Contains(info.Message, "Write its content") {
				t.Errorf("info = %+v, want type %s naming the file and the next step", info, confine.Empty)
			}
		})
	}
	if n := e.r2r.Count("POST /v3/documents"); n != 0 {
		t.Errorf("%d uploads reached R2R", n)
	}
}
