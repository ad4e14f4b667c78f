package e2ereal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// BenchmarkRealRecall1000 measures r2r_recall on a project whose collection holds 1,000
// memories (and a file), through the built r2r-mcp on the real R2R, next to an uncached
// r2r_search of the same collection in the same run: recall with a query (a hybrid search
// restricted to memories), and without one (the newest checkpoints: a listing of the
// collection). It reports the index's bytes as text and as JSON.
//
//	make r2r-real; set R2R_CONFORMANCE_*; go test -run '^$' -bench RealRecall1000 -benchtime 20x ./server/e2ereal/
func BenchmarkRealRecall1000(b *testing.B) {
	r := realR2RFromEnv(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	name := "memory-bench-" + fmt.Sprint(time.Now().UnixNano())
	c := adminClient(ctx, b, r)
	coll, err := c.CreateCollection(ctx, name, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.DeleteCollection(context.Background(), coll.ID) })
	st := &memory.Store{API: c, CollectionID: coll.ID}
	me, err := c.Me(ctx)
	if err != nil {
		b.Fatal(err)
	}
	kinds := memory.TextKinds
	var g errgroup.Group
	g.SetLimit(8)
	start := time.Now()
	for i := range 1000 {
		g.Go(func() error {
			d, err := memory.Normalise(memory.Draft{Kind: kinds[i%len(kinds)], Title: fmt.Sprintf("Memory %d about service %d", i, i%37),
				Body: fmt.Sprintf("Service %d keeps its state in table t%d; restart it with make restart-%d after a schema change.", i%37, i, i%37)})
			if err != nil {
				return err
			}
			_, err = st.Remember(ctx, d, memory.Stamp{UserID: me.ID, Time: start.Add(time.Duration(i) * time.Millisecond)})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		l, err := st.List(context.Background(), memory.Query{}, -1)
		if err == nil {
			for _, m := range l.Memories {
				_ = c.DeleteDocument(context.Background(), m.ID)
			}
		}
	})
	waitAllIngested(ctx, b, c, coll.ID, 1000)
	b.Logf("1,000 memories saved and ingested in %s", time.Since(start).Round(time.Second))

	proj := servertest.GitProject(b, name, map[string]string{".r2r-mcp.json": `{"collection": "` + name + `"}`})
	env := servertest.Env(b, r.URL, "R2R_EMAIL="+r.Email, "R2R_PASSWORD="+r.Password, "NO_PROXY=127.0.0.1,localhost")
	s := servertest.Serve(ctx, b, proj, env, "--rate-limit", "0")
	defer s.Close()
	n := 0
	for _, bc := range []struct {
		name string
		tool string
		args func(n int) map[string]any
	}{
		{"search", "r2r_search", func(n int) map[string]any {
			return map[string]any{"query": fmt.Sprintf("restart service %d after a schema change", n)}
		}},
		{"recall with query", "r2r_recall", func(n int) map[string]any {
			return map[string]any{"query": fmt.Sprintf("restart service %d after a schema change", n)}
		}},
		{"recall newest checkpoints", "r2r_recall", func(int) map[string]any { return map[string]any{"kind": "checkpoint"} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var textBytes, jsonBytes int
			for b.Loop() {
				n++
				res, err := s.Call(ctx, bc.tool, bc.args(n))
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %s", bc.tool, err, res.Text)
				}
				js, _ := json.Marshal(res.Structured)
				textBytes, jsonBytes = max(textBytes, len(res.Text)), max(jsonBytes, len(js))
			}
			b.ReportMetric(float64(textBytes), "text-bytes")
			b.ReportMetric(float64(jsonBytes), "json-bytes")
		})
	}
}
