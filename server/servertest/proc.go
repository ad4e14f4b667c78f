package servertest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// Proc is a running r2r-mcp whose stdout is recorded and checked: when the test ends,
// every line it wrote there must be a JSON-RPC 2.0 message.
type Proc struct {
	// Cmd is the running command (for signals).
	Cmd *exec.Cmd
	// Stdin is the child's standard input; closing it asks serve to exit.
	Stdin io.WriteCloser
	// Stdout is a copy of the child's standard output, for one reader (an MCP client or a
	// RawConn). It returns EOF once the child has exited.
	Stdout io.ReadCloser
	// Stderr is everything the child wrote to its standard error so far.
	Stderr *r2rtest.SyncBuffer

	t         testing.TB
	pipe      *io.PipeReader
	stdout    *r2rtest.SyncBuffer // every byte the child wrote to stdout
	done      chan struct{}
	err       error // Wait's result, valid once done is closed
	drainOnce sync.Once
	checkOnce sync.Once
}

// exitGrace is how long the cleanup waits for the child after closing its stdin.
const exitGrace = 10 * time.Second

// Start runs the binary Build made with args in dir and exactly env (nil: the test's own
// environment); a command that would reach R2R's default address fails the test
// (DefaultURLUse). When t ends it closes the child's stdin, waits up to 10 s for it to exit
// (then kills it and fails the test), fails the test unless every line of its stdout is a
// JSON-RPC 2.0 message, and when the test failed logs the child's stderr and last stdout
// lines.
func Start(t testing.TB, dir string, env []string, args ...string) *Proc {
	t.Helper()
	if why := DefaultURLUse(args, env); why != "" {
		t.Fatal(why)
	}
	cmd := exec.Command(Build(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	p := &Proc{Cmd: cmd, Stdin: stdin, Stdout: pr, Stderr: &r2rtest.SyncBuffer{},
		t: t, pipe: pr, stdout: &r2rtest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout = io.MultiWriter(p.stdout, pw)
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stdin.Close()
		if !p.awaitExit(exitGrace) {
			t.Errorf("r2r-mcp did not exit within 10 s of stdin closing\nstderr:\n%s", p.Stderr.String())
		}
		p.CheckStdout()
		if t.Failed() {
			lines, _ := splitLines(p.stdout.String())
			if len(lines) > 20 {
				lines = lines[len(lines)-20:]
			}
			for i, l := range lines {
				lines[i] = Truncate(l)
			}
			t.Logf("r2r-mcp stderr:\n%s\nlast stdout lines:\n%s", p.Stderr.String(), strings.Join(lines, "\n"))
		}
	})
	return p
}

// awaitExit waits up to limit for the child to exit, killing it when it has not; it
// reports whether the child exited by itself. A reader that stopped reading Stdout must
// not block the child's last writes, so the rest of Stdout is discarded from here on.
func (p *Proc) awaitExit(limit time.Duration) bool {
	p.drainOnce.Do(func() { go io.Copy(io.Discard, p.pipe) })
	select {
	case <-p.done:
		return true
	case <-time.After(limit):
		p.Cmd.Process.Kill()
		<-p.done
		return false
	}
}

// Wait waits for the child to exit and returns its exit code, failing the test when it
// still runs after limit (a functional deadline, not a performance assertion; the child
// is killed then). Close Stdin or signal the child first.
func (p *Proc) Wait(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		p.Cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("r2r-mcp still running %v later; killed\nstderr:\n%s", limit, p.Stderr.String())
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

// CheckStdout fails the test unless every line the child wrote to stdout so far is a
// JSON-RPC 2.0 request, notification or response (see ValidateJSONRPC) and the output
// ends with a newline. Only the first call checks; the cleanup Start registers calls it
// after the child exited.
func (p *Proc) CheckStdout() {
	p.t.Helper()
	p.checkOnce.Do(func() { checkJSONRPCLines(p.t, p.stdout.String()) })
}

// StdoutText returns every byte the child wrote to stdout so far.
func (p *Proc) StdoutText() string { return p.stdout.String() }

// Result is what one finished r2r-mcp command printed, and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs the binary Build made with args in dir with exactly env and stdin as its
// input (refusing what Start refuses), waits up to a minute for it, and fails the test when it could not run or its
// stderr reports a data race.
func Run(t testing.TB, dir string, env []string, stdin string, args ...string) Result {
	t.Helper()
	if why := DefaultURLUse(args, env); why != "" {
		t.Fatal(why)
	}
	bin := Build(t)
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
