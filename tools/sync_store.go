package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// SyncJobStore keeps the state of sync jobs outside the process, so that r2r_sync_status on
// any replica of serve --http reports a job another replica runs (Redis). A key names the
// job and the identity of the user who started it, so a job id alone never reaches another
// user's job; a state is JSON. Its errors fall back to this process's memory.
type SyncJobStore interface {
	// PutSyncJob stores state under key for ttl after this write.
	PutSyncJob(key string, state []byte, ttl time.Duration) error
	// SyncJob returns the state under key; nil (and no error) when there is none.
	SyncJob(key string) ([]byte, error)
}

// syncJobTTL is how long a stored job's state is kept after its last change.
const syncJobTTL = 24 * time.Hour

// storedSyncPoll is how often a job run by another replica is read again while
// r2r_sync_status waits for it.
const storedSyncPoll = 500 * time.Millisecond

// syncJobKey is the SyncJobStore key of job id of the user d acts for.
func (d *Deps) syncJobKey(id string) string { return d.Client.Identity() + "\x00" + id }

// publishSync writes job's state to d.SyncJobs, when set. A failure is logged: the job's
// own replica still answers from memory.
func (d *Deps) publishSync(job *syncJob) {
	if d.SyncJobs == nil {
		return
	}
	state, err := json.Marshal(statusOf(job, job.snapshot()))
	if err == nil {
		err = d.SyncJobs.PutSyncJob(d.syncJobKey(job.ID), state, syncJobTTL)
	}
	if err != nil {
		d.logger().Debug("sync job state not shared", "job_id", job.ID, "error", err)
	}
}

// storedSyncStatus reads job id of d's user from d.SyncJobs, waiting up to wait for a
// running job to finish; ok is false when the store is absent, fails or has no such job.
func (d *Deps) storedSyncStatus(ctx context.Context, id string, wait time.Duration) (o SyncStatusOutput, ok bool) {
	if d.SyncJobs == nil || id == "" {
		return o, false
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		state, err := d.SyncJobs.SyncJob(d.syncJobKey(id))
		if err != nil || state == nil {
			if err != nil {
				d.logger().Debug("shared sync job state unavailable", "job_id", id, "error", err)
			}
			return o, ok // the last state read, if any
		}
		if err := json.Unmarshal(state, &o); err != nil || o.JobID != id {
			return SyncStatusOutput{}, false
		}
		ok = true
		if o.State != jobRunning || wait <= 0 {
			return o, true
		}
		select {
		case <-ctx.Done():
			return o, true
		case <-deadline.C:
			return o, true
		case <-time.After(storedSyncPoll):
		}
	}
}

// syncTarget is what one r2r_sync call syncs: the project over stdio, a directory inside
// an --allow-dir root on the server host over HTTP.
type syncTarget struct {
	project project.Project // its Name is the documents' project
	root    string          // real path of the project root or of the --allow-dir root; the job and lock key
	dir     string          // the directory synced inside root; "" = root
	source  string          // kbsync.Scope.Root of the documents written
}

// syncTargetOf resolves the target of r2r_sync with the directory argument dir ("" =
// none); the result is the refusal when there is none.
func (d *Deps) syncTargetOf(ctx context.Context, dir string) (syncTarget, *mcp.CallToolResult) {
	if d.Projects.Remote() {
		return d.remoteSyncTarget(dir)
	}
	if dir != "" {
		return syncTarget{}, invalidArgs(fmt.Errorf("directory applies only over HTTP (serve --http); here r2r_sync syncs the current project: omit it"))
	}
	pr, err := d.Projects.Project(ctx)
	if err != nil {
		return syncTarget{}, d.scopes.projectErrorResult(ctx, err)
	}
	root, err := confine.RealPath(pr.Root)
	if err != nil || project.NotAProject(pr.Root) {
		return syncTarget{}, refusal(confine.Outside, fmt.Sprintf("Not synced: the project root %s is your home directory or the file-system root "+
			"(or cannot be read). Start your MCP client in a project directory, or pass --project-dir.", pr.Root))
	}
	return syncTarget{project: pr, root: root}, nil
}

// remoteSyncTarget is syncTargetOf on a server without a local project: dir must be an
// absolute path on the server host inside one of its --allow-dir roots. The documents are
// tagged with that root, as r2r_ingest_document tags the files it reads from one, and
// their project is the root's base name.
func (d *Deps) remoteSyncTarget(dir string) (syncTarget, *mcp.CallToolResult) {
	roots := d.Projects.RootsOf(project.Project{})
	if len(roots) == 0 || dir == "" || !filepath.IsAbs(dir) {
		return syncTarget{}, refusal(confine.Outside, "Not synced: over HTTP, r2r_sync syncs a directory on the server host, inside a directory "+
			"its operator opened with --allow-dir, named by absolute path in directory.")
	}
	real, err := confine.RealPath(dir)
	if err != nil {
		return syncTarget{}, refusal(confine.Missing, fmt.Sprintf("Not synced: %s cannot be read on the server host.", Sanitize(dir)))
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return syncTarget{}, refusal(confine.Missing, fmt.Sprintf("Not synced: %s is not a directory on the server host; "+
			"to send one file use r2r_ingest_document.", Sanitize(dir)))
	}
	for _, r := range roots {
		root, err := confine.RealPath(r)
		if err != nil || !confine.Within(root, real) {
			continue
		}
		t := syncTarget{project: project.Project{Name: filepath.Base(root), Root: root}, root: root,
			source: "extra:" + uuid.NewSHA1(kbsync.DocumentNamespace, []byte(root)).String()[:8]}
		if pr, ok, err := d.Projects.RepositoryIn(root, real); err != nil {
			return syncTarget{}, configError("Not synced: " + Sanitize(err.Error()))
		} else if ok {
			// A repository is synced as its own clone would be: the same project, paths
			// and titles, and its .r2r-mcp.json's collection.
			t = syncTarget{project: pr, root: pr.Root}
		}
		if real != t.root {
			t.dir = real
		}
		return t, nil
	}
	return syncTarget{}, refusal(confine.Outside, fmt.Sprintf("Not synced: %s is outside every directory the operator opened with --allow-dir.", Sanitize(dir)))
}
