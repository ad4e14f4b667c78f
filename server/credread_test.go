package server

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

// firstGetKeyring reports, at its first Get, whether initialize had been answered then.
type firstGetKeyring struct {
	answered *atomic.Bool
	once     sync.Once
	got      chan bool
}

func (k *firstGetKeyring) Get(string, string) (string, error) {
	k.once.Do(func() { k.got <- k.answered.Load() })
	return "", keyring.ErrNotFound
}
func (k *firstGetKeyring) Set(string, string, string) error { return nil }
func (k *firstGetKeyring) Delete(string, string) error      { return nil }

// markingWriter sets answered once a line with id 1 (initialize's answer) has been written.
type markingWriter struct {
	w        io.Writer
	answered *atomic.Bool
}

func (m markingWriter) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	if bytes.Contains(p, []byte(`"id":1,`)) {
		m.answered.Store(true)
	}
	return n, err
}

// TestStoredCredentialReadAfterFirstAnswer: Config.FirstAnswered (serve reads the stored
// credential there) runs without a tool call, and only after initialize was answered, so
// the read never shares the machine with the client's first wait.
func TestStoredCredentialReadAfterFirstAnswer(t *testing.T) {
	answered := &atomic.Bool{}
	kr := &firstGetKeyring{answered: answered, got: make(chan bool, 1)}
	res, err := auth.ResolveLazy(context.Background(), auth.Options{URLFlag: "http://127.0.0.1:1",
		Getenv: func(string) string { return "" }, Keyring: kr, ConfigDir: t.TempDir(), KeyringTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lc, ok := res.Credentials.(*auth.LazyCredentials)
	if !ok {
		t.Fatalf("credentials %T, want a stored credential read lazily", res.Credentials)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, stdin, stdout := newPipeConn()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{R2RURL: res.URL, Credentials: res.Credentials, WorkDir: t.TempDir(), ConfigDir: t.TempDir(),
			Options: DefaultOptions(), FirstAnswered: func() { go func() { _ = lc.Load(ctx) }() }},
			stdin, markingWriter{w: stdout, answered: answered})
	}()
	c.send(t, initLine)
	c.recv(t)
	select {
	case after := <-kr.got:
		if !after {
			t.Error("the stored credential was read before initialize was answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not read the stored credential after answering initialize")
	}
	cancel()
	<-done
}
