package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestIngestAndMonitorAStuckIngestion: R2R never finishes an ingestion (as after it stopped
// in the middle of one; the emulator's steps take an hour here, on a fake clock shared with
// the server). Ingesting the same file again sends nothing and says so (no "older version"
// that does not exist); r2r_monitor_task says "check again" while the ingestion is young,
// "stuck" with the way out after kbsync.SlowAfter, "dead" after kbsync.DeadAfter; an
// ingest then deletes the dead document and sends the file again.
func TestIngestAndMonitorAStuckIngestion(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 26, 14, 0, 0, 0, time.UTC)}
	e := newEnv(t, withEmulator(r2rtest.Options{IngestDelay: time.Hour, Clock: clock.now}),
		withDeps(func(d *Deps) { d.Now = clock.now }))
	e.write("docs/a.md", "# Ledger\n\nThe walrus ledger balances.")
	ingest := func() IngestOutput {
		t.Helper()
		var o IngestOutput
		structured(t, e.ok("r2r_ingest_document", map[string]any{"file_path": "docs/a.md"}), &o)
		return o
	}
	monitor := func(id string) (MonitorOutput, string) {
		t.Helper()
		res := e.ok("r2r_monitor_task", map[string]any{"document_id": id})
		var o MonitorOutput
		structured(t, res, &o)
		return o, text(res)
	}

	first := ingest()
	if first.Status != "pending" || !first.Sent || first.OldKept {
		t.Fatalf("first = %+v", first)
	}
	if m, txt := monitor(first.DocumentID); m.Stuck || !strings.Contains(txt, "check again") {
		t.Fatalf("young: %+v %s", m, txt)
	}

	again := ingest()
	if again.Status != "pending" || again.Sent || again.OldKept || !strings.Contains(again.Message, "nothing was sent") ||
		strings.Contains(again.Message, "Uploaded") || strings.Contains(again.Message, "older version") {
		t.Fatalf("again = %+v", again)
	}

	clock.add(kbsync.SlowAfter + time.Minute)
	stuck := ingest()
	if stuck.Status != "stuck" || stuck.Sent || stuck.Started == "" || !strings.Contains(stuck.Message, "looks stuck") ||
		!strings.Contains(stuck.Message, "r2r_delete_document") || strings.Contains(stuck.Message, "older version") {
		t.Fatalf("stuck = %+v", stuck)
	}
	if m, txt := monitor(first.DocumentID); !m.Stuck || !strings.Contains(txt, "looks stuck") || strings.Contains(txt, "check again") {
		t.Fatalf("stuck monitor: %+v %s", m, txt)
	}

	clock.add(kbsync.DeadAfter)
	if m, txt := monitor(first.DocumentID); !m.Stuck || !strings.Contains(txt, "is dead") || !strings.Contains(txt, "Ingest the file again") {
		t.Fatalf("dead monitor: %+v %s", m, txt)
	}
	resent := ingest()
	if resent.Status != "pending" || !resent.Sent || !resent.Resent || resent.DocumentID != first.DocumentID ||
		!strings.Contains(resent.Message, "sent again") {
		t.Fatalf("resent = %+v", resent)
	}
	if m, txt := monitor(first.DocumentID); m.Stuck || !strings.Contains(txt, "check again") {
		t.Fatalf("after the resend: %+v %s", m, txt)
	}
}
