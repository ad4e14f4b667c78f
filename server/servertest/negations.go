package servertest

import (
	_ "embed"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// Caller makes one tool call over some transport and returns its answer.
type Caller func(tool string, args map[string]any) LooseOutcome

//go:embed testdata/negations.json
var negationsJSON []byte

// negationTable is testdata/negations.json: argument names that negate or qualify a
// destructive argument of the sync tool (prune) or of the delete tool (document_id), as
// models send them, and the names of the tools the check calls.
type negationTable struct {
	Tools struct {
		Sync       string `json:"sync"`
		SyncStatus string `json:"sync_status"`
		List       string `json:"list"`
		Get        string `json:"get"`
		Delete     string `json:"delete"`
	} `json:"tools"`
	Sync   []string `json:"sync"`
	Delete []string `json:"delete"`
}

var negations = func() (n negationTable) {
	if err := json.Unmarshal(negationsJSON, &n); err != nil {
		panic("servertest: testdata/negations.json: " + err.Error())
	}
	return n
}()

// CheckNegationsDeleteNothing syncs the directory syncArgs name (none: the project) into
// the collection they name, then runs remove, which takes a synced file away. Each call
// with an argument name of testdata/negations.json must then be an invalid-arguments error
// naming that argument and must not reach R2R's delete routes; the delete tool gets the id
// of a synced document. Last, prune: true must delete the removed file's document, so that a
// deletion would have been seen.
func CheckNegationsDeleteNothing(t testing.TB, transport string, call Caller, emu *r2rtest.Server,
	syncArgs map[string]any, remove func()) {
	t.Helper()
	if len(negations.Sync) == 0 || len(negations.Delete) == 0 || negations.Tools.Sync == "" {
		t.Fatal("testdata/negations.json names no tool or argument")
	}
	with := func(extra map[string]any) map[string]any {
		m := maps.Clone(syncArgs)
		maps.Copy(m, extra)
		return m
	}
	runSync(t, transport, call, with(nil))
	listArgs := map[string]any{}
	if c, ok := syncArgs["collection_id"]; ok {
		listArgs["collection_id"] = c
	}
	tl := negations.Tools
	list := call(tl.List, listArgs)
	docs, _ := list.Structured["documents"].([]any)
	if list.IsError || len(docs) == 0 {
		t.Fatalf("%s: r2r_list_documents after the sync: %s", transport, list.Text)
	}
	doc, _ := docs[0].(map[string]any)["document_id"].(string)
	remove()

	deletes := func() int {
		return emu.Count("DELETE /v3/documents/{id}") + emu.Count("DELETE /v3/documents/by-filter") +
			emu.Count("DELETE /v3/collections/{id}/documents/{document_id}")
	}
	before := deletes()
	for _, name := range negations.Sync {
		o := call(tl.Sync, with(map[string]any{name: true}))
		if job, _ := o.Structured["job_id"].(string); job != "" {
			waitSync(t, transport, call, job) // a sync that should not have started: let it finish its damage
		}
		checkUnknown(t, transport, tl.Sync, name, o)
	}
	for _, name := range negations.Delete {
		checkUnknown(t, transport, tl.Delete, name, call(tl.Delete, map[string]any{name: doc}))
	}
	if n := deletes() - before; n != 0 {
		t.Errorf("%s: %d delete requests reached R2R", transport, n)
	}
	if got := call(tl.Get, map[string]any{"document_id": doc}); got.IsError {
		t.Errorf("%s: document %s is gone: %s", transport, doc, got.Text)
	}

	res := runSync(t, transport, call, with(map[string]any{"prune": true}))
	if res["deleted"] != 1.0 || deletes() == before {
		t.Errorf("%s: prune: true deleted %v (%d requests), want the removed file's document", transport, res["deleted"], deletes()-before)
	}
}

// checkUnknown fails t unless o is an invalid-arguments error naming the argument name.
func checkUnknown(t testing.TB, transport, tool, name string, o LooseOutcome) {
	t.Helper()
	if want := `unknown argument "` + name + `"`; !o.IsError || o.ErrorType != "invalid_params" || !strings.Contains(o.Text, want) {
		t.Errorf("%s %s %q: got error %v (%s) %q, want invalid_params with %q", transport, tool, name, o.IsError, o.ErrorType, o.Text, want)
	}
}

// runSync starts r2r_sync with args and returns the result of its finished job.
func runSync(t testing.TB, transport string, call Caller, args map[string]any) map[string]any {
	t.Helper()
	o := call(negations.Tools.Sync, args)
	job, _ := o.Structured["job_id"].(string)
	if o.IsError || job == "" {
		t.Fatalf("%s: r2r_sync %v: %s", transport, args, o.Text)
	}
	return waitSync(t, transport, call, job)
}

// waitSync waits for the sync job to end (r2r_sync_status waits up to 10 s a call) and
// returns its result.
func waitSync(t testing.TB, transport string, call Caller, job string) map[string]any {
	t.Helper()
	for range 12 {
		o := call(negations.Tools.SyncStatus, map[string]any{"job_id": job, "wait_seconds": 10})
		if o.IsError {
			t.Fatalf("%s: r2r_sync_status: %s", transport, o.Text)
		}
		if o.Structured["state"] != "running" {
			res, _ := o.Structured["result"].(map[string]any)
			return res
		}
	}
	t.Fatalf("%s: sync job %s still running after 2 minutes", transport, job)
	return nil
}
