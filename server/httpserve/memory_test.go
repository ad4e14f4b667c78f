package httpserve_test

import (
	"testing"
)

// TestMemoryIsSavedAsTheCallingUser: over serve --http a memory is saved as the user whose
// key made the call, and a teammate reading the same collection sees who saved it.
func TestMemoryIsSavedAsTheCallingUser(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
	txt, res := callText(t, c, "r2r_remember", map[string]any{"kind": "decision", "title": "Drain with marigold",
		"body": "The marigold worker drains the payout queue.", "collection_id": tm.Alice.Collection})
	if res.IsError {
		t.Fatalf("remember: %s", txt)
	}
	txt, res = callText(t, c, "r2r_recall", map[string]any{"collection_id": tm.Alice.Collection})
	mems, _ := res.StructuredContent.(map[string]any)["memories"].([]any)
	if len(mems) != 1 || mems[0].(map[string]any)["author"] != "alice" {
		t.Fatalf("recall: %s", txt)
	}
	bob := mcpClient(t, rep.URL, bearer(tm.Bob.Key))
	if txt, res := callText(t, bob, "r2r_recall", map[string]any{"collection_id": tm.Alice.Collection}); !res.IsError && len(res.StructuredContent.(map[string]any)["memories"].([]any)) > 0 {
		t.Fatalf("bob, who cannot read alice's collection, recalls her memory: %s", txt)
	}
}
