package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// BenchmarkSyncToolReturnsJobID measures how long r2r_sync takes to answer with its job id
// for a project of 1,000 small files not yet in R2R (the plan lists and hashes every
// file and reads the collection's manifest; the uploads run after the answer, outside the
// timing).
func BenchmarkSyncToolReturnsJobID(b *testing.B) {
	const files = 1000
	srv := r2rtest.NewServer(b, r2rtest.Options{})
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		b.StopTimer()
		proj := filepath.Join(b.TempDir(), fmt.Sprintf("bench%d", i))
		for j := range files {
			p := filepath.Join(proj, "docs", fmt.Sprintf("d%02d", j/100), fmt.Sprintf("f%04d.md", j))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, fmt.Appendf(nil, "# Note %d\n\nFact %d.", j, j), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
			b.Fatal(err)
		}
		cfg := testConfig()
		cfg.SyncStateDir, cfg.PollInterval = b.TempDir(), time.Millisecond
		d := &Deps{Config: cfg, Client: c, Projects: project.NewResolver(project.Options{WorkDir: proj, CacheFile: "-"})}
		reg := map[string]server.ToolHandlerFunc{}
		for _, t := range Chain(d, Registry(d), Layers{}) {
			reg[t.Def.Name] = t.Handler
		}
		req := mcp.CallToolRequest{}
		req.Params.Arguments = map[string]any{}
		ctx := context.Background()
		// Resolving the user and creating the collection happen once per project; they are
		// not part of what is measured.
		if _, err := d.Projects.UserID(ctx, c); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Projects.Collection(ctx, c, true); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := reg["r2r_sync"](ctx, req)
		b.StopTimer()
		if err != nil || res.IsError {
			b.Fatalf("r2r_sync: %v %v", err, text(res))
		}
		var o SyncOutput
		structuredB(b, res, &o)
		if o.Plan.Upload != files {
			b.Fatalf("plan %+v", o.Plan)
		}
		wait := mcp.CallToolRequest{}
		wait.Params.Arguments = map[string]any{"job_id": o.JobID, "wait_seconds": 10}
		for {
			res, _ := reg["r2r_sync_status"](ctx, wait)
			var st SyncStatusOutput
			structuredB(b, res, &st)
			if st.State != jobRunning {
				break
			}
		}
		b.StartTimer()
	}
}

func structuredB(b *testing.B, res *mcp.CallToolResult, out any) {
	b.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		b.Fatal(err)
	}
}
