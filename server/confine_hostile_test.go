//go:build !windows

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// bodyRecorder is the emulator behind a listener that keeps every request body.
type bodyRecorder struct {
	emu    *r2rtest.Emulator
	URL    string
	mu     sync.Mutex
	bodies [][]byte
}

func newBodyRecorder(t *testing.T) *bodyRecorder {
	r := &bodyRecorder{emu: r2rtest.New(r2rtest.Options{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.emu.ServeHTTP(w, req)
	}))
	r.URL = srv.URL
	t.Cleanup(func() { srv.Close(); r.emu.Close() })
	return r
}

// leaked is how many recorded request bodies contain marker.
func (r *bodyRecorder) leaked(marker string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.bodies {
		if bytes.Contains(b, []byte(marker)) {
			n++
		}
	}
	return n
}

const secretMarker = "SECRET-MARKER-7f3a"

// ingest calls r2r_ingest_document for path and returns the error type ("" = success).
func ingest(t *testing.T, c *pipeConn, id int, path string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"file_path": path})
	c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"r2r_ingest_document","arguments":%s}}`, id, args))
	m := c.recv(t)
	res, _ := m["result"].(map[string]any)
	if res["isError"] != true {
		return ""
	}
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["r2r-mcp/error"].(map[string]any)
	typ, _ := info["type"].(string)
	return typ
}

// TestConfinementHostile: no byte of a secret reaches R2R through r2r_ingest_document —
// named secret files, a service-account key under its download name, secrets found by
// content, a hard link to a file outside the project, and a directory swapped for a link
// to the project's .aws/ while 300 ingests run.
func TestConfinementHostile(t *testing.T) {
	rec := newBodyRecorder(t)
	proj := t.TempDir()
	outside := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(proj, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sa := `{"type": "service_account", "project_id": "my-project-1234", "private_key": "-----BEGIN PRIVATE KEY-----\n` + secretMarker + `"}`
	named := map[string]string{
		"key.json":                          `{"k":"` + secretMarker + `"}`,
		"my-project-1234-abcdef123456.json": sa,
		".cursor/mcp.json":                  `{"env":{"KEY":"` + secretMarker + `"}}`,
		".vscode/mcp.json":                  `{"env":{"KEY":"` + secretMarker + `"}}`,
		"token.txt":                         secretMarker,
		"local.settings.json":               `{"Values":{"K":"` + secretMarker + `"}}`,
	}
	content := map[string]string{
		"docs/aws.md":  "# notes\naws_access_key_id = AKIA" + strings.Repeat("Z7Q2", 4) + "\n" + secretMarker,
		"docs/pem.md":  "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEvQIBADANBgkqhkiG9w0B", 4) + "\n" + secretMarker,
		"docs/sa.json": strings.Replace(sa, "-----BEGIN PRIVATE KEY-----\\n", "-----BEGIN PRIVATE KEY-----\\nMIIE", 1),
	}
	for rel, body := range named {
		write(rel, body)
	}
	for rel, body := range content {
		write(rel, body)
	}
	write(".aws/notes.md", secretMarker)
	write("docs/notes.md", "# harmless notes")
	if err := os.WriteFile(filepath.Join(outside, "private.md"), []byte(secretMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "private.md"), filepath.Join(proj, "linked.md")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}

	cfg := overloadConfig(t, rec.URL)
	cfg.WorkDir, cfg.Options.Tools.CallTimeout, cfg.Options.Tools.SearchTimeout = proj, DefaultOptions().Tools.CallTimeout, DefaultOptions().Tools.SearchTimeout
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	id := 10
	for rel := range named {
		id++
		if typ := ingest(t, c, id, rel); typ != "secret_file" {
			t.Errorf("%s: error type %q, want secret_file", rel, typ)
		}
	}
	for rel := range content {
		id++
		if typ := ingest(t, c, id, rel); typ != "secret_file" {
			t.Errorf("%s: error type %q, want secret_file", rel, typ)
		}
	}
	id++
	if typ := ingest(t, c, id, "linked.md"); typ != "hard_link" {
		t.Errorf("hard link: error type %q, want hard_link", typ)
	}

	// The harmless file goes through before the swapping starts, so the harness is shown to
	// upload what it should; whether any try during the swapping lands on the real directory
	// depends on scheduling.
	id++
	if typ := ingest(t, c, id, "docs/notes.md"); typ != "" {
		t.Fatalf("docs/notes.md before the swapping: error type %q, want success", typ)
	}
	if rec.leaked("# harmless notes") == 0 {
		t.Fatal("the harmless file never reached R2R: the test proves nothing")
	}

	// The swap: docs/ flips between the real directory and a link to .aws/.
	var stop atomic.Bool
	var swapper sync.WaitGroup
	swapper.Go(func() {
		docs, real := filepath.Join(proj, "docs"), filepath.Join(proj, "docs.real")
		for !stop.Load() {
			if os.Rename(docs, real) != nil {
				continue
			}
			_ = os.Symlink(".aws", docs)
			_ = os.Remove(docs)
			_ = os.Rename(real, docs)
		}
	})
	outcomes := map[string]int{}
	for range 300 {
		id++
		outcomes[ingest(t, c, id, "docs/notes.md")]++
	}
	stop.Store(true)
	swapper.Wait()
	t.Logf("swap outcomes over 300 tries: %v", outcomes)

	if n := rec.leaked(secretMarker); n != 0 {
		t.Errorf("%d requests to R2R carried the secret", n)
	}
}
