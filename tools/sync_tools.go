package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

// maxListedProblems bounds the refused and failed files a sync result lists.
const maxListedProblems = 20

// SyncOutput is the structured result of r2r_sync.
type SyncOutput struct {
	JobID          string           `json:"job_id,omitempty" desc:"id of the background sync; follow it with r2r_sync_status"`
	State          string           `json:"state" required:"true" enum:"running,planned" desc:"running: the sync goes on in the background; planned: dry run, nothing was changed"`
	DryRun         bool             `json:"dry_run" desc:"true when only the plan was made"`
	Prune          bool             `json:"prune" desc:"true when documents of files gone from the project are deleted"`
	CollectionID   string           `json:"collection_id,omitempty" desc:"the project's collection"`
	CollectionName string           `json:"collection_name,omitempty" desc:"its name"`
	Plan           SyncPlanCounts   `json:"plan" required:"true" desc:"what the sync does, in counts"`
	Refused        []kbsync.Problem `json:"refused" required:"true" desc:"syncRefusedDesc"`
	PruneSkipped   string           `json:"prune_skipped,omitempty" desc:"why nothing is pruned although prune was asked for"`
	// Team is the team's version's part of a team project's sync; the fields above are
	// then the caller's private collection's.
	Team    *SyncTeamPlan `json:"team,omitempty" desc:"team projects: what the sync does to the team's version (plan and refused are then your private collection's: your own versions)"`
	Message string        `json:"message" required:"true" desc:"what happens next"`
}

// The descriptions of the problem lists, which state the bound clipProblems keeps.
var (
	syncRefusedDesc = fmt.Sprintf("files refused by the ingest rules (at most %d listed)", maxListedProblems)
	syncFailedDesc  = fmt.Sprintf("files that failed, with R2R's reason (at most %d listed)", maxListedProblems)
	teamLeftDesc    = fmt.Sprintf("changes left to whoever may make them (at most %d listed)", maxListedProblems)
)

func syncTool(d *Deps) Tool {
	const title = "Sync the project into R2R"
	// Each transport lists the arguments it takes: only serve --http syncs a directory
	// named by the call.
	desc := "Put the whole project into the knowledge base, or refresh it after many changes: uploads new files, replaces changed ones " +
		"(by content hash), and with prune deletes documents of files that are gone. Files come from git ls-files " +
		"(tracked and untracked, not ignored) and .r2r-mcp.json include/exclude; secrets and binaries are refused. " +
		"Returns at once with a job id and the plan (dry_run only plans); follow it with r2r_sync_status."
	in := inputSchema[localSyncParams]()
	if d.Projects.Remote() {
		desc += " It syncs directory, a directory on the server host."
		in = inputSchema[syncParams]()
	}
	opts := []mcp.ToolOption{
		mcp.WithToolTitle(title),
		mcp.WithDescription(desc),
		annotations(title, false, true, true, true),
		withOutputSchema(outputSchema[SyncOutput]()),
		searchHint("sync index whole project into knowledge base"),
		in,
	}
	def := newTool("r2r_sync", opts...)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: false, Example: Example{Args: map[string]any{"dry_run": true}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p syncParams) (*mcp.CallToolResult, error) {
		return d.syncProject(ctx, p), nil
	})}
}

