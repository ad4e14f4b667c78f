package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// busyRetryAfter is the retry_after of a request turned away because too many are in flight.
const busyRetryAfter = 1.0 // seconds

// headBytes is how much of an oversized message is kept to find its id.
const headBytes = 512

// guard reads the client's messages from stdin on its own goroutine and hands them to
// mcp-go's stdio server through a pipe, adding only what mcp-go lacks. It never waits for a
// request to be served, so pings, cancellations and the end of input are always read at
// once. It answers, itself and at once:
//   - a message over the size bound (mcp-go reads a line of any length);
//   - a request beyond the in-flight bound, "busy" (mcp-go would queue it, and past its
//     queue serve it on its read loop, where it blocks reading);
//   - a request whose id is neither a string nor a number (JSON-RPC's ids; mcp-go serves it).
//
// It drops a client's response to a request the server never sent (mcp-go answers one that
// carries an error "Method not found"), and hands on, with a stand-in string id, a request
// whose numeric id mcp-go would not write back as it came (ids).
type guard struct {
	maxLine int
	gate    *inflight
	ids     *idTable
	asked   *askedTable
	out     io.Writer // the serialised protocol writer, for the guard's own answers
	to      *io.PipeWriter
	log     *slog.Logger
}

// pump copies messages from in to mcp-go until in ends (or the pipe is closed), then
// closes the pipe.
func (g *guard) pump(in io.Reader) {
	lr := &lineReader{r: bufio.NewReaderSize(in, 64<<10), max: g.maxLine}
	for {
		line, size, err := lr.next()
		switch {
		case size > int64(g.maxLine):
			g.tooLarge(line, size)
		case len(bytes.TrimSpace(line)) > 0:
			if pass := g.admit(line); pass != nil && !g.hand(pass) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			g.to.CloseWithError(err)
			return
		}
	}
}

// hand writes one message to mcp-go's input; false when that input is closed.
func (g *guard) hand(line []byte) bool {
	if line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	_, err := g.to.Write(line)
	return err == nil
}

// resend hands msg to mcp-go once more, off the caller's goroutine (an mcp-go hook).
func (g *guard) resend(msg []byte) {
	go g.hand(msg)
}

// message is what the guard reads of a client's message.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
	Params  json.RawMessage `json:"params"`
}

// admit decides what becomes of line: the message to hand to mcp-go (line itself, or line
// with a stand-in id), or nil when the guard answered or dropped it.
func (g *guard) admit(line []byte) []byte {
	var m message
	if json.Unmarshal(line, &m) != nil {
		return line // mcp-go answers a parse error
	}
	hasID := present(m.ID)
	if hasID && !validID(m.ID) {
		g.log.Warn("message refused: its id is neither a string nor a number", "method", m.Method)
		g.replyError(nil, mcp.INVALID_REQUEST, "Invalid request: a JSON-RPC id is a string or a number. Nothing of the message was processed.", nil)
		return nil
	}
	switch {
	case m.Method == "" && hasID && (present(m.Result) || present(m.Error)):
		if g.asked.take(idKey(m.ID)) {
			return line // the answer to a request of the server's (roots/list)
		}
		g.log.Debug("a response to no request of the server's was dropped", "id", string(m.ID))
		return nil
	case m.Method == string(mcp.MethodNotificationCancelled) && !hasID:
		return g.cancel(line, m.Params)
	case m.Method == "" || !hasID || m.JSONRPC != mcp.JSONRPC_VERSION || present(m.Result):
		return line // mcp-go serves a notification, and answers an invalid message
	}
	key := idKey(m.ID)
	if stand, ok := g.ids.standIn(m.ID); ok {
		line, key = withMember(line, "id", stand), idKey(stand)
	}
	if p := clipped(m.Method, m.Params); p != nil {
		line = withMember(line, "params", p)
	}
	if ungated(m.Method) || g.gate.admit(key) {
		return line
	}
	g.busy(m.ID, m.Method)
	return nil
}

// cancel passes on a notifications/cancelled (naming a stand-in id if its request got one)
// and tells the gate, which sends it again if the request was not yet registered.
func (g *guard) cancel(line []byte, params json.RawMessage) []byte {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return line
	}
	key := idKey(p.RequestID)
	if stand, ok := g.ids.lookup(p.RequestID); ok {
		line, key = withMember(line, "params", withMember(params, "requestId", stand)), idKey(stand)
	}
	if key != "" {
		g.gate.cancelled(key, line)
	}
	return line
}

