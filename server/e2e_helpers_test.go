package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The end-to-end tests build the real binary once per test run and drive it over real
// stdio, with real MCP clients, against the R2R emulator.

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary returns the path of r2r-mcp built from this checkout (with -race when the tests
// run with it, so races across the process boundary surface too).
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "r2r-mcp-e2e-")
		if buildErr != nil {
			return
		}
		name := "r2r-mcp"
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		binPath = filepath.Join(binDir, name)
		args := []string{"build"}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "-ldflags", "-X github.com/r2r-mcp/r2r-mcp/cmd.version=e2e", "-o", binPath, "..")
		cmd := exec.Command("go", args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// env is a hermetic environment for the server: a fresh HOME and config dir, no inherited
// R2R settings or keyring, R2R at r2rURL. extra entries ("K=V") are added last.
func env(t testing.TB, r2rURL string, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	out := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "R2R_"), k == "HOME", k == "XDG_CONFIG_HOME",
			k == "DBUS_SESSION_BUS_ADDRESS", k == "APPDATA", k == "USERPROFILE":
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"HOME="+home,
		"USERPROFILE="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"APPDATA="+filepath.Join(home, "AppData"),
		"R2R_MCP_CONFIG_DIR="+filepath.Join(home, ".config", "r2r-mcp"),
	)
	if r2rURL != "" {
		out = append(out, "R2R_API_URL="+r2rURL)
	}
	return append(out, extra...)
}

// gitProject creates a directory that looks like a git checkout named name, with files.
func gitProject(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Resolve symlinks (macOS /var → /private/var) so paths compare equal to the server's.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return root
}

// proc is a running r2r-mcp serve whose stdout is checked line by line.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *io.PipeReader // what the client reads: a copy of the child's stdout
	stderr *syncBuffer
	lines  *lineRecorder
	done   chan struct{}
	err    error // Wait's result, valid after done is closed
}

// start runs the binary with args in dir. Its stdout is teed: every byte goes both to the
// returned reader (for an MCP client) and to a recorder that checks each line is a
// JSON-RPC 2.0 message; the check runs at cleanup.
func start(t testing.TB, dir string, environ []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = environ
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: pr, stderr: &syncBuffer{}, lines: &lineRecorder{}, done: make(chan struct{})}
	cmd.Stdout = io.MultiWriter(p.lines, pw)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		// A client that stopped reading must not block the copy of the child's stdout.
		go io.Copy(io.Discard, pr)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
			t.Errorf("r2r-mcp did not exit within 10 s of stdin closing\nstderr:\n%s", p.stderr.String())
		}
		p.checkStdout()
		if t.Failed() {
			lines, _ := p.lines.snapshot()
			if len(lines) > 20 {
				lines = lines[len(lines)-20:]
			}
			for i, l := range lines {
				lines[i] = truncate(l)
			}
			t.Logf("r2r-mcp stderr:\n%s\nlast stdout lines:\n%s", p.stderr.String(), strings.Join(lines, "\n"))
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code, failing the test when it
// has not exited after limit (a functional deadline, not a performance assertion).
func (p *proc) wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("r2r-mcp still running %v later; killed\nstderr:\n%s", limit, p.stderr.String())
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Fatalf("wait: %v", p.err)
	}
	return 0
}

// checkStdout fails the test unless every line the child wrote to stdout is a JSON-RPC 2.0
// request, notification or response.
func (p *proc) checkStdout() {
	p.t.Helper()
	lines, partial := p.lines.snapshot()
	if partial != "" {
		p.t.Errorf("stdout ends with an unterminated line: %q", truncate(partial))
	}
	for i, l := range lines {
		if err := validJSONRPC(l); err != nil {
			p.t.Errorf("stdout line %d is not JSON-RPC 2.0 (%v): %q", i+1, err, truncate(l))
		}
	}
}

// validJSONRPC checks one line against JSON-RPC 2.0: an object with jsonrpc "2.0" that is
// a request (method + id), a notification (method, no id) or a response (id + exactly one
// of result and error, the error with an integer code and a message).
func validJSONRPC(line string) error {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return fmt.Errorf(`jsonrpc is %s, want "2.0"`, m["jsonrpc"])
	}
	id, hasID := m["id"]
	if hasID {
		switch {
		case string(id) == "null":
		case len(id) > 0 && id[0] == '"':
		default:
			var n json.Number
			if json.Unmarshal(id, &n) != nil {
				return fmt.Errorf("id %s is neither a string, a number nor null", id)
			}
		}
	}
	if method, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(method, &s) != nil || s == "" {
			return errors.New("method is not a non-empty string")
		}
		if _, r := m["result"]; r {
			return errors.New("a request carries a result")
		}
		return nil
	}
	if !hasID {
		return errors.New("neither a method nor an id")
	}
	_, hasResult := m["result"]
	rawErr, hasError := m["error"]
	if hasResult == hasError {
		return errors.New("a response needs exactly one of result and error")
	}
	if hasError {
		var e struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		}
		if err := json.Unmarshal(rawErr, &e); err != nil || e.Code == nil || e.Message == nil {
			return fmt.Errorf("error object %s lacks an integer code or a message", rawErr)
		}
		if _, err := e.Code.Int64(); err != nil {
			return fmt.Errorf("error code %s is not an integer", *e.Code)
		}
	} else if string(id) == "null" {
		return errors.New("a successful response with a null id")
	}
	return nil
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// lineRecorder keeps every complete line written to it.
type lineRecorder struct {
	mu      sync.Mutex
	lines   []string
	partial bytes.Buffer
}

func (r *lineRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial.Write(b)
	for {
		buf := r.partial.Bytes()
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		r.lines = append(r.lines, strings.TrimSuffix(string(buf[:i]), "\r"))
		r.partial.Next(i + 1)
	}
	return len(b), nil
}

func (r *lineRecorder) snapshot() ([]string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...), r.partial.String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rawConn speaks newline-delimited JSON-RPC to a proc directly, for tests that send what
// no SDK client would.
type rawConn struct {
	p  *proc
	sc *bufio.Scanner
}

func newRawConn(p *proc) *rawConn {
	sc := bufio.NewScanner(p.stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &rawConn{p: p, sc: sc}
}

func (c *rawConn) send(line string) {
	c.p.t.Helper()
	if _, err := io.WriteString(c.p.stdin, line+"\n"); err != nil {
		c.p.t.Fatalf("write to stdin: %v", err)
	}
}

// next returns the next stdout message, failing the test after limit.
func (c *rawConn) next(limit time.Duration) map[string]any {
	c.p.t.Helper()
	type res struct {
		m   map[string]any
		err error
	}
	ch := make(chan res, 1)
	go func() {
		if !c.sc.Scan() {
			err := c.sc.Err()
			if err == nil {
				err = io.EOF
			}
			ch <- res{err: err}
			return
		}
		var m map[string]any
		err := json.Unmarshal(c.sc.Bytes(), &m)
		ch <- res{m: m, err: err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.p.t.Fatalf("read stdout: %v\nstderr:\n%s", r.err, c.p.stderr.String())
		}
		return r.m
	case <-time.After(limit):
		c.p.t.Fatalf("no message on stdout within %v\nstderr:\n%s", limit, c.p.stderr.String())
		return nil
	}
}

// ctxFor returns a context bounded by limit for one end-to-end scenario.
func ctxFor(t testing.TB, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}
