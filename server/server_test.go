package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Tests that run the stdio loop in-process must not run in parallel with each other:
// mcp-go's stdio session is a package-level singleton.

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelInfo, false},
		{"debug", slog.LevelDebug, false},
		{"INFO", slog.LevelInfo, false},
		{"warn", slog.LevelWarn, false},
		{"warning", slog.LevelWarn, false},
		{" error ", slog.LevelError, false},
		{"verbose", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseLevel(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("ParseLevel(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestOpenLoggerFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not POSIX on Windows")
	}
	dir := t.TempDir()
	tests := []struct {
		name    string
		prepare func(path string)
	}{
		{"new file", func(string) {}},
		{"existing world-readable file", func(p string) {
			if err := os.WriteFile(p, []byte("old line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".log")
			tt.prepare(path)
			before, _ := os.ReadFile(path)
			l, closeFn, err := OpenLogger(path, "warn", nil)
			if err != nil {
				t.Fatal(err)
			}
			l.Info("hidden below the level")
			l.Warn("kept", "k", "v")
			if err := closeFn(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
			b, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(b), string(before)) {
				t.Errorf("existing content was not kept (append): %q", b)
			}
			got := strings.TrimPrefix(string(b), string(before))
			if !strings.Contains(got, "msg=kept k=v") || strings.Contains(got, "hidden") {
				t.Errorf("log content %q", got)
			}
		})
	}
	if _, _, err := OpenLogger(filepath.Join(dir, "no", "such", "dir", "x.log"), "info", nil); err == nil {
		t.Error("opening a log file in a missing directory succeeded")
	}
	if _, _, err := OpenLogger("", "loud", nil); err == nil {
		t.Error("an unknown level was accepted")
	}
}

func TestInstructions(t *testing.T) {
	rw, ro := instructions(false), instructions(true)
	for _, w := range []string{"r2r_search", "r2r_rag_query", "r2r_monitor_task", "not instructions", "r2r_status", "r2r_recall",
		"r2r_ingest_document", "r2r_sync", "r2r_delete_document", "r2r_remember"} {
		if !strings.Contains(rw, w) {
			t.Errorf("instructions lack %q", w)
		}
	}
	for _, tl := range servertest.Tools(t) { // the registry says which tools write
		if !tl.ReadOnly && strings.Contains(ro, tl.Def.Name) {
			t.Errorf("read-only instructions must drop the write tool %s", tl.Def.Name)
		}
	}
	if len(rw) > 1500 {
		t.Errorf("instructions are %d bytes; keep them short", len(rw))
	}
	// Claude Code keeps the first 2 KB of a server's instructions.
	for _, in := range []string{rw, ro} {
		if len(in) > tools.ClientCapBytes {
			t.Errorf("instructions are %d bytes; clients keep %d", len(in), tools.ClientCapBytes)
		}
	}
	t.Logf("instructions: %d bytes, read-only %d bytes", len(rw), len(ro))
}

// pipeConn is an in-process client of serveStdio.
type pipeConn struct {
	in  *io.PipeWriter
	out *bufio.Scanner
}

func newPipeConn() (*pipeConn, io.Reader, io.Writer) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	return &pipeConn{in: inW, out: sc}, inR, outW
}

func (c *pipeConn) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *pipeConn) recv(t *testing.T) map[string]any {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("no response: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		t.Fatalf("response %q: %v", c.out.Text(), err)
	}
	return m
}

// runInProcess runs Run with cfg in a goroutine, its stdio connected to the returned
// pipeConn; Run's result arrives on the channel.
func runInProcess(ctx context.Context, cfg Config) (*pipeConn, <-chan error) {
	c, stdin, stdout := newPipeConn()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, stdin, stdout) }()
	return c, done
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`

// TestServeStdioGrace checks that a handler ignoring cancellation cannot keep the server
// from returning once stdin closes: serveStdio gives up after the grace period.
func TestServeStdioGrace(t *testing.T) {
	s := mcpserver.NewMCPServer("t", "0")
	entered, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer func() { close(release); <-returned }()
	s.AddTool(mcp.NewTool("stubborn"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer close(returned)
		close(entered)
		<-release // ignores ctx on purpose
		return mcp.NewToolResultText("late"), nil
	})
	c, stdin, stdout := newPipeConn()
	done := make(chan error, 1)
	go func() {
		done <- serveStdio(context.Background(), s, stdin, stdout, slog.New(slog.DiscardHandler),
			stdioConfig{limits: DefaultOptions().stdioLimits(), grace: 50 * time.Millisecond})
	}()
	go func() { // drain responses
		for c.out.Scan() {
		}
	}()
	c.send(t, initLine)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stubborn","arguments":{}}}`)
	<-entered
	c.in.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveStdio = %v, want nil on stdin EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serveStdio did not return after stdin closed")
	}
}

// TestRunInProcess runs the whole server in-process against the emulator: initialize
// reports the server's identity and capabilities, tools/list the registry, and a tool call
// reaches R2R; cancelling ctx stops Run with nil.
func TestRunInProcess(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &r2rtest.SyncBuffer{}
	c, done := runInProcess(ctx, Config{
		R2RURL: emu.URL, URLSource: "test",
		LogLevel: "debug", Stderr: logs, WorkDir: t.TempDir(), ConfigDir: t.TempDir(), Version: "1.2.3",
		Options: DefaultOptions(),
	})

	c.send(t, initLine)
	res, _ := c.recv(t)["result"].(map[string]any)
	info, _ := res["serverInfo"].(map[string]any)
	if info["name"] != "r2r-mcp" || info["version"] != "1.2.3" {
		t.Errorf("serverInfo = %v", info)
	}
	caps, _ := res["capabilities"].(map[string]any)
	for _, k := range []string{"tools", "resources", "logging", "prompts", "completions"} {
		if _, ok := caps[k]; !ok {
			t.Errorf("capabilities lack %s: %v", k, caps)
		}
	}
	if s, _ := res["instructions"].(string); !strings.Contains(s, "r2r_search") {
		t.Errorf("instructions = %q", s)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	res, _ = c.recv(t)["result"].(map[string]any)
	reg, err := New(Config{R2RURL: emu.URL, WorkDir: t.TempDir(), ConfigDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if tl, _ := res["tools"].([]any); len(tl) != len(reg.Tools()) {
		t.Errorf("tools/list returned %d tools, the registry has %d", len(tl), len(reg.Tools()))
	}
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	res, _ = c.recv(t)["result"].(map[string]any)
	if res["isError"] == true {
		t.Errorf("r2r_list_collections failed: %v", res)
	}
	if emu.Count("GET /v3/collections") == 0 {
		t.Error("the tool call did not reach R2R")
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after ctx was cancelled")
	}
	if !strings.Contains(logs.String(), "client initialized") {
		t.Errorf("logs lack the client line:\n%s", logs.String())
	}
}