// syncProject plans a sync of the project into its collection; unless dryRun it runs the plan in
// the background (startSync).
func (d *Deps) syncProject(ctx context.Context, p syncParams) *mcp.CallToolResult {
	prune, dryRun := p.Prune, p.DryRun
	target, errRes := d.syncTargetOf(ctx, p.Directory)
	if errRes != nil {
		return errRes
	}
	pr, root := target.project, target.root
	if job := d.syncs.get("", root); job != nil && job.snapshot().State == jobRunning {
		return syncRunning(job)
	}
	userID, err := d.Projects.UserID(ctx, d.Client)
	if err != nil {
		return d.scopes.projectErrorResult(ctx, err)
	}
	explicit := p.CollectionID
	if explicit == "" && d.Projects.Remote() {
		explicit = pr.CollectionID // a repository's team collection, as its .r2r-mcp.json names it
	}
	s, errRes := d.scopes.resolveOf(ctx, nil, &pr, explicit, !dryRun) // sync never spans collections
	if errRes != nil {
		return errRes
	}
	if !dryRun {
		if s, errRes = d.scopes.verifyWrite(ctx, s); errRes != nil {
			return errRes
		}
	}
	scope := kbsync.Scope{CollectionID: s.ID, UserID: userID, Project: pr.Name, Root: target.source}
	var ts *upload.TeamSetup
	if s.ID == pr.CollectionID && target.source == "" {
		if ts, err = upload.TeamSync(ctx, d.Client, pr.CollectionID, pr.TeamOwner, root, scope, !dryRun); err != nil {
			return d.syncErrorResult(ctx, s, err)
		}
	}
	if ts != nil {
		scope = ts.Private
	}
	syncer, stateDir, key, err := upload.NewSyncer(upload.SyncConfig{API: d.Client, Root: root, Dir: target.dir, Prune: prune,
		StateDir: d.SyncStateDir, Poll: d.PollInterval, Scope: scope,
		OnWrite: func() { d.writes.wrote(s.ID); d.writes.wrote(scope.CollectionID); d.scopes.forgetTeamViews() }, Pending: d.pendingUploads()})
	if err != nil {
		return configError("Not synced: " + err.Error())
	}
	o := SyncOutput{DryRun: dryRun, Prune: prune, CollectionID: s.ID, CollectionName: s.Name}
	if ts != nil {
		upload.Join(syncer, ts.Team, ts.CollectionID)
		s.Name = cmp.Or(s.Name, ts.Name)
		o.CollectionName = s.Name
	}
	if dryRun {
		plan, err := syncer.Plan(ctx)
		if err != nil {
			return d.syncErrorResult(ctx, s, err)
		}
		o.State = "planned"
		o.fill(plan)
		o.Message = syncPlanText(o) + " Dry run: nothing was changed; call r2r_sync without dry_run to do it."
		return result(o.Message, o)
	}
	return d.startSync(ctx, syncer, s, root, stateDir, key, o)
}

// startSync plans the sync within the call, then runs it in the background under the
// project's cross-process lock.
func (d *Deps) startSync(ctx context.Context, syncer *kbsync.Syncer, s *scope, root, stateDir, key string, o SyncOutput) *mcp.CallToolResult {
	job, running := d.syncs.start(root, d.now())
	if running != nil {
		return syncRunning(running)
	}
	job.CollectionID, job.CollectionName = s.ID, s.Name
	job.onChange = func() { d.publishSync(job) }
	unlock, err := kbsync.Lock(stateDir, key)
	if err != nil {
		job.finish(nil, err, d.now())
		d.syncs.end(job)
		if errors.Is(err, kbsync.ErrLocked) {
			return toolerr.Result(toolerr.Info{Type: "sync_running", Code: toolerr.CodeRateLimited, Retryable: true,
				Message: "Not synced: another r2r-mcp process (an `r2r-mcp sync` or another server) is syncing this project now. Try again when it has finished."})
		}
		return internalError("Not synced: " + err.Error())
	}
	plan, err := syncer.Plan(ctx)
	if err != nil {
		unlock()
		job.finish(nil, err, d.now())
		d.syncs.end(job)
		return d.syncErrorResult(ctx, s, err)
	}
	job.setPlan(plan)
	// The run outlives this call: it keeps the call's values (credentials) but not its
	// deadline.
	bg := context.WithoutCancel(ctx)
	go func() {
		defer d.syncs.end(job)
		defer unlock()
		sum := syncer.Run(bg, plan, job.report)
		d.writes.wrote(s.ID)
		job.finish(sum, nil, d.now())
	}()
	o.JobID, o.State = job.ID, jobRunning
	o.fill(plan)
	o.Message = syncPlanText(o) + fmt.Sprintf(" Syncing in the background as job %s; follow it with r2r_sync_status.", job.ID)
	return result(o.Message, o)
}

func (o *SyncOutput) fill(p *kbsync.Plan) {
	o.Plan = planCounts(p)
	o.Refused = clipProblems(p.Refused)
	o.PruneSkipped = p.PruneSkipped
	if t := p.Team; t != nil {
		o.Team = &SyncTeamPlan{Ref: Sanitize(t.Ref), Commit: t.Commit, Upload: len(t.Upload), Replace: len(t.Replace),
			Unchanged: t.Unchanged, Retire: len(t.Delete), Empty: t.Empty, Behind: Sanitize(t.Behind)}
		if len(t.Left) > 0 {
			o.Team.Left = clipProblems(t.Left)
		}
	}
}

