package tools

import (
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestSyncJobSharesBeforeWaking: a change reaches onChange (the shared store other replicas
// read) before a caller waiting for it is woken, so one told "done" by this replica finds
// "done" on another.
func TestSyncJobSharesBeforeWaking(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*syncJob)
	}{
		{"plan", func(j *syncJob) { j.setPlan(&kbsync.Plan{}) }},
		{"progress", func(j *syncJob) { j.report(kbsync.Progress{Done: 1, Total: 2}) }},
		{"finish", func(j *syncJob) { j.finish(&kbsync.Summary{}, nil, time.Now()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, _ := newSyncJobs().start(t.TempDir(), time.Now())
			waiting := job.snapshot().Changed
			shared := false
			job.onChange = func() {
				shared = true
				select {
				case <-waiting:
					t.Error("a waiting caller was woken before the change was shared")
				default:
				}
			}
			tc.change(job)
			if !shared {
				t.Fatal("onChange was not called")
			}
			select {
			case <-waiting:
			default:
				t.Error("the waiting caller was not woken")
			}
		})
	}
}
