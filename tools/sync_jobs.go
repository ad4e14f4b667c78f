package tools

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// Job states of a sync.
const (
	jobRunning = "running"
	jobDone    = "done"
	jobFailed  = "failed"
)

// maxFinishedJobs bounds how many finished sync jobs a server remembers.
const maxFinishedJobs = 16

// syncJobs are the syncs this server started: at most one running per project.
type syncJobs struct {
	mu      sync.Mutex
	byID    map[string]*syncJob
	order   []string          // ids, oldest first
	running map[string]string // project root → id of its running job
}

func newSyncJobs() *syncJobs {
	return &syncJobs{byID: map[string]*syncJob{}, running: map[string]string{}}
}

// syncJob is one sync in the background. Its fields change under mu.
type syncJob struct {
	ID             string
	Root           string
	CollectionID   string
	CollectionName string
	Started        time.Time

	mu       sync.Mutex
	state    string
	plan     SyncPlanCounts
	progress kbsync.Progress
	summary  *kbsync.Summary
	err      string
	finished time.Time
	changed  chan struct{} // closed and replaced on every change
	// onChange, set before the job runs, is called after every change (shares the state).
	onChange func()
}

// start registers a running job for root, or returns the job already running there.
func (j *syncJobs) start(root string, now time.Time) (job *syncJob, running *syncJob) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if id, ok := j.running[root]; ok {
		return nil, j.byID[id]
	}
	job = &syncJob{ID: uuid.NewString(), Root: root, Started: now, state: jobRunning, changed: make(chan struct{})}
	j.byID[job.ID] = job
	j.order = append(j.order, job.ID)
	j.running[root] = job.ID
	// Forget the oldest finished jobs beyond the bound.
	for len(j.order) > maxFinishedJobs {
		old := j.byID[j.order[0]]
		if old.snapshot().State == jobRunning {
			break
		}
		delete(j.byID, j.order[0])
		j.order = j.order[1:]
	}
	return job, nil
}

// end marks root as no longer syncing.
func (j *syncJobs) end(job *syncJob) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.running[job.Root] == job.ID {
		delete(j.running, job.Root)
	}
}

// get returns the job with id, or (id "") the newest job of root (root "": of any root).
func (j *syncJobs) get(id, root string) *syncJob {
	j.mu.Lock()
	defer j.mu.Unlock()
	if id != "" {
		return j.byID[id]
	}
	for i := len(j.order) - 1; i >= 0; i-- {
		if job := j.byID[j.order[i]]; root == "" || job.Root == root {
			return job
		}
	}
	return nil
}

// update changes the job under its lock, hands the new state to onChange (a shared store,
// which other replicas read) and only then wakes the callers waiting for a change: one told
// "done" here may ask another replica at once.
func (s *syncJob) update(f func()) {
	s.mu.Lock()
	f()
	changed := s.changed
	s.changed = make(chan struct{})
	s.mu.Unlock()
	if s.onChange != nil {
		s.onChange()
	}
	close(changed)
}

func (s *syncJob) setPlan(p *kbsync.Plan) {
	s.update(func() { s.plan = planCounts(p); s.progress.Total = p.Steps() })
}

func (s *syncJob) report(p kbsync.Progress) { s.update(func() { s.progress = p }) }

func (s *syncJob) finish(sum *kbsync.Summary, err error, now time.Time) {
	s.update(func() {
		s.summary, s.finished = sum, now
		s.state = jobDone
		if err != nil {
			s.state, s.err = jobFailed, err.Error()
		} else if sum != nil && !sum.OK() {
			s.state = jobFailed
			s.err = fmt.Sprintf("%d file(s) failed", len(sum.Failed))
		}
	})
}

// jobView is a consistent copy of a job's state.
type jobView struct {
	State    string
	Plan     SyncPlanCounts
	Progress kbsync.Progress
	Summary  *kbsync.Summary
	Err      string
	Finished time.Time
	Changed  <-chan struct{}
}

func (s *syncJob) snapshot() jobView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return jobView{State: s.state, Plan: s.plan, Progress: s.progress, Summary: s.summary, Err: s.err,
		Finished: s.finished, Changed: s.changed}
}

// SyncPlanCounts are the counts of a sync's plan.
type SyncPlanCounts struct {
	Files     int `json:"files" required:"true" desc:"files listed (git ls-files, or the .gitignore rules outside git) and selected by .r2r-mcp.json include/exclude"`
	Upload    int `json:"upload" required:"true" desc:"new files to upload"`
	Replace   int `json:"replace" required:"true" desc:"changed files whose document is replaced"`
	Unchanged int `json:"unchanged" required:"true" desc:"files whose document is current"`
	Delete    int `json:"delete" required:"true" desc:"documents of files gone from the project, deleted (prune only)"`
	Refused   int `json:"refused" required:"true" desc:"files the ingest rules refuse (secrets, binary, too large, …)"`
	Empty     int `json:"empty" desc:"files with no text (empty or whitespace only): not sent; the documents of one that had text are deleted"`
	Stale     int `json:"stale" required:"true" desc:"documents of files gone from the project that are kept (without prune, or when pruning was skipped)"`
}

func planCounts(p *kbsync.Plan) SyncPlanCounts {
	return SyncPlanCounts{Files: p.Files, Upload: len(p.Upload), Replace: len(p.Replace), Unchanged: p.Unchanged,
		Delete: len(p.Delete), Refused: len(p.Refused), Empty: p.Empty, Stale: p.Stale}
}
