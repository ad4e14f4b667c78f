package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// rawID is the id of an answer exactly as it was written.
func rawID(t *testing.T, line string) string {
	t.Helper()
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return string(m.ID)
}

// TestIDsComeBackAsSent: every answer carries its request's id as the client wrote it, also
// where a float64 cannot hold it (mcp-go decodes ids into one); a cancellation naming such
// an id still cancels its call.
func TestIDsComeBackAsSent(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	c, done := runInProcess(context.Background(), overloadConfig(t, emu.URL))
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	for _, id := range []string{"9007199254740993", "12345678901234567890123", "-9007199254740995", "1.5", "7", `"a\u0000b"`, `"9007199254740993"`} {
		for _, req := range []string{
			`"method":"ping"`,
			`"method":"tools/call","params":{"name":"r2r_status","arguments":{}}`,
			`"method":"no/such/method"`,
		} {
			c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, id, req))
			if got := rawID(t, c.recvRaw(t)); got != id {
				t.Errorf("%s: answer's id %s, want %s", req, got, id)
			}
		}
	}

	emu.Configure(func(o *r2rtest.Options) { o.Latency = time.Hour })
	c.send(t, `{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the call to reach R2R")
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345678901234567890123}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Cancelled() == 1 }, "R2R to see the call abandoned")
	c.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if got := rawID(t, c.recvRaw(t)); got != `"after"` {
		t.Errorf("the cancelled call was answered: %s", got)
	}
}

// TestClientResponsesAreNotAnswered: a client's response to a request the server never
// sent, with an error or a result, gets no answer (mcp-go answers an error one "Method not
// found"); the session goes on.
func TestClientResponsesAreNotAnswered(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	c, done := runInProcess(context.Background(), overloadConfig(t, emu.URL))
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	for i, resp := range []string{
		`{"jsonrpc":"2.0","id":99,"error":{"code":-32601,"message":"Method not found"}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"boom"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	} {
		c.send(t, resp)
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, i))
		if got := rawID(t, c.recvRaw(t)); got != fmt.Sprintf(`"ping-%d"`, i) {
			t.Errorf("%s was answered (%s)", resp, got)
		}
	}
}

// TestInvalidIDsAreRefused: a request whose id is neither a string nor a number is answered
// "invalid request" and never served, so it cannot slip past --max-inflight.
func TestInvalidIDsAreRefused(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{Latency: time.Hour})
	cfg := overloadConfig(t, emu.URL)
	cfg.Options.MaxInflight = 1
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
	r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") == 1 }, "the admitted call to reach R2R")
	for _, id := range []string{`{"a":1}`, `[2]`, `true`} {
		c.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{"offset":3}}}`)
		m := c.recv(t)
		e, _ := m["error"].(map[string]any)
		if m["id"] != nil || e["code"] != float64(-32600) {
			t.Errorf("id %s: %v", id, m)
		}
	}
	// A null result is no result to mcp-go: the call is served, so it counts.
	c.send(t, `{"jsonrpc":"2.0","id":5,"result":null,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{"offset":4}}}`)
	if m := c.recv(t); !strings.Contains(fmt.Sprint(m), "busy") {
		t.Errorf("a call with a null result: %v", m)
	}
	c.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	c.recv(t)
	if n := emu.Count("GET /v3/collections"); n != 1 {
		t.Errorf("%d calls reached R2R with --max-inflight 1", n)
	}
}

// TestLargeRequestsAreBounded: 120 completion/complete requests of 3 MiB against a hung R2R
// are bounded by --max-inflight like tool calls: the rest are answered busy at once, and a
// ping is answered while the admitted ones hang.
func TestLargeRequestsAreBounded(t *testing.T) {
	const n, limit = 120, 4
	cfg := overloadConfig(t, r2rtest.NewHangingServer(t))
	cfg.Options.MaxInflight = limit
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	value := strings.Repeat("a", 3<<20)
	busy := 0
	go func() {
		for i := range n {
			// A prompt argument that names a collection is completed from R2R's list.
			c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"sync"},"argument":{"name":"collection","value":"%s"}}}`, 100+i, value))
		}
		c.send(t, `{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	}()
	for {
		m := c.recv(t)
		if m["id"] == "ping" {
			break
		}
		e, _ := m["error"].(map[string]any)
		if e["code"] != float64(-32004) {
			t.Fatalf("a request beyond the limit got %.300v", m)
		}
		busy++
	}
	if busy < n-limit {
		t.Errorf("%d of %d requests were answered busy with --max-inflight %d", busy, n, limit)
	}
}

// TestCancelRightBehindItsCall: a notifications/cancelled sent right behind its call
// cancels it, however soon mcp-go reads it after the call.
func TestCancelRightBehindItsCall(t *testing.T) {
	const n = 20
	logs := &r2rtest.SyncBuffer{}
	cfg := overloadConfig(t, r2rtest.NewHangingServer(t))
	cfg.Stderr = logs
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	for i := range n {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{"offset":%d}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, 10+i, i, 10+i))
	}
	r2rtest.Await(t, logs.Changed, func() bool {
		return strings.Count(logs.String(), "tool call cancelled before it answered") == n
	}, fmt.Sprintf("%d calls to be cancelled", n))
	c.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := rawID(t, c.recvRaw(t)); got != `"p"` {
		t.Errorf("a cancelled call was answered: %s", got)
	}
}

// TestSlotsOfRequestsMCPGoRefuses: a request mcp-go answers before dispatching it (a modern
// _meta without client capabilities, params it cannot read) reaches none of the hooks that
// end a request; its slot is still given back, so they cannot fill --max-inflight.
func TestSlotsOfRequestsMCPGoRefuses(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	cfg := overloadConfig(t, emu.URL)
	cfg.Options.MaxInflight = 1
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	for i, req := range []string{
		`"method":"tools/call","params":{"name":"r2r_status","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`"method":"tools/call","params":{"name":"r2r_status","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`"method":"tools/call","params":{"name":7}`,
		`"method":"resources/read","params":{"uri":[]}`,
	} {
		for range 3 {
			c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i, req))
			if m := c.recv(t); m["error"] == nil {
				t.Fatalf("%s: answer %v, want mcp-go's error", req, m)
			}
		}
	}
	c.send(t, `{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"r2r_status","arguments":{}}}`)
	res, _ := c.recv(t)["result"].(map[string]any)
	meta, _ := res["_meta"].(map[string]any)
	if info, _ := meta["r2r-mcp/error"].(map[string]any); res == nil || info["type"] == "busy" {
		t.Fatalf("a call after the refused requests: %v", res)
	}
}
