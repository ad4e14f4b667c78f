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

	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// Requests whose tool name or resource URI is longer than this are answered here:
// mcp-go would echo the whole name or URI in its error and log. MCP tool names are at
// most 128 characters; r2r-mcp's resource URIs are under 100 bytes.
const (
	maxToolNameBytes    = 128
	maxResourceURIBytes = 2048
)

// echoBytes is how much of a client's input an error message repeats.
const echoBytes = 200

// busyRetryAfter is the retry_after of a call turned away because too many are in flight.
const busyRetryAfter = 1.0 // seconds

// headBytes is how much of an oversized message is kept to find its id.
const headBytes = 512

// frontDoor reads the client's messages from stdin on its own goroutine. It hands each
// request to the request runner and every other message (notifications, answers to the
// server's own requests) to mcp-go's stdio server through a pipe. It never waits for a
// tool: a message too large, a call beyond the in-flight bound, or a tool name or URI too
// long to echo is answered here at once, so pings, cancellations and the end of input are
// always read promptly.
type frontDoor struct {
	maxLine int
	gate    *inflight
	out     io.Writer      // the serialised protocol writer
	calls   *requestRunner // serves the requests
	log     *slog.Logger
}

// pump copies messages from in to to until in ends (or to is closed), then closes to.
func (f *frontDoor) pump(in io.Reader, to *io.PipeWriter) {
	lr := &lineReader{r: bufio.NewReaderSize(in, 64<<10), max: f.maxLine}
	for {
		line, size, err := lr.next()
		switch {
		case size > int64(f.maxLine):
			f.tooLarge(line, size)
		case len(bytes.TrimSpace(line)) > 0 && f.admit(line) == toMCPGo:
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			if _, werr := to.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			to.CloseWithError(err)
			return
		}
	}
}

// route is where the front door sent a message.
type route int

const (
	toMCPGo  route = iota // mcp-go's stdio server reads it: a notification or a response
	answered              // answered here (refused)
	toRunner              // a request, served by the request runner
)

// admit decides where the message goes, answering it at once when it is refused.
func (f *frontDoor) admit(line []byte) route {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return toMCPGo // mcp-go answers with a parse error
	}
	key := idKey(m.ID)
	if key == "" || m.Method == "" {
		return toMCPGo // a notification, an answer to a request of the server's, or invalid
	}
	if m.Method != string(mcp.MethodToolsCall) && m.Method != string(mcp.MethodResourcesRead) {
		f.calls.start(key, false, m.ID, line)
		return toRunner
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(m.Params, &p) // a malformed params object is mcp-go's to answer
	tool := m.Method == string(mcp.MethodToolsCall)
	switch {
	case tool && len(p.Name) > maxToolNameBytes:
		f.replyError(m.ID, mcp.INVALID_PARAMS, fmt.Sprintf("Unknown tool %q (a name of %d bytes; tool names have at most %d). Call tools/list for the tools.",
			cleantext.Clip(p.Name, echoBytes), len(p.Name), maxToolNameBytes), nil)
		return answered
	case !tool && len(p.URI) > maxResourceURIBytes:
		f.replyError(m.ID, mcp.RESOURCE_NOT_FOUND, fmt.Sprintf("Resource not found: %q (a URI of %d bytes). Call resources/list and resources/templates/list for the resources.",
			cleantext.Clip(p.URI, echoBytes), len(p.URI)), nil)
		return answered
	case !tool:
		if msg := tools.ResourceURIProblem(p.URI); msg != "" {
			f.replyError(m.ID, mcp.INVALID_PARAMS, msg, nil)
			return answered
		}
	}
	if f.gate.admit(key) {
		f.calls.start(key, true, m.ID, line)
		return toRunner
	}
	msg := fmt.Sprintf("r2r-mcp is busy: %d calls are already in flight (the limit, --max-inflight). Retry in %g s.", f.gate.max, busyRetryAfter)
	f.log.Warn("call refused: too many in flight", "method", m.Method, "limit", f.gate.max)
	if tool {
		secs := busyRetryAfter
		f.reply(m.ID, toolerr.Result(toolerr.Info{Type: "busy", Code: toolerr.CodeRateLimited, Retryable: true,
			RetryAfter: &secs, Message: msg}))
		return answered
	}
	f.replyError(m.ID, toolerr.CodeRateLimited, msg, map[string]any{"retry_after": busyRetryAfter})
	return answered
}

// tooLarge answers a message over the size limit, with its id when the first bytes give it.
func (f *frontDoor) tooLarge(head []byte, size int64) {
	f.log.Warn("message refused: larger than --max-request-bytes", "bytes", size, "limit", f.maxLine)
	f.replyError(leadingID(head), mcp.INVALID_REQUEST, fmt.Sprintf("Request too large: the message has %d bytes and r2r-mcp reads at most %d (--max-request-bytes). "+
		"Nothing of it was processed; send smaller arguments.", size, f.maxLine), nil)
}

func (f *frontDoor) reply(rawID json.RawMessage, result any) {
	var id mcp.RequestId
	_ = json.Unmarshal(rawID, &id)
	f.write(mcp.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Result: result})
}

func (f *frontDoor) replyError(rawID json.RawMessage, code int, msg string, data any) {
	var id mcp.RequestId
	if rawID != nil {
		_ = json.Unmarshal(rawID, &id)
	}
	f.write(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: id,
		Error: mcp.JSONRPCErrorDetails{Code: code, Message: msg, Data: data}})
}

func (f *frontDoor) write(msg mcp.JSONRPCMessage) {
	writeMessage(f.out, f.log, msg)
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
		if t == "id" && idKey(v) != "" {
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