func clipProblems(ps []kbsync.Problem) []kbsync.Problem {
	out := make([]kbsync.Problem, 0, min(len(ps), maxListedProblems))
	for _, p := range ps[:min(len(ps), maxListedProblems)] {
		out = append(out, kbsync.Problem{Path: Sanitize(p.Path), Kind: p.Kind, Reason: Sanitize(snippet(p.Reason, 300))})
	}
	return out
}

func syncPlanText(o SyncOutput) string {
	p := o.Plan
	var b strings.Builder
	into := cmp.Or(o.CollectionName, "collection "+o.CollectionID)
	if t := o.Team; t != nil {
		fmt.Fprintf(&b, "Team's version in %s (%s at %.12s): %d to upload, %d to replace, %d unchanged, %d to retire.",
			into, t.Ref, t.Commit, t.Upload, t.Replace, t.Unchanged, t.Retire)
		if t.Behind != "" {
			b.WriteString(" Not written: " + t.Behind + ".")
		}
		for _, l := range t.Left[:min(len(t.Left), 5)] {
			fmt.Fprintf(&b, "\n- left %s: %s", l.Path, l.Reason)
		}
		b.WriteString("\n")
		into = "your private collection (your own versions, which only you see)"
	}
	fmt.Fprintf(&b, "Sync plan for %s: %d files — %d to upload, %d to replace, %d unchanged",
		into, p.Files, p.Upload, p.Replace, p.Unchanged)
	if o.Prune {
		fmt.Fprintf(&b, ", %d documents to delete", p.Delete)
	}
	if p.Empty > 0 {
		fmt.Fprintf(&b, ", %d empty (not sent)", p.Empty)
	}
	fmt.Fprintf(&b, ", %d refused.", p.Refused)
	if p.Stale > 0 {
		fmt.Fprintf(&b, " %d documents of files gone from the project are kept", p.Stale)
		if !o.Prune {
			b.WriteString(" (sync with prune to delete them)")
		}
		b.WriteString(".")
	}
	if o.PruneSkipped != "" {
		b.WriteString(" Nothing is pruned: " + Sanitize(o.PruneSkipped) + ".")
	}
	for _, r := range o.Refused[:min(len(o.Refused), 5)] {
		fmt.Fprintf(&b, "\n- refused %s: %s", r.Path, r.Reason)
	}
	return b.String()
}

func syncRunning(job *syncJob) *mcp.CallToolResult {
	v := job.snapshot()
	return toolerr.Result(toolerr.Info{Type: "sync_running", Code: toolerr.CodeRateLimited, Retryable: true,
		Message: fmt.Sprintf("Not started: sync job %s of this project is still running (%d of %d steps done). "+
			"Follow it with r2r_sync_status job_id=%s.", job.ID, v.Progress.Done, v.Progress.Total, job.ID)})
}

// syncErrorResult maps a failure to plan a sync.
func (d *Deps) syncErrorResult(ctx context.Context, s *scope, err error) *mcp.CallToolResult {
	var re *r2r.Error
	if errors.As(err, &re) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		d.scopes.forgetOn404(ctx, s, err)
		return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s))
	}
	if _, ok := errors.AsType[*kbsync.PartialCloneError](err); ok {
		return configError("Not synced: " + Sanitize(err.Error()))
	}
	return internalError("Not synced: " + Sanitize(err.Error()))
}

// SyncStatusOutput is the structured result of r2r_sync_status.
type SyncStatusOutput struct {
	JobID          string           `json:"job_id" required:"true" desc:"the sync job"`
	State          string           `json:"state" required:"true" enum:"jobStates" desc:"running, done (nothing failed) or failed"`
	CollectionID   string           `json:"collection_id" desc:"the collection synced"`
	CollectionName string           `json:"collection_name,omitempty" desc:"its name"`
	StartedAt      string           `json:"started_at" desc:"start time, RFC 3339"`
	FinishedAt     string           `json:"finished_at,omitempty" desc:"end time, RFC 3339; absent while running"`
	Done           int              `json:"done" required:"true" desc:"steps done (files uploaded or replaced, documents deleted)"`
	Total          int              `json:"total" required:"true" desc:"steps planned"`
	Progress       float64          `json:"progress" required:"true" min:"0" max:"1" desc:"done / total, from 0 to 1"`
	Plan           SyncPlanCounts   `json:"plan" required:"true" desc:"the job's plan, in counts"`
	Result         *SyncResult      `json:"result,omitempty" desc:"what the finished job did; absent while it runs"`
	Failed         []kbsync.Problem `json:"failed" required:"true" desc:"syncFailedDesc"`
	Error          string           `json:"error,omitempty" desc:"why the job failed"`
	Message        string           `json:"message" required:"true" desc:"summary and next step"`
}

