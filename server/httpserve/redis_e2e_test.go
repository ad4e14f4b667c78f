package httpserve_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// redisServer is a real redis-server (Debian package redis-server) on a free loopback port.
type redisServer struct {
	URL string
	cmd *exec.Cmd
}

// startRedis starts redis-server for one test; without it the test is skipped, or fails
// under CI=true.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (Debian package redis-server)")
		}
		t.Skip("redis-server is not installed (Debian package redis-server); skipping")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &redisServer{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	t.Cleanup(r.Kill)
	// A real process: give it time to listen, bounded for a loaded machine.
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testRedisTimeout bounds one Redis operation of the replicas under test. Serve's default
// (100 ms) is for Redis on the same network; on a loaded test machine an operation over it
// fails, the replica serves from memory for a second, and a write through one replica is
// then not seen through the other. These tests are about what the replicas share, so they
// wait as long as Redis takes; a killed Redis still fails at once (connection refused).
const testRedisTimeout = 10 * time.Second

// Kill stops redis-server at once (SIGKILL), as a crash would.
func (r *redisServer) Kill() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		_ = r.cmd.Process.Kill()
		_, _ = r.cmd.Process.Wait()
	}
}

// Two users, two replicas, one Redis: many concurrent calls never carry the other user's
// data; an ingest through replica A is found by a search through replica B at once (B had
// cached the search before); killing Redis mid-run fails no call.
func TestTwoReplicasOneRedis(t *testing.T) {
	rs := startRedis(t)
	tm := newTeam(t)
	docs := t.TempDir()
	adjust := func(c *server.Config, _ *httpserve.Options) { c.AllowDirs = []string{docs} }
	repA, repB := newRedisReplica(t, tm, rs.URL, adjust), newRedisReplica(t, tm, rs.URL, adjust)

	// Ingest through A, search through B.
	bobB := mcpClient(t, repB.URL, bearer(tm.Bob.Key))
	bobA := mcpClient(t, repA.URL, bearer(tm.Bob.Key))
	query := map[string]any{"query": "quokka migration", "collection_id": tm.Bob.Collection}
	if text, _ := callText(t, bobB, "r2r_search", query); strings.Contains(text, "quokka") && strings.Contains(text, "runbook") {
		t.Fatalf("found before the ingest: %s", text)
	}
	if _, res := callText(t, bobB, "r2r_search", query); !res.StructuredContent.(map[string]any)["cached"].(bool) {
		t.Fatal("B did not cache the search")
	}
	file := filepath.Join(docs, "quokka.md")
	if err := os.WriteFile(file, []byte("# Quokka runbook\n\nThe quokka migration moves the ledger.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, res := callText(t, bobA, "r2r_ingest_document", map[string]any{"file_path": file,
		"collection_id": tm.Bob.Collection, "run_async": false}); res.IsError {
		t.Fatalf("ingest through A: %s", text)
	}
	if text, res := callText(t, bobB, "r2r_search", query); !strings.Contains(text, "Quokka runbook") || res.StructuredContent.(map[string]any)["cached"].(bool) {
		t.Fatalf("B does not see A's ingest at once: %s", text)
	}

	// Bob's search history is one across the replicas; Alice's holds none of it.
	if h := history(t, bobA); !strings.Contains(h, "quokka migration") {
		t.Errorf("bob's history through A lacks the searches made through B: %s", h)
	}
	if h := history(t, mcpClient(t, repB.URL, bearer(tm.Alice.Key))); strings.Contains(h, "quokka") {
		t.Errorf("alice's history holds bob's search: %s", h)
	}

	// A sync of a directory through A is reported through B, to Bob only.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	notes := filepath.Join(docs, "notes")
	if err := os.MkdirAll(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "echidna.md"), []byte("# Echidna runbook\n\nThe echidna rotates the keys.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, res := callText(t, bobA, "r2r_sync", map[string]any{"directory": notes, "collection_id": tm.Bob.Collection})
	if res.IsError {
		t.Fatalf("sync through A: %s", text)
	}
	job := res.StructuredContent.(map[string]any)["job_id"].(string)
	if text, res := callText(t, bobA, "r2r_sync_status", map[string]any{"job_id": job, "wait_seconds": 10}); res.IsError ||
		res.StructuredContent.(map[string]any)["state"] != "done" {
		t.Fatalf("the sync on A: %s", text)
	}
	if text, res := callText(t, bobB, "r2r_sync_status", map[string]any{"job_id": job}); res.IsError ||
		res.StructuredContent.(map[string]any)["state"] != "done" {
		t.Errorf("the sync through B: %s", text)
	}
	if text, res := callText(t, mcpClient(t, repB.URL, bearer(tm.Alice.Key)), "r2r_sync_status", map[string]any{"job_id": job}); !res.IsError {
		t.Errorf("alice read bob's sync job: %s", text)
	}

	// Many concurrent calls of both users through both replicas; Redis dies halfway.
	clients := map[string][]*client.Client{
		"alice": {mcpClient(t, repA.URL, bearer(tm.Alice.Key)), mcpClient(t, repB.URL, bearer(tm.Alice.Key))},
		"bob":   {bobA, bobB},
	}
	own := map[string]member{"alice": tm.Alice, "bob": tm.Bob}
	other := map[string]member{"alice": tm.Bob, "bob": tm.Alice}
	var calls, failed atomic.Int64
	var wg sync.WaitGroup
	const rounds = 60
	var killOnce sync.Once
	for who, cs := range clients {
		for ri, c := range cs {
			for w := range 3 {
				wg.Go(func() {
					for i := range rounds {
						if i == rounds/2 && ri == 0 && w == 0 {
							killOnce.Do(rs.Kill)
						}
						args := map[string]any{"query": fmt.Sprintf("payout queue worker %d", i%5)}
						if i%2 == 1 {
							args["collection_id"] = own[who].Collection
						}
						text, res := callText(t, c, "r2r_search", args)
						calls.Add(1)
						if res.IsError {
							failed.Add(1)
							t.Errorf("%s call failed: %s", who, text)
						}
						if strings.Contains(text, other[who].Secret) {
							t.Errorf("%s saw %s's data: %s", who, other[who].Email, text)
						}
						if !strings.Contains(text, own[who].Secret) {
							t.Errorf("%s missed their own document: %s", who, text)
						}
					}
				})
			}
		}
	}
	wg.Wait()
	t.Logf("%d calls through 2 replicas, %d failed; Redis killed after about half", calls.Load(), failed.Load())

	fams := scrape(t, repA.URL)
	if v := sum(fams, "r2r_mcp_redis_errors_total"); v == 0 {
		t.Error("Redis's death was not counted")
	}
	if v := sum(fams, "r2r_mcp_cache_lookups_total"); v == 0 {
		t.Error("no cache lookups counted")
	}
	// /readyz reports Redis as down.
	resp, err := httpGet(repA.URL + "/readyz")
	if err != nil || resp.status != 503 || !strings.Contains(resp.body, "redis:") {
		t.Errorf("/readyz without Redis: %v %+v", err, resp)
	}
	_ = context.Background()
}
