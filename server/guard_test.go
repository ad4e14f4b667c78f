package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// overloadConfig is a server against a hung R2R without rate limits, so every call stays
// in flight until it is cancelled.
func overloadConfig(t *testing.T, r2rURL string) Config {
	opts := DefaultOptions()
	opts.Tools.RateLimit, opts.Tools.RAGRateLimit, opts.Cache.MaxBytes, opts.Retry.MaxRetries = 0, 0, 0, 0 // no limit, no cache, no retry
	opts.Tools.SearchTimeout, opts.Tools.CallTimeout = time.Hour, time.Hour
	return Config{R2RURL: r2rURL, URLSource: "test", WorkDir: t.TempDir(),
		ConfigDir: t.TempDir(), Options: opts}
}

// TestOverloadAnswersPingAndStopsOnEOF: with 500 calls sent against a hung R2R, the calls
// beyond --max-inflight are answered "busy" at once, a ping is answered while the admitted
// ones still hang, and closing stdin ends Run with those calls cancelled. Times are
// measured and logged, not asserted.
func TestOverloadAnswersPingAndStopsOnEOF(t *testing.T) {
	const calls, limit = 500, 64
	cfg := overloadConfig(t, r2rtest.NewHangingServer(t))
	cfg.Options.MaxInflight = limit
	c, done := runInProcess(context.Background(), cfg)
	c.send(t, initLine)
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	msgs := make(chan map[string]any, calls+10)
	go func() {
		for c.out.Scan() {
			var m map[string]any
			if json.Unmarshal(c.out.Bytes(), &m) == nil {
				msgs <- m
			}
		}
		close(msgs)
	}()
	for i := range calls {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"q%d"}}}`, 100+i, i))
	}
	busy := 0
	for busy < calls-limit {
		m := <-msgs
		res, _ := m["result"].(map[string]any)
		meta, _ := res["_meta"].(map[string]any)
		info, _ := meta["r2r-mcp/error"].(map[string]any)
		if info["type"] != "busy" || info["code"] != float64(-32004) || info["retry_after"] != float64(1) {
			t.Fatalf("a call beyond the limit got %v, want a busy error with retry_after", m)
		}
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if !strings.Contains(text, "Retry in 1 s") {
			t.Errorf("busy text = %q", text)
		}
		busy++
	}
	start := time.Now()
	c.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if m := <-msgs; m["id"] != "ping" {
		t.Fatalf("first answer after the ping = %v, want the ping's (the admitted calls still hang)", m)
	}
	pingTook := time.Since(start)

	start = time.Now()
	c.in.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v after EOF", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after stdin closed with calls in flight")
	}
	t.Logf("%d calls, %d admitted: ping answered in %v, Run returned %v after EOF", calls, limit, pingTook, time.Since(start))
}

// TestOversizedMessage: a message over --max-request-bytes gets a JSON-RPC error with its
// id, and the server keeps serving.
func TestOversizedMessage(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	cfg := overloadConfig(t, emu.URL)
	cfg.Options.MaxRequestBytes = 64 << 10
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	big := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"` +
		strings.Repeat("a", 1<<20) + `"}}}`
	c.send(t, big)
	m := c.recv(t)
	e, _ := m["error"].(map[string]any)
	if m["id"] != float64(7) || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "--max-request-bytes") {
		t.Fatalf("answer = %v", m)
	}
	c.send(t, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if m := c.recv(t); m["id"] != float64(8) {
		t.Fatalf("after an oversized message: %v", m)
	}
}

// TestHugeNameAndURINotEchoed: a 1 MB tool name or resource URI is answered without
// echoing more than a few hundred bytes of it.
func TestHugeNameAndURINotEchoed(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	c, done := runInProcess(context.Background(), overloadConfig(t, emu.URL))
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	huge := strings.Repeat("\x1b[31mx", 200<<10)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":` + jsonString(huge) + `,"arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":` + jsonString("r2r://documents/"+huge) + `}}`,
	} {
		c.send(t, line)
		raw := c.recvRaw(t)
		if len(raw) > 1024 {
			t.Errorf("answer of %d bytes echoes the input: %.200s", len(raw), raw)
		}
		if strings.Contains(raw, `\u001b`) {
			t.Errorf("answer carries a control character: %.200s", raw)
		}
	}
}

