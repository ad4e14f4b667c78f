package servertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// splitLines returns the complete lines of out (without "\r\n" or "\n") and what follows
// the last newline.
func splitLines(out string) (lines []string, partial string) {
	for {
		i := strings.IndexByte(out, '\n')
		if i < 0 {
			return lines, out
		}
		lines = append(lines, strings.TrimSuffix(out[:i], "\r"))
		out = out[i+1:]
	}
}

// checkJSONRPCLines fails t unless every line of out is a JSON-RPC 2.0 message and out
// ends with a newline.
func checkJSONRPCLines(t testing.TB, out string) {
	t.Helper()
	lines, partial := splitLines(out)
	if partial != "" {
		t.Errorf("stdout ends with an unterminated line: %q", Truncate(partial))
	}
	for i, l := range lines {
		if err := ValidateJSONRPC(l); err != nil {
			t.Errorf("stdout line %d is not JSON-RPC 2.0 (%v): %q", i+1, err, Truncate(l))
		}
	}
}

// ValidateJSONRPC checks one line against JSON-RPC 2.0: an object with jsonrpc "2.0" that
// is a request (method + id), a notification (method, no id) or a response (id + exactly
// one of result and error, the error with an integer code and a message).
func ValidateJSONRPC(line string) error {
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

// Truncate shortens s to its first 300 bytes (and an ellipsis), for failure messages.
func Truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// RawConn speaks newline-delimited JSON-RPC to a Proc directly, for tests that send what
// no SDK client would. It reads the Proc's Stdout, so no client may share the Proc.
type RawConn struct {
	p  *Proc
	sc *bufio.Scanner
}

// NewRawConn returns a RawConn over p's stdin and stdout.
func NewRawConn(p *Proc) *RawConn {
	sc := bufio.NewScanner(p.Stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	return &RawConn{p: p, sc: sc}
}

// Send writes line and a newline to the child's stdin, failing the test when it cannot.
func (c *RawConn) Send(line string) {
	c.p.t.Helper()
	if _, err := io.WriteString(c.p.Stdin, line+"\n"); err != nil {
		c.p.t.Fatalf("write to stdin: %v", err)
	}
}

// Next returns the next message on the child's stdout decoded into a map, failing the
// test when none arrives within limit or it is not JSON.
func (c *RawConn) Next(limit time.Duration) map[string]any {
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
			c.p.t.Fatalf("read stdout: %v\nstderr:\n%s", r.err, c.p.Stderr.String())
		}
		return r.m
	case <-time.After(limit):
		c.p.t.Fatalf("no message on stdout within %v\nstderr:\n%s", limit, c.p.Stderr.String())
		return nil
	}
}

// Drain reads and discards the child's stdout until it ends, so its writes never block.
// Run it in its own goroutine; do not call Next afterwards.
func (c *RawConn) Drain() {
	for c.sc.Scan() {
	}
}
