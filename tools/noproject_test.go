package tools

import (
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// TestNoProjectAdviceInHome: a server started in the home directory (where some clients
// start servers) has no project. Status, reads and the collection listing say so and how to
// pick one; none of them advise an ingest, which would be refused.
func TestNoProjectAdviceInHome(t *testing.T) {
	e := newEnv(t)
	t.Setenv("HOME", e.project)
	if !project.NotAProject(e.project) {
		t.Fatalf("NotAProject(%s) with HOME there is false", e.project)
	}
	texts := map[string]string{
		"r2r_status":           text(e.ok("r2r_status", nil)),
		"r2r_search":           text(e.ok("r2r_search", map[string]any{"query": "payouts"})),
		"r2r_list_documents":   text(e.ok("r2r_list_documents", nil)),
		"r2r_list_collections": text(e.ok("r2r_list_collections", nil)),
	}
	for tool, got := range texts {
		if !strings.Contains(got, "which is not a project") || !strings.Contains(got, "--project-dir") {
			t.Errorf("%s does not say the directory is not a project:\n%s", tool, got)
		}
		if strings.Contains(got, "r2r_ingest_document creates it") || strings.Contains(got, "ingest a file with r2r_ingest_document") {
			t.Errorf("%s advises an ingest that would be refused:\n%s", tool, got)
		}
	}
	e.write("a.md", ledgerDoc)
	if _, info := e.fail("r2r_ingest_document", map[string]any{"file_path": "a.md"}); !strings.Contains(info.Message, "does not ingest from it") {
		t.Errorf("ingest from home: %+v", info)
	}
}
