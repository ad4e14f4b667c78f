package keyringit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// This file is the end-to-end harness of the auth tests: it builds the real r2r-mcp
// binary, runs its commands with a minimal environment, drives `r2r-mcp serve` with
// mcp-go's stdio client, and serves the R2R emulator behind a recorder that collects every
// secret crossing the wire. The keyring integration test and cmd's auth end-to-end tests
// share it. It is a non-test file only so that both packages can import it.

// BuildBinary builds r2r-mcp from this module into a temporary directory removed when t
// ends, with the race detector when the test binary has it (so races across the process
// boundary surface too). Build once per top-level test and hand the path to subtests.
func BuildBinary(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	name := "r2r-mcp"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(t.TempDir(), name)
	args := []string{"build"}
	if raceEnabled() {
		args = append(args, "-race")
	}
	args = append(args, "-ldflags", "-X github.com/r2r-mcp/r2r-mcp/cmd.version=e2e", "-o", bin, ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// MinimalEnv is the whole environment of a child r2r-mcp: PATH, a private HOME with its
// XDG directories under it, and extra ("K=V"). Nothing else is inherited: no R2R_*
// variable and no D-Bus address unless extra passes one.
func MinimalEnv(t testing.TB, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
	return append(env, extra...)
}

// EnvValue returns the value of key in env ("" when absent).
func EnvValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// Result is what one finished r2r-mcp command printed, and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs bin with args in dir with exactly env, stdin as its input, and waits up to a
// minute for it.
func Run(t testing.TB, bin, dir string, env []string, stdin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := Result{Stdout: out.String(), Stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("r2r-mcp %s: %v", strings.Join(args, " "), err)
	}
	if strings.Contains(res.Stderr, "DATA RACE") {
		t.Errorf("r2r-mcp %s: data race:\n%s", strings.Join(args, " "), res.Stderr)
	}
	return res
}

// Session is a running `r2r-mcp serve` with mcp-go's client connected over its stdio.
type Session struct {
	t      testing.TB
	cmd    *exec.Cmd
	client *mcpclient.Client
	pipe   *io.PipeReader // the client's copy of the server's stdout
	stdout *lockedBuffer  // every byte the server wrote to stdout
	stderr *lockedBuffer
	done   chan struct{}
	err    error

	closeOnce sync.Once
	code      int
}

// Serve starts `bin serve args...` in dir with exactly env and initializes an mcp-go
// client over its stdin and stdout. The process is stopped when t ends if Close was not
// called.
func Serve(ctx context.Context, t testing.TB, bin, dir string, env []string, args ...string) *Session {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	s := &Session{t: t, cmd: cmd, pipe: pr, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout = io.MultiWriter(s.stdout, pw)
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.err = cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	s.client = mcpclient.NewClient(transport.NewIO(pr, stdin, nil))
	t.Cleanup(func() { s.Close() })
	if err := s.client.Start(ctx); err != nil {
		t.Fatalf("mcp-go client start: %v", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "r2r-mcp-auth-e2e", Version: "1.0.0"}
	if _, err := s.client.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, s.stderr.String())
	}
	return s
}

// ToolResult is one tools/call answer: its text, and the whole result as JSON (text
// content and structuredContent) for scanning.
type ToolResult struct {
	IsError bool
	Text    string
	JSON    string
	// Structured is structuredContent decoded into a generic map (nil when absent).
	Structured map[string]any
}

// Call calls tool name with args.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) (ToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		return ToolResult{}, err
	}
	out := ToolResult{IsError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	b, err := json.Marshal(res)
	if err != nil {
		return ToolResult{}, err
	}
	out.JSON = string(b)
	if res.StructuredContent != nil {
		sb, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(sb, &out.Structured)
	}
	return out, nil
}

// Stderr returns what the server wrote to stderr so far.
func (s *Session) Stderr() string { return s.stderr.String() }

// Close closes the client (and with it the server's stdin), waits for the server to exit
// and checks that it exited 0, wrote nothing but JSON-RPC to stdout and had no data race.
// It returns the complete stdout and stderr.
func (s *Session) Close() (stdout, stderr string) {
	s.closeOnce.Do(func() {
		_ = s.client.Close()
		// A client that stopped reading must not block the server's last writes.
		go func() { _, _ = io.Copy(io.Discard, s.pipe) }()
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			s.t.Errorf("r2r-mcp serve did not exit within 15 s of stdin closing")
		}
		var ee *exec.ExitError
		switch {
		case errors.As(s.err, &ee):
			s.code = ee.ExitCode()
		case s.err != nil:
			s.code = -1
		}
		if s.code != 0 {
			s.t.Errorf("r2r-mcp serve exited with %d (%v)\nstderr:\n%s", s.code, s.err, s.stderr.String())
		}
		if strings.Contains(s.stderr.String(), "DATA RACE") {
			s.t.Errorf("r2r-mcp serve: data race:\n%s", s.stderr.String())
		}
		sc := bufio.NewScanner(strings.NewReader(s.stdout.String()))
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for n := 1; sc.Scan(); n++ {
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.JSONRPC != "2.0" {
				s.t.Errorf("stdout line %d is not JSON-RPC 2.0: %.200q", n, sc.Text())
			}
		}
	})
	return s.stdout.String(), s.stderr.String()
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// RecordingR2R is the R2R emulator behind a listener that collects every credential that
// crosses the wire: access and refresh tokens and API keys in responses, and the Bearer
// tokens and X-API-Key values of requests.
type RecordingR2R struct {
	*r2rtest.Emulator
	// URL is the base URL without a trailing slash.
	URL string

	mu      sync.Mutex
	secrets map[string]bool
}

var (
	jwtPattern    = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
	apiKeyPattern = regexp.MustCompile(`key_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
)

// NewRecordingR2R starts an emulator with opts on a loopback port; it stops when t ends.
func NewRecordingR2R(t testing.TB, opts r2rtest.Options) *RecordingR2R {
	t.Helper()
	r := &RecordingR2R{Emulator: r2rtest.New(opts), secrets: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	r.URL = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		r.Emulator.Close()
	})
	return r
}

func (r *RecordingR2R) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		r.add(tok)
	}
	r.add(req.Header.Get("X-API-Key"))
	tw := &teeWriter{ResponseWriter: w}
	r.Emulator.ServeHTTP(tw, req)
	body := tw.body.String()
	for _, m := range jwtPattern.FindAllString(body, -1) {
		r.add(m)
	}
	for _, m := range apiKeyPattern.FindAllString(body, -1) {
		r.add(m)
	}
}

func (r *RecordingR2R) add(s string) {
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	r.mu.Lock()
	r.secrets[s] = true
	r.mu.Unlock()
}

// Credentials returns every token and API key seen so far, sorted.
func (r *RecordingR2R) Credentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// teeWriter copies the response body aside (the emulator's responses are small).
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.body.Write(b)
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets the emulator's Down mode drop connections through the wrapper.
func (t *teeWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := t.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("hijack not supported")
	}
	return h.Hijack()
}

// SecretVariants returns what must never be printed for one secret: the secret itself
// and, for an R2R API key "key_PUBLIC.RAW", RAW and its first 8 characters (the public
// "key_PUBLIC" part is an identifier, not a secret); for a JWT, its signature.
func SecretVariants(secret string) []string {
	out := []string{secret}
	if pub, raw, ok := strings.Cut(secret, "."); ok && strings.HasPrefix(pub, "key_") && !strings.Contains(raw, ".") {
		out = append(out, raw)
		if len(raw) > 8 {
			out = append(out, raw[:8])
		}
	}
	if parts := strings.Split(secret, "."); len(parts) == 3 && strings.HasPrefix(secret, "eyJ") {
		out = append(out, parts[2])
	}
	return out
}

// FindSecrets returns, for each text in texts (name → content) that contains one of the
// secrets (or a variant of it, see SecretVariants), a line naming both without quoting
// the secret.
func FindSecrets(texts map[string]string, secrets []string) []string {
	var leaks []string
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, s := range secrets {
		for _, v := range SecretVariants(s) {
			if len(v) < 8 {
				continue
			}
			for _, n := range names {
				if strings.Contains(texts[n], v) {
					leaks = append(leaks, fmt.Sprintf("%s contains secret #%d (a %d-character form of it)", n, i, len(v)))
				}
			}
		}
	}
	return leaks
}