// A tool name or resource URI longer than these is clipped before mcp-go reads it: mcp-go
// repeats the whole of an unknown name or URI in its error. MCP tool names have at most 128
// characters; r2r-mcp's resource URIs are under 100 bytes.
const (
	maxToolNameBytes    = 128
	maxResourceURIBytes = 2048
	echoBytes           = 200 // how much of a clipped name or URI is kept
)

// clipped returns params with an over-long tool name (tools/call) or resource URI
// (resources/read) clipped and cleaned of control characters; nil when nothing is too long.
// mcp-go then answers it as any name or URI it does not know, in its protocol's terms.
func clipped(method string, params json.RawMessage) json.RawMessage {
	field, limit := "", 0
	switch method {
	case string(mcp.MethodToolsCall):
		field, limit = "name", maxToolNameBytes
	case string(mcp.MethodResourcesRead):
		field, limit = "uri", maxResourceURIBytes
	}
	if field == "" || len(params) <= limit {
		return nil
	}
	var p map[string]json.RawMessage
	var v string
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p[field], &v) != nil || len(v) <= limit {
		return nil
	}
	short, err := json.Marshal(cleantext.Clip(cleantext.Line(v), echoBytes))
	if err != nil {
		return nil
	}
	return withMember(params, field, short)
}

// busy answers a request beyond the in-flight bound: a tool call with an error result the
// model reads, any other request with a JSON-RPC error.
func (g *guard) busy(id json.RawMessage, method string) {
	msg := fmt.Sprintf("r2r-mcp is busy: %d requests are already in flight (the limit, --max-inflight). Retry in %g s.", g.gate.max, busyRetryAfter)
	g.log.Warn("request refused: too many in flight", "method", method, "limit", g.gate.max)
	if method == string(mcp.MethodToolsCall) {
		secs := busyRetryAfter
		g.write(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), toolerr.Result(toolerr.Info{Type: "busy",
			Code: toolerr.CodeRateLimited, Retryable: true, RetryAfter: &secs, Message: msg})))
		return
	}
	g.replyError(id, toolerr.CodeRateLimited, msg, map[string]any{"retry_after": busyRetryAfter})
}

// tooLarge answers a message over the size limit, with its id when the first bytes give it.
func (g *guard) tooLarge(head []byte, size int64) {
	g.log.Warn("message refused: larger than --max-request-bytes", "bytes", size, "limit", g.maxLine)
	g.replyError(leadingID(head), mcp.INVALID_REQUEST, fmt.Sprintf("Request too large: the message has %d bytes and r2r-mcp reads at most %d (--max-request-bytes). "+
		"Nothing of it was processed; send smaller arguments.", size, g.maxLine), nil)
}

func (g *guard) replyError(id json.RawMessage, code int, msg string, data any) {
	var rid mcp.RequestId // null unless the message's id is known
	if id != nil {
		rid = mcp.NewRequestId(id)
	}
	g.write(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: rid, Error: mcp.NewJSONRPCErrorDetails(code, msg, data)})
}

func (g *guard) write(msg mcp.JSONRPCMessage) {
	b, err := json.Marshal(msg)
	if err != nil {
		g.log.Error("cannot encode an answer", "error", err)
		return
	}
	if _, err := g.out.Write(append(b, '\n')); err != nil {
		g.log.Debug("cannot write an answer", "error", err)
	}
}

// present reports whether a member was given a value other than null (encoding/json, and
// so mcp-go, reads a null as absent).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// validID reports whether raw, a JSON value, is a string or a number.
func validID(raw json.RawMessage) bool {
	switch raw[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// leadingID returns the top-level "id" of a JSON object whose text may be cut short, as
// far as the text reaches it; nil when it does not.
func leadingID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if t == "id" && validID(v) {
			return v
		}
	}
	return nil
}

// lineReader splits stdin into messages, holding at most max bytes of one.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line (with its newline when it had one) and its size. A line
// longer than max is read to its end but only its first headBytes are returned, with its
// full size. err is the read error that ended the input (io.EOF at the end).
func (l *lineReader) next() ([]byte, int64, error) {
	if cap(l.buf) > 1<<20 {
		l.buf = nil // give back the memory of an earlier large message
	}
	l.buf = l.buf[:0]
	var size int64
	for {
		chunk, err := l.r.ReadSlice('\n')
		size += int64(len(chunk))
		if size <= int64(l.max) {
			l.buf = append(l.buf, chunk...)
		} else {
			l.buf = l.buf[:min(len(l.buf), headBytes)]
			l.buf = append(l.buf, chunk[:min(len(chunk), headBytes-len(l.buf))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return l.buf, size, err
	}
}
