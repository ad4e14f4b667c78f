//go:build linux

package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

// ptyOutput collects what the program writes to the terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *ptyOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func TestLoginInteractivePromptsWithoutEchoingThePassword(t *testing.T) {
	f := newAuthFixture(t)
	f.env["R2R_API_URL"] = f.srv.URL // the URL prompt's default
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()

	out := &ptyOutput{}
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, ptmx) // ends with EIO once the tty side is closed
		close(copied)
	}()

	type result struct {
		stdout string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var stdout bytes.Buffer
		c := newLoginCmd(Deps{
			IO:     IOStreams{In: tty, Out: &stdout, ErrOut: tty},
			Build:  BuildInfo{Version: "test"},
			Getenv: func(k string) string { return f.env[k] },
		}, func(o *loginOptions) error { o.Env = f.authEnv(); return runLogin(o) })
		c.SilenceUsage, c.SilenceErrors = true, true
		c.SetArgs(nil)
		err := c.ExecuteContext(context.Background())
		done <- result{stdout.String(), err}
	}()

	has := func(s string) func() bool { return func() bool { return strings.Contains(out.String(), s) } }
	echoOff := func() bool {
		tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
		return err == nil && tio.Lflag&unix.ECHO == 0
	}

	waitUntil(t, "the URL prompt", has("R2R URL ["+f.srv.URL+"]: "), out.String)
	if _, err := ptmx.WriteString("\n"); err != nil { // accept the default
		t.Fatal(err)
	}
	waitUntil(t, "the email prompt", has("Email: "), out.String)
	if _, err := ptmx.WriteString(testEmail + "\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the password prompt", has("Password: "), out.String)
	// Type only once the terminal stopped echoing, as a person would after the prompt.
	waitUntil(t, "echo to be switched off", echoOff, out.String)
	if _, err := ptmx.WriteString(testPassword + "\n"); err != nil {
		t.Fatal(err)
	}

	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("login did not finish; terminal shows %q", out.String())
	}
	if res.err != nil {
		t.Fatalf("login: %v; terminal shows %q", res.err, out.String())
	}
	waitUntil(t, "the confirmation", has("✓ Logged in to "+f.srv.URL+" as "+testEmail), out.String)
	if echoOff() {
		t.Error("echo was not switched back on")
	}
	tty.Close()
	<-copied

	screen := out.String()
	if !strings.Contains(screen, "Email: "+testEmail) {
		t.Errorf("the email was not echoed: %q", screen)
	}
	if strings.Contains(screen, testPassword) {
		t.Errorf("the password was echoed: %q", screen)
	}
	if res.stdout != "" {
		t.Errorf("stdout %q", res.stdout)
	}
	sec, raw, err := f.keyringSecret()
	if err != nil || sec.Kind != auth.KindRefreshToken || strings.Contains(raw, testPassword) {
		t.Fatalf("stored %v, %v", sec, err)
	}
}
