package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestErrorClassOfModel: a model R2R cannot call makes R2R answer 500 (conformance test
// TestLive/rag/unserved_model), but the caller's argument caused it: the result is the
// caller's error (-32602) with the next step, not "a problem inside R2R". Without a model
// argument, the same 500 stays R2R's.
func TestErrorClassOfModel(t *testing.T) {
	e := newEnv(t)
	e.write("a.md", ledgerDoc)
	e.ok("r2r_ingest_document", map[string]any{"file_path": "a.md"})
	for _, model := range []string{"nonexistent/bogus-model", "anthropic/claude-none"} {
		_, info := e.fail("r2r_rag_query", map[string]any{"question": "payouts?", "model": model})
		if info.Type != "invalid_params" || info.Code != toolerr.CodeInvalidParams || info.Retryable || info.Status != 500 ||
			!strings.Contains(info.Message, model) || !strings.Contains(info.Message, "Omit model") ||
			strings.Contains(info.Message, "inside R2R") {
			t.Errorf("model %s: %+v", model, info)
		}
	}
	e.ok("r2r_rag_query", map[string]any{"question": "payouts?", "model": "openai/gpt-4.1-mini"})
}

// TestSyncStatusWithoutJobIsInvalidParams: asking for a sync job the server does not know
// is the caller's error, with a type that agrees with its code.
func TestSyncStatusWithoutJobIsInvalidParams(t *testing.T) {
	e := newEnv(t)
	for _, args := range []map[string]any{{}, {"job_id": "01234567-89ab-4def-8123-456789abcdef"}} {
		_, info := e.fail("r2r_sync_status", args)
		if info.Type != "invalid_params" || info.Code != toolerr.CodeInvalidParams || !strings.Contains(info.Message, "Start one with r2r_sync") {
			t.Errorf("%v: %+v", args, info)
		}
	}
}

// TestStatusCountsLimitedTools: resource reads have a rate limit of their own but are no
// tool: the status counts the tools as many as there are.
func TestStatusCountsLimitedTools(t *testing.T) {
	e := newEnv(t, withDeps(func(d *Deps) { d.RateLimit, d.RAGRateLimit = defaultConfig().RateLimit, defaultConfig().RAGRateLimit }))
	out := text(e.ok("r2r_status", nil))
	want := fmt.Sprintf("Rate limits: %d tools and resource reads limited,", len(e.list))
	if !strings.Contains(out, want) {
		t.Fatalf("want %q in:\n%s", want, out)
	}
}
