package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// memJobStore is a SyncJobStore in memory that can be made to fail.
type memJobStore struct {
	mu     sync.Mutex
	states map[string][]byte
	puts   int
	fail   bool
}

func (m *memJobStore) PutSyncJob(key string, state []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("store down")
	}
	if ttl <= 0 {
		return errors.New("no TTL")
	}
	m.states[key], m.puts = state, m.puts+1
	return nil
}

func (m *memJobStore) SyncJob(key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return nil, errors.New("store down")
	}
	return m.states[key], nil
}

// statusThrough calls r2r_sync_status with job id on deps d (another replica's view).
func statusThrough(t *testing.T, d *Deps, id string) *mcp.CallToolResult {
	t.Helper()
	d.setup()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "r2r_sync_status", map[string]any{"job_id": id}
	res, err := syncStatusHandler(d)(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A sync job's state goes to the SyncJobStore under its owner's identity on every change;
// another replica with the same identity reports it from there, one with another identity
// does not, and a failing store changes nothing for the job's own replica.
func TestSyncJobStateShared(t *testing.T) {
	store := &memJobStore{states: map[string][]byte{}}
	e := newEnv(t, withSyncState(t), withDeps(func(d *Deps) { d.SyncJobs = store }))
	e.write("a.md", "# A\n\nalpha")
	e.write("b.md", "# B\n\nbeta")
	var o SyncOutput
	structured(t, e.ok("r2r_sync", map[string]any{}), &o)
	var st SyncStatusOutput
	for {
		e.r2r.StepIngestion()
		structured(t, e.ok("r2r_sync_status", map[string]any{"job_id": o.JobID, "wait_seconds": 1}), &st)
		if st.State != jobRunning {
			break
		}
	}
	var stored SyncStatusOutput
	store.mu.Lock()
	state, puts := store.states[e.client.Identity()+"\x00"+o.JobID], store.puts
	store.mu.Unlock()
	if err := json.Unmarshal(state, &stored); err != nil || stored.State != jobDone || stored.Result == nil || stored.Result.Uploaded != 2 {
		t.Fatalf("stored state: %s %v", state, err)
	}
	if puts < 4 { // plan, two steps, finish
		t.Errorf("%d writes to the store, want one per change", puts)
	}

	other := &Deps{Config: testConfig(), Client: e.client, Projects: e.deps.Projects, SyncJobs: store}
	var remote SyncStatusOutput
	structured(t, statusThrough(t, other, o.JobID), &remote)
	if remote.State != jobDone || remote.Done != 2 || remote.JobID != o.JobID {
		t.Errorf("through another replica: %+v", remote)
	}
	stranger := &Deps{Config: testConfig(), Client: e.client.WithCredentials(r2r.APIKey("someone-else")), Projects: e.deps.Projects, SyncJobs: store}
	if res := statusThrough(t, stranger, o.JobID); !res.IsError || strings.Contains(text(res), "done") {
		t.Errorf("another user read the job: %s", text(res))
	}

	store.mu.Lock()
	store.fail = true
	store.mu.Unlock()
	e.write("c.md", "# C\n\ngamma")
	structured(t, e.ok("r2r_sync", map[string]any{}), &o)
	for {
		e.r2r.StepIngestion()
		structured(t, e.ok("r2r_sync_status", map[string]any{"job_id": o.JobID, "wait_seconds": 1}), &st)
		if st.State != jobRunning {
			break
		}
	}
	if st.State != jobDone || st.Result.Uploaded != 1 {
		t.Errorf("with the store down: %+v", st)
	}
	if res := statusThrough(t, other, o.JobID); !res.IsError {
		t.Errorf("another replica reported a job the store never had: %s", text(res))
	}
}

// Over stdio r2r_sync syncs the project: it does not list a directory argument and
// refuses one; over HTTP (a remote resolver) it lists it.
func TestSyncDirectoryOnlyOverHTTP(t *testing.T) {
	e := newEnv(t, withSyncState(t))
	e.write("a.md", "a")
	if _, listed := e.tools["r2r_sync"].Def.InputSchema.Properties["directory"]; listed {
		t.Error("over stdio r2r_sync lists directory")
	}
	_, info := e.fail("r2r_sync", map[string]any{"directory": e.project})
	if info.Code != toolerr.CodeInvalidParams || !strings.Contains(info.Message, `unknown argument "directory"`) {
		t.Fatalf("%+v", info)
	}
	remote := newEnv(t, withDeps(func(d *Deps) {
		d.Projects = project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-", Remote: true})
	}))
	if _, listed := remote.tools["r2r_sync"].Def.InputSchema.Properties["directory"]; !listed {
		t.Error("over HTTP r2r_sync does not list directory")
	}
}

// seqJobStore answers SyncJob with its states in turn, the last one from then on.
type seqJobStore struct {
	mu     sync.Mutex
	states [][]byte
	reads  int
}

func (s *seqJobStore) PutSyncJob(string, []byte, time.Duration) error { return nil }

func (s *seqJobStore) SyncJob(string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.states[min(s.reads, len(s.states)-1)]
	s.reads++
	return st, nil
}

// r2r_sync_status with wait_seconds on a job another replica runs reads the store again
// until the job has finished.
func TestSyncStatusWaitsForStoredJob(t *testing.T) {
	const id = "0b7c6a4e-2d2c-4e55-9a51-6f8f7a1c2d3e"
	state := func(s string, done int) []byte {
		b, _ := json.Marshal(SyncStatusOutput{JobID: id, State: s, Done: done, Total: 2, Message: s})
		return b
	}
	store := &seqJobStore{states: [][]byte{state(jobRunning, 1), state(jobDone, 2)}}
	e := newEnv(t)
	d := &Deps{Config: testConfig(), Client: e.client, Projects: e.deps.Projects, SyncJobs: store}
	d.setup()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "r2r_sync_status", map[string]any{"job_id": id, "wait_seconds": 5}
	res, err := syncStatusHandler(d)(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var o SyncStatusOutput
	structured(t, res, &o)
	if o.State != jobDone || o.Done != 2 || store.reads != 2 {
		t.Errorf("after waiting: %+v (%d reads)", o, store.reads)
	}
}

// syncStatusHandler is r2r_sync_status's own handler on d.
func syncStatusHandler(d *Deps) func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	d.setup()
	tl := syncStatusTool(d, d.scopes)
	return tl.own()
}
