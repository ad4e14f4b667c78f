package servertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// NewMCPGoClient starts mark3labs/mcp-go's client with opts over p's stdio (it reads
// p.Stdout, so no RawConn may share p); the caller initializes it. It fails the test when
// the client cannot start.
func NewMCPGoClient(ctx context.Context, t testing.TB, p *Proc, opts ...mcpclient.ClientOption) *mcpclient.Client {
	t.Helper()
	c := mcpclient.NewClient(transport.NewIO(p.Stdout, p.Stdin, nil), opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("mcp-go client start: %v", err)
	}
	return c
}

// Session is a running `r2r-mcp serve` with an initialized mcp-go client on its stdio.
type Session struct {
	p      *Proc
	client *mcpclient.Client
	notes  *notifications

	closeOnce sync.Once
}

// Serve starts `r2r-mcp serve args...` in dir with exactly env (see Start) and initializes
// an mcp-go client over its stdio on the newest protocol version. When t ends the session
// is closed (see Close) if it was not.
func Serve(ctx context.Context, t testing.TB, dir string, env []string, args ...string) *Session {
	t.Helper()
	p := Start(t, dir, env, append([]string{"serve"}, args...)...)
	s := &Session{p: p, notes: newNotifications()}
	t.Cleanup(func() { s.Close() })
	s.client = NewMCPGoClient(ctx, t, p)
	s.client.OnNotification(s.notes.record)
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "r2r-mcp-auth-e2e", Version: "1.0.0"}
	if _, err := s.client.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, p.Stderr.String())
	}
	return s
}

// ToolResult is one tools/call answer as mcp-go's client sees it.
type ToolResult struct {
	IsError bool
	// Text is the result's text content, one line per block.
	Text string
	// Structured is structuredContent decoded into a generic map (nil when absent).
	Structured map[string]any
	// Meta is the result's _meta fields (nil when absent).
	Meta map[string]any
	// Raw is the result as the client decoded it.
	Raw *mcp.CallToolResult
}

// NewToolResult converts an mcp-go tools/call result; it fails when structuredContent is
// not a JSON object.
func NewToolResult(res *mcp.CallToolResult) (ToolResult, error) {
	out := ToolResult{IsError: res.IsError, Raw: res}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			err = json.Unmarshal(b, &out.Structured)
		}
		if err != nil {
			return ToolResult{}, fmt.Errorf("structuredContent: %w", err)
		}
	}
	if res.Meta != nil {
		out.Meta = res.Meta.AdditionalFields
	}
	return out, nil
}

// JSON returns the whole result (text content, structuredContent, _meta) as JSON, for
// scanning.
func (r ToolResult) JSON() string {
	b, err := json.Marshal(r.Raw)
	if err != nil {
		return fmt.Sprintf("(result not encodable: %v)", err)
	}
	return string(b)
}

// Call calls tool name with args; a protocol error is returned, a tool error is a result
// with IsError set.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) (ToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.client.CallTool(ctx, req)
	if err != nil {
		return ToolResult{}, err
	}
	return NewToolResult(res)
}

// Stderr returns what the server wrote to stderr so far.
func (s *Session) Stderr() string { return s.p.Stderr.String() }

// Close closes the client (and with it the server's stdin), waits up to 15 s for the
// server to exit and fails the test unless it exited 0, had no data race and wrote nothing
// but JSON-RPC 2.0 to stdout. It returns the complete stdout and stderr; later calls only
// return them.
func (s *Session) Close() (stdout, stderr string) {
	s.closeOnce.Do(func() {
		t := s.p.t
		if s.client != nil {
			_ = s.client.Close()
		} else {
			s.p.Stdin.Close() // the client never started
		}
		if !s.p.awaitExit(15 * time.Second) {
			t.Errorf("r2r-mcp serve did not exit within 15 s of stdin closing")
		}
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(s.p.err, &ee):
			code = ee.ExitCode()
		case s.p.err != nil:
			code = -1
		}
		if code != 0 {
			t.Errorf("r2r-mcp serve exited with %d (%v)\nstderr:\n%s", code, s.p.err, s.p.Stderr.String())
		}
		if strings.Contains(s.p.Stderr.String(), "DATA RACE") {
			t.Errorf("r2r-mcp serve: data race:\n%s", s.p.Stderr.String())
		}
		s.p.CheckStdout()
	})
	return s.p.StdoutText(), s.p.Stderr.String()
}