// SyncResult counts what a finished sync did.
type SyncResult struct {
	Uploaded     int    `json:"uploaded" required:"true" desc:"files uploaded"`
	Replaced     int    `json:"replaced" required:"true" desc:"files whose document was replaced"`
	Unchanged    int    `json:"unchanged" required:"true" desc:"files already current"`
	Deleted      int    `json:"deleted" required:"true" desc:"files whose documents were deleted: pruned, or of files now empty"`
	Empty        int    `json:"empty" desc:"files with no text (empty or whitespace only), not sent"`
	Pending      int    `json:"pending" desc:"files sent that R2R was still ingesting at the end (their old versions are kept)"`
	Refused      int    `json:"refused" required:"true" desc:"files refused by the ingest rules"`
	Failed       int    `json:"failed" required:"true" desc:"files that failed"`
	PruneSkipped string `json:"prune_skipped,omitempty" desc:"why documents of files gone were kept although prune was asked for (those a failed file could be, or all after an incomplete scan)"`
	DurationMS   int64  `json:"duration_ms" desc:"how long the run took"`
	// Team is what a team project's sync did to the team's version; the counts above are
	// then the caller's private collection's.
	Team *SyncTeamResult `json:"team,omitempty" desc:"team projects: what the sync did to the team's version (the counts above are then your private collection's)"`
}

// maxStatusWait bounds wait_seconds, inside the default call deadline.
const maxStatusWait = 10

func syncStatusTool(d *Deps, sc *scoper) Tool {
	opts := append(readTool("Check a sync job",
		"Report the progress and result of a sync started with r2r_sync (the current project's newest when job_id is omitted). "+
			"wait_seconds waits for it to finish, with progress notifications when the request has a progress token.", outputSchema[SyncStatusOutput]()),
		searchHint("sync progress result"),
		inputSchema[syncStatusParams](),
	)
	def := newTool("r2r_sync_status", opts...)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: true, Example: Example{Args: map[string]any{}, Error: "invalid_params"}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p syncStatusParams) (*mcp.CallToolResult, error) {
		id := p.JobID
		root := ""
		if id == "" && !d.Projects.Remote() {
			pr, err := d.Projects.Project(ctx)
			if err != nil {
				return sc.projectErrorResult(ctx, err), nil
			}
			root, _ = confine.RealPath(pr.Root)
		}
		job := d.syncs.get(id, root)
		if job == nil {
			if o, ok := d.storedSyncStatus(ctx, id, time.Duration(p.WaitSeconds)*time.Second); ok {
				return result(o.Message, o), nil
			}
			what := "No sync of the current project has run in this server."
			switch {
			case id != "" && d.SyncJobs != nil:
				what = fmt.Sprintf("No sync job %s of yours is known (jobs are kept for %s after their last change).", id, syncJobTTL)
			case id != "":
				what = fmt.Sprintf("No sync job %s is known to this server (jobs are kept in memory until it restarts).", id)
			case d.Projects.Remote():
				what = "No sync of yours has run in this server; pass the job_id r2r_sync returned."
			}
			return invalidRequest(what + " Start one with r2r_sync."), nil
		}
		v := waitForJob(ctx, req, job, time.Duration(p.WaitSeconds)*time.Second)
		o := statusOf(job, v)
		return result(o.Message, o), nil
	})}
}

// waitForJob waits up to wait for job to finish, sending progress notifications.
func waitForJob(ctx context.Context, req mcp.CallToolRequest, job *syncJob, wait time.Duration) jobView {
	t := time.NewTimer(wait)
	defer t.Stop()
	last := -1
	for {
		v := job.snapshot()
		if v.Progress.Done != last && v.Progress.Total > 0 {
			last = v.Progress.Done
			notifyProgress(ctx, req, float64(v.Progress.Done)/float64(v.Progress.Total),
				fmt.Sprintf("%d of %d files synced", v.Progress.Done, v.Progress.Total))
		}
		if v.State != jobRunning || wait <= 0 {
			return v
		}
		select {
		case <-ctx.Done():
			return job.snapshot()
		case <-t.C:
			return job.snapshot()
		case <-v.Changed:
		}
	}
}

