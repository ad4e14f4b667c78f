package httpserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// Two replicas with one real Redis keep one team's analytics: the same question asked
// through both, in other words, is one gap counted each time; the list stays within its
// bound whatever arrives.
func TestTeamAnalyticsInRedis(t *testing.T) {
	rs := startRedis(t)
	tm := newTeam(t)
	var recs []*analytics.Recorder
	adjust := func(_ *server.Config, o *httpserve.Options) {
		store, err := redisl2.Open(rs.URL, redisl2.Options{Timeout: testRedisTimeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		rec := analytics.NewRecorder(&analytics.TeamStore{List: store}, nil)
		recs = append(recs, rec)
		o.Analytics = rec
	}
	repA, repB := newRedisReplica(t, tm, rs.URL, adjust), newRedisReplica(t, tm, rs.URL, adjust)
	filters := map[string]any{"document_type": map[string]any{"$eq": "pdf"}}
	for i, c := range []string{repA.URL, repB.URL, repA.URL} {
		q := []string{"Where is the wombat runbook?", "where is the WOMBAT runbook", "where is the wombat  runbook"}[i]
		text, res := callText(t, mcpClient(t, c, bearer(tm.Bob.Key)), "r2r_search",
			map[string]any{"query": q, "collection_id": tm.Bob.Collection, "filters": filters})
		if res.IsError || res.StructuredContent.(map[string]any)["count"].(float64) != 0 {
			t.Fatalf("search %d: %s", i, text)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range recs {
		r.Flush(ctx)
	}
	store, err := redisl2.Open(rs.URL, redisl2.Options{Timeout: testRedisTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	team := &analytics.TeamStore{List: store}
	evs, err := team.Read("team:" + tm.Bob.Collection)
	if err != nil {
		t.Fatal(err)
	}
	r := analytics.Summarize(evs, time.Now().Add(-time.Hour), time.Now().Add(time.Minute), 10)
	if len(r.Gaps) != 1 || r.Gaps[0].Query != "where is the wombat runbook" || r.Gaps[0].Asked != 3 {
		t.Fatalf("team gaps %+v (events %+v)", r.Gaps, evs)
	}

	// Bounded: a small list keeps its size whatever is pushed.
	small := &analytics.TeamStore{List: store, Size: 20}
	for i := range 10 {
		batch := make([]analytics.Event, 10)
		for j := range batch {
			batch[j] = analytics.Event{Time: time.Now(), Kind: analytics.KindSearch, Query: "flood", Hits: i}
		}
		if err := small.Append("team:flood", batch); err != nil {
			t.Fatal(err)
		}
	}
	if evs, err := (&analytics.TeamStore{List: store, Size: 1000}).Read("team:flood"); err != nil || len(evs) != 20 {
		t.Errorf("the bounded list holds %d events (%v), want 20", len(evs), err)
	}
}
