package main

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// TestSmoke runs the harness end to end at toy scale on the emulator: a 12-file corpus,
// the sync through the counting proxy, searches both ways, the index command, searches
// again. make bench-scale does the same at 3,000 files on the real R2R.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds r2r-mcp")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "r2r-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	corpus := filepath.Join(dir, "gosrc")
	st, err := writeCorpus(runtime.GOROOT(), corpus, 12)
	if err != nil || st.Files < 6 || st.Files > 12 {
		t.Fatalf("corpus %+v: %v", st, err)
	}
	again := filepath.Join(dir, "again")
	if st2, err := writeCorpus(runtime.GOROOT(), again, 12); err != nil || st2 != st {
		t.Fatalf("a second corpus differs: %+v vs %+v (%v)", st2, st, err)
	}
	c, err := newCounter(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(c)
	defer proxy.Close()
	env := append(os.Environ(), "R2R_EMAIL="+r2rtest.AdminEmail, "R2R_PASSWORD="+r2rtest.AdminPassword, "R2R_API_URL=", "R2R_API_KEY=")
	sync := exec.Command(bin, "sync", "--url", proxy.URL, ".")
	sync.Dir, sync.Env = corpus, env
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	if got := c.Counts()["POST /v3/documents"]; got != st.Files {
		t.Errorf("%d uploads counted for %d files: %v", got, st.Files, c.Counts())
	}
	cfg := searchConfig{R2R: srv.URL, Bin: bin, Dir: corpus, N: 4, Email: r2rtest.AdminEmail, Password: r2rtest.AdminPassword}
	ctx := context.Background()
	for _, step := range []string{"before", "after"} {
		if step == "after" {
			idx := exec.Command(bin, "index", "create", "--url", srv.URL)
			idx.Env = env
			if out, err := idx.CombinedOutput(); err != nil {
				t.Fatalf("index create: %v\n%s", err, out)
			}
		}
		res, err := runSearch(ctx, cfg)
		if err != nil {
			t.Fatalf("search %s the index: %v", step, err)
		}
		if len(res.MCP) != cfg.N || len(res.Direct) != cfg.N || res.Hits == 0 || res.String() == "" {
			t.Errorf("search %s the index: %+v", step, res)
		}
	}
	if srv.Count("POST /v3/indices") != 1 {
		t.Errorf("index create sent %d builds", srv.Count("POST /v3/indices"))
	}
}