func statusOf(job *syncJob, v jobView) SyncStatusOutput {
	o := SyncStatusOutput{JobID: job.ID, State: v.State, CollectionID: job.CollectionID, CollectionName: job.CollectionName,
		StartedAt: formatTime(job.Started), FinishedAt: formatTime(v.Finished), Done: v.Progress.Done, Total: v.Progress.Total,
		Plan: v.Plan, Failed: []kbsync.Problem{}, Error: Sanitize(v.Err)}
	if o.Total > 0 {
		o.Progress = float64(o.Done) / float64(o.Total)
	} else if v.State != jobRunning {
		o.Progress = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Sync job %s: %s, %d of %d steps done.", job.ID, v.State, o.Done, o.Total)
	if s := v.Summary; s != nil {
		o.Result = &SyncResult{Uploaded: len(s.Uploaded), Replaced: len(s.Replaced), Unchanged: s.Unchanged, Deleted: len(s.Deleted), Empty: s.Empty,
			Pending: len(s.Pending), Refused: len(s.Refused), Failed: len(s.Failed), PruneSkipped: s.PruneSkipped, DurationMS: s.DurationMS,
			Team: teamResult(s.Team)}
		o.Failed = clipProblems(s.Failed)
		r := o.Result
		fmt.Fprintf(&b, " Uploaded %d, replaced %d, unchanged %d, deleted %d, pending %d, refused %d, failed %d (%.1f s).",
			r.Uploaded, r.Replaced, r.Unchanged, r.Deleted, r.Pending, r.Refused, r.Failed, float64(r.DurationMS)/1000)
		if r.Empty > 0 {
			fmt.Fprintf(&b, " %d empty file(s) not sent.", r.Empty)
		}
		if r.PruneSkipped != "" {
			b.WriteString(" Not pruned: " + Sanitize(r.PruneSkipped) + ".")
		}
		if r.Team != nil {
			b.WriteString(r.Team.text())
		}
		for _, f := range o.Failed[:min(len(o.Failed), 5)] {
			fmt.Fprintf(&b, "\n- failed %s: %s", f.Path, f.Reason)
		}
	} else if v.Err != "" {
		b.WriteString(" " + o.Error)
	}
	if v.State == jobRunning {
		b.WriteString(" Call r2r_sync_status again (wait_seconds waits for it).")
	}
	o.Message = b.String()
	return o
}

// syncFlags are the arguments r2r_sync takes on every transport.
type syncFlags struct {
	Prune  bool `json:"prune" default:"false" desc:"Also delete the documents r2r-mcp wrote for files no longer in the project (after a complete scan)"`
	DryRun bool `json:"dry_run" default:"false" desc:"Only report the plan; change nothing"`
}

// syncParams are one r2r_sync call's arguments, as serve --http lists them: it syncs a
// directory the call names.
type syncParams struct {
	syncFlags
	Directory    string `json:"directory" min:"1" max:"maxPathChars" desc:"Needed here: absolute path on the server host of the directory to sync, inside a directory the operator opened with --allow-dir"`
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID) to sync into; omit to use the current project's collection (created on first use). Required unless the request or the server names a collection"`
}

// localSyncParams are r2r_sync's arguments as a local server lists them (a call's
// arguments are read into syncParams on every transport).
type localSyncParams struct {
	syncFlags
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID) to sync into; omit to use the current project's collection (created on first use)"`
}

func (p *syncParams) check(*Deps) (err error) {
	if p.Directory != "" {
		if err = nonBlank("directory", p.Directory); err != nil {
			return err
		}
	}
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

// syncStatusParams are one r2r_sync_status call's arguments.
type syncStatusParams struct {
	JobID       string `json:"job_id" min:"36" max:"36" desc:"Sync job id from r2r_sync; omit for the current project's newest job (over HTTP: your newest job on this server)"`
	WaitSeconds int    `json:"wait_seconds" min:"0" max:"maxStatusWait" default:"0" desc:"Wait up to this many seconds for the job to finish before answering"`
}

func (p *syncStatusParams) check(*Deps) (err error) {
	p.JobID, err = optUUID("job_id", p.JobID, "r2r_sync returns the job id")
	return err
}