// TestMalformedResourceURI: a document URI whose id is no UUID is answered with the
// handler's own words (what a document URI looks like), as mcp-go reports a handler's error
// on every transport (-32603 in mcp-go v1.2.1); a well-formed one still reaches the handler.
func TestMalformedResourceURI(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	c, done := runInProcess(context.Background(), overloadConfig(t, emu.URL))
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	for i, uri := range []string{"r2r://documents/not-a-uuid", "r2r://documents/", "r2r://documents/9fbe403b-c11c-5aae-8ade"} {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read","params":{"uri":%s}}`, 10+i, jsonString(uri)))
		m := c.recv(t)
		e, _ := m["error"].(map[string]any)
		msg := fmt.Sprint(e["message"])
		if m["id"] != float64(10+i) || !strings.Contains(msg, "must be a UUID") && !strings.Contains(msg, "expected r2r://documents/{document_id}") {
			t.Errorf("%s: %v", uri, m)
		}
	}
	c.send(t, `{"jsonrpc":"2.0","id":20,"method":"resources/read","params":{"uri":"r2r://documents/9fbe403b-c11c-5aae-8ade-ef22980c3ad1"}}`)
	if m := c.recv(t); m["id"] != float64(20) || strings.Contains(fmt.Sprint(m), "must be a UUID") {
		t.Errorf("a well-formed URI: %v", m)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (c *pipeConn) recvRaw(t *testing.T) string {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("no response: %v", c.out.Err())
	}
	return c.out.Text()
}

func TestLineReader(t *testing.T) {
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, in string
		max      int
		want     []string // lines, "!N" for an oversized line of N bytes
	}{
		{"lines", "a\nbb\n", 10, []string{"a\n", "bb\n", ""}},
		{"last line without newline", "a\nbb", 10, []string{"a\n", "bb"}},
		{"oversized line skipped", "a\n" + long + "\nb\n", 100, []string{"a\n", "!301", "b\n", ""}},
		{"oversized last line", long, 100, []string{"!300"}},
		{"exactly max", "123456789\n", 10, []string{"123456789\n", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lr := &lineReader{r: bufio.NewReaderSize(strings.NewReader(tt.in), 16), max: tt.max}
			var got []string
			for {
				line, size, err := lr.next()
				if size > int64(tt.max) {
					if len(line) > headBytes {
						t.Errorf("kept %d bytes of an oversized line", len(line))
					}
					got = append(got, fmt.Sprintf("!%d", size))
				} else {
					got = append(got, string(line))
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("lines = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLeadingID(t *testing.T) {
	tests := []struct {
		msg  string
		lead string // leadingID, "" = nil
	}{
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, "5"},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":1}}`, `"a"`},
		{`{"jsonrpc":"2.0","result":{"x":[1,2]},"id":5.0}`, "5.0"},
		{`{"jsonrpc":"2.0","id":1,"method":"roots/list"}`, "1"},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, ""},
		{`{"jsonrpc":"2.0","params":{"id":9,"q":"aaaa`, ""},
		{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"q":"aaaa`, "12"},
		{`not json`, ""},
	}
	for _, tt := range tests {
		if got := string(leadingID([]byte(tt.msg))); got != tt.lead {
			t.Errorf("leadingID(%s) = %q, want %q", tt.msg, got, tt.lead)
		}
	}
}

// Server.MaxInflight is --max-inflight, the bound serve --http applies.
func TestServerMaxInflight(t *testing.T) {
	for _, tc := range []struct{ set, want int }{
		{DefaultOptions().MaxInflight, 64},
		{1, 1},
		{512, 512},
	} {
		cfg := Config{R2RURL: "http://127.0.0.1:1", Options: DefaultOptions()}
		cfg.Options.MaxInflight = tc.set
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.MaxInflight(); got != tc.want {
			t.Errorf("MaxInflight %d: got %d, want %d", tc.set, got, tc.want)
		}
		s.Close()
	}
}
