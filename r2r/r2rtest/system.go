package r2rtest

import (
	"net/http"
	"time"
)

// handleSystemStatus answers GET /v3/system/status like R2R 3.6.6: a superuser gets when
// this R2R started (Restart moves it) and its uptime; anyone else 403.
func (c *call) handleSystemStatus() {
	if !c.guard() {
		return
	}
	if !c.user.superuser {
		c.fail(http.StatusForbidden, "Only an authorized user can call the `system/status` endpoint.")
		return
	}
	e := c.e
	e.mu.Lock()
	out := map[string]any{"start_time": e.tsLocked(e.started), "uptime_seconds": e.nowLocked().Sub(e.started).Seconds(),
		"cpu_usage": 0.0, "memory_usage": 0.0}
	e.mu.Unlock()
	c.ok(out)
}

// Restart stands for R2R killed and started again on the same database: every background
// ingestion ends where it is, its document keeping the status and updated_at it had (as
// R2R 3.6.6 leaves a document whose ingestion a kill ended: TestRealIngestionCrash), and
// the start time GET /v3/system/status reports is now.
func (e *Emulator) Restart() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for j := range e.jobs {
		j.killed = true
		delete(e.jobs, j)
	}
	e.started = e.nowLocked()
}

// Started is the start time GET /v3/system/status reports.
func (e *Emulator) Started() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}
