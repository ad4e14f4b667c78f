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

// TestSyncToolCountsEmptyFiles: r2r_sync's plan and r2r_sync_status's result count the
// files with no text as empty, in both forms; none is refused or failed.
func TestSyncToolCountsEmptyFiles(t *testing.T) {
	e := newEnv(t, withSyncState(t))
	e.write("a.md", "# A\n\nalpha")
	e.write("pkg/py.typed", "")
	e.write("docs/blank.md", " \n")
	var o SyncOutput
	res := e.ok("r2r_sync", map[string]any{})
	structured(t, res, &o)
	if o.Plan.Empty != 2 || o.Plan.Upload != 1 || o.Plan.Refused != 0 || !strings.Contains(text(res), "2 empty (not sent)") {
		t.Fatalf("plan %+v: %s", o.Plan, text(res))
	}
	var st SyncStatusOutput
	for st.State != jobDone {
		e.r2r.StepIngestion()
		res = e.ok("r2r_sync_status", map[string]any{"job_id": o.JobID, "wait_seconds": 1})
		structured(t, res, &st)
		if st.State == jobFailed {
			t.Fatalf("sync failed: %s", text(res))
		}
	}
	if st.Result == nil || st.Result.Empty != 2 || st.Result.Uploaded != 1 || st.Result.Failed != 0 || !strings.Contains(text(res), "2 empty file(s) not sent") {
		t.Errorf("result %+v: %s", st.Result, text(res))
	}
}
