package e2ereal_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestRealMiniLMParaphrase: on a real R2R that embeds with all-MiniLM-L6-v2
// (`R2R_REAL_EMBED=minilm make test-real`, which sets R2R_CONFORMANCE_EMBED=minilm), a
// question that shares no content word with its answer ranks the answering document first by
// semantic search alone. The hashed bag of words of the model double cannot do that, so with
// it the test skips.
func TestRealMiniLMParaphrase(t *testing.T) {
	r := liveR2R(t)
	if e := os.Getenv("R2R_CONFORMANCE_EMBED"); e != "minilm" {
		t.Skipf("the R2R under test embeds with %q, not all-MiniLM-L6-v2: run R2R_REAL_EMBED=minilm make test-real", e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := r2r.New(r2r.Options{BaseURL: r.URL, UserAgent: "r2r-mcp/e2ereal"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	c, err = r2r.New(r2r.Options{BaseURL: r.URL, UserAgent: "r2r-mcp/e2ereal", Credentials: r2r.Bearer(tok.AccessToken.Token)})
	if err != nil {
		t.Fatal(err)
	}
	docs := []struct{ name, text string }{
		{"cancel.md", "# Request lifetimes\nEvery outgoing HTTP call carries a context. When the caller gives up, for example because the user pressed Ctrl-C or a deadline passed, the context is cancelled and the transport closes the connection, so the request stops at once and nothing is cached from it.\n"},
		{"pool.md", "# Database connections\nThe server keeps at most twenty open connections to Postgres. When all of them are busy, new queries wait in a queue for up to five seconds and then fail with a timeout error.\n"},
		{"listen.md", "# Configuration\nThe listening address is read from the LISTEN_ADDR variable at start-up; it defaults to 127.0.0.1:8080. Logs go to standard error in JSON lines.\n"},
		{"garden.md", "# Tomatoes\nTomatoes need six to eight hours of direct sun and regular watering. Pinch out side shoots so the plant puts its energy into fruit.\n"},
	}
	prefix := "minilm-" + unique(t) + "-"
	ids := map[string]string{}
	var all []any
	for _, d := range docs {
		res, err := c.CreateDocument(ctx, r2r.DocumentCreate{FileName: prefix + d.name, File: []byte(d.text), IngestionMode: "custom"})
		if err != nil {
			t.Fatalf("ingest %s: %v", d.name, err)
		}
		ids[res.DocumentID] = d.name
		all = append(all, res.DocumentID)
		t.Cleanup(func() { c.DeleteDocument(context.Background(), res.DocumentID) })
	}
	tests := []struct{ query, want string }{
		{"what happens to an in-flight request when I abort it?", "cancel.md"},
		{"why do my SQL statements stall and then error out when the DB is busy?", "pool.md"},
		{"how do I change which port the service binds to?", "listen.md"},
		{"growing vegetables", "garden.md"},
	}
	yes, no, limit := true, false, len(docs)
	for _, tt := range tests {
		res, err := c.Search(ctx, r2r.SearchRequest{Query: tt.query, SearchMode: "custom", SearchSettings: &r2r.SearchSettings{
			UseSemanticSearch: &yes, UseFulltextSearch: &no, Limit: &limit,
			Filters: map[string]any{"document_id": map[string]any{"$in": all}},
		}})
		if err != nil {
			t.Fatalf("search %q: %v", tt.query, err)
		}
		hits := res.ChunkSearchResults
		if len(hits) == 0 {
			t.Errorf("%q: no hits", tt.query)
			continue
		}
		for i, h := range hits {
			t.Logf("%q #%d %.4f %s", tt.query, i+1, h.Score, ids[h.DocumentID])
		}
		if got := ids[hits[0].DocumentID]; got != tt.want {
			t.Errorf("%q: first hit is %s (score %.3f), want %s", tt.query, got, hits[0].Score, tt.want)
		}
	}
}
