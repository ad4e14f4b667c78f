package tools

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// readAnalytics reads r2r://analytics through its handler.
func readAnalytics(t *testing.T, e *env) analytics.Report {
	t.Helper()
	for _, r := range Resources(e.deps) {
		if r.Resource.URI != AnalyticsURI {
			continue
		}
		out, err := r.Handler(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: AnalyticsURI}})
		if err != nil {
			t.Fatal(err)
		}
		var rep analytics.Report
		if err := json.Unmarshal([]byte(out[0].(mcp.TextResourceContents).Text), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	t.Fatal("no r2r://analytics resource")
	return analytics.Report{}
}

// Searches and questions are recorded per project: the one that found nothing is a gap
// with its count (the same question asked twice in other words counts twice), the
// document found is among the most returned; with analytics off nothing is written.
func TestAnalyticsRecordsGaps(t *testing.T) {
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "on", false: "off"}[on]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir() + "/analytics"
			var rec *analytics.Recorder
			if on {
				rec = analytics.NewRecorder(&analytics.FileStore{Dir: dir}, nil)
				t.Cleanup(func() { rec.Close(context.Background()) })
			}
			e := newEnv(t, withDeps(func(d *Deps) { d.Analytics = rec }))
			e.write("docs/ledger.md", ledgerDoc)
			e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/ledger.md", "run_async": false})
			e.ok("r2r_search", map[string]any{"query": "ledger double-entry"})
			for _, q := range []string{"Zebra quasar teleport?", "zebra  QUASAR teleport"} {
				if o := decode[SearchOutput](t, e.ok("r2r_search", map[string]any{"query": q,
					"filters": map[string]any{"document_type": map[string]any{"$eq": "pdf"}}})); o.Count != 0 {
					t.Fatalf("%q found %d documents", q, o.Count)
				}
			}
			rep := readAnalytics(t, e)
			if !on {
				if rep.Note != AnalyticsOff || rep.Searches != 0 {
					t.Errorf("off: %+v", rep)
				}
				if _, err := os.Stat(dir); err == nil {
					t.Error("analytics off wrote the analytics directory")
				}
				return
			}
			if rep.Searches != 3 || len(rep.Gaps) != 1 || rep.Gaps[0].Query != "zebra quasar teleport" || rep.Gaps[0].Asked != 2 || rep.Gaps[0].Nothing != 2 {
				t.Fatalf("report %+v", rep)
			}
			if len(rep.TopDocuments) == 0 || rep.TopDocuments[0].Title != "docs/ledger.md" {
				t.Errorf("documents %+v", rep.TopDocuments)
			}
			if rep.Project != "demo-app" || !strings.Contains(rep.Note, "r2r-mcp analytics") {
				t.Errorf("project %q note %q", rep.Project, rep.Note)
			}
		})
	}
}
