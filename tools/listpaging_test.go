package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestListDocumentsPastTheEnd: a page past the end of a collection says how many documents
// there are and where the last page starts, not that the collection is empty. R2R answers
// such a page with total 0 (conformance test documents/list_pagination_total).
func TestListDocumentsPastTheEnd(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		e.write(fmt.Sprintf("docs/%d.md", i), fmt.Sprintf("# Doc %d\n\nText %d.", i, i))
		e.ok("r2r_ingest_document", map[string]any{"file_path": fmt.Sprintf("docs/%d.md", i)})
	}
	for _, tc := range []struct {
		args      map[string]any
		want      string
		lastStart int
	}{
		{map[string]any{"offset": 100}, "has 3 documents", 0},
		{map[string]any{"offset": 5, "limit": 2}, "has 3 documents", 2},
		{map[string]any{"offset": 3, "limit": 1, "status_filter": "success"}, "has 3 success documents", 2},
	} {
		res := e.ok("r2r_list_documents", tc.args)
		var o ListDocumentsOutput
		structured(t, res, &o)
		next := fmt.Sprintf("offset=%d", tc.lastStart)
		if o.Total != 3 || len(o.Documents) != 0 || !strings.Contains(o.Note, "past the end") || !strings.Contains(o.Note, next) {
			t.Errorf("%v: %+v", tc.args, o)
		}
		if txt := text(res); !strings.Contains(txt, "past the end") || !strings.Contains(txt, tc.want) ||
			!strings.Contains(txt, next) || strings.Contains(txt, "no documents") {
			t.Errorf("%v: %s", tc.args, txt)
		}
	}
}
