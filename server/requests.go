package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// requestRunner serves the client's requests, each on its own goroutine as mcp-go's stdio
// server would, beside that server, which reads the client's notifications and its answers
// to the server's own requests (roots/list). It hands a request to the same
// MCPServer.HandleMessage, with the same session context, and writes the response itself
// (encodeMessage): mcp-go's stdio server encodes a response with json.Marshal, which
// compacts and re-checks the whole JSON a json.Marshaler returns, and a tool result is
// one. On an r2r_search cache hit (about 8 KB) that second pass was a quarter of the
// call's time. Serving requests here also spares each one mcp-go's read loop: a pipe, a
// goroutine per line and four decodes of the message before HandleMessage's own.
type requestRunner struct {
	srv  *mcpserver.MCPServer
	gate *inflight // a request admitted under the in-flight bound gives its slot back here
	out  io.Writer // the serialised protocol writer (behind it, the cancelled-call filter)
	log  *slog.Logger

	once  sync.Once
	ready chan struct{}   // closed when ctx is set
	ctx   context.Context // the stdio session's context, from mcp-go's context func
	stop  <-chan struct{} // closed when serving ends; requests still waiting for ready give up
	wg    sync.WaitGroup  // requests being served

	answered     func() // nil, or run once the first response is written
	answeredOnce sync.Once
}

func newRequestRunner(srv *mcpserver.MCPServer, gate *inflight, out io.Writer, log *slog.Logger, stop <-chan struct{}) *requestRunner {
	return &requestRunner{srv: srv, gate: gate, out: out, log: log, ready: make(chan struct{}), stop: stop}
}

// sessionContext is the stdio server's context func (mcpserver.WithStdioContextFunc): it
// receives the context mcp-go serves its own messages with (the stdio session registered
// in it, cancelled when serving ends) and keeps it for the requests served here.
func (r *requestRunner) sessionContext(ctx context.Context) context.Context {
	r.once.Do(func() {
		r.ctx = ctx
		close(r.ready)
	})
	return ctx
}

// start serves the request msg (with JSON-RPC id, whose key is key) on a goroutine of its
// own; slot: the gate admitted it under key, and gets the slot back once it is answered.
// msg is copied, so the caller may reuse it.
func (r *requestRunner) start(key string, slot bool, id json.RawMessage, msg []byte) {
	id, msg = append(json.RawMessage(nil), id...), append([]byte(nil), msg...)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if slot {
			defer r.gate.done(key)
		}
		if !r.sessionReady() {
			return
		}
		resp := r.handle(id, msg)
		if resp == nil || !writeMessage(r.out, r.log, resp) {
			return
		}
		if r.answered != nil {
			r.answeredOnce.Do(r.answered)
		}
	}()
}

// sessionReady waits for the session's context; false when serving ended first. A request
// read before the end of input is answered even if the end came since (the select alone
// would pick at random between two closed channels).
func (r *requestRunner) sessionReady() bool {
	select {
	case <-r.ready:
		return true
	default:
	}
	select {
	case <-r.ready:
		return true
	case <-r.stop:
		return false
	}
}

// handle runs one request through mcp-go; a panic in mcp-go itself becomes an internal
// error (a tool handler's own panic is recovered inside the tool chain, with its cause).
func (r *requestRunner) handle(id json.RawMessage, msg []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("panic while serving a request", "panic", p)
			var rid mcp.RequestId
			_ = json.Unmarshal(id, &rid)
			resp = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: rid,
				Error: mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "Internal error in r2r-mcp while serving the request; it is logged. Send it again."}}
		}
	}()
	return r.srv.HandleMessage(r.ctx, msg)
}

// wait waits until the requests being served have written their responses, or done
// closes; false when done closed first.
func (r *requestRunner) wait(done <-chan time.Time) bool {
	finished := make(chan struct{})
	go func() { r.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return true
	case <-done:
		return false
	}
}

// writeMessage writes msg as one line of the protocol stream (one Write); false when it
// could not be encoded or written, which is logged.
func writeMessage(w io.Writer, log *slog.Logger, msg mcp.JSONRPCMessage) bool {
	b, err := encodeMessage(msg)
	if err != nil {
		log.Error("cannot encode a response", "error", err)
		return false
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		log.Debug("cannot write a response", "error", err)
		return false
	}
	return true
}

// encodeMessage is json.Marshal(msg), byte for byte, reading a tool result's JSON once: a
// CallToolResult's MarshalJSON already returns json.Marshal's output (compact, HTML
// escaped), which json.Marshal would scan and compact again. TestEncodeMessage holds the
// two equal.
func encodeMessage(msg mcp.JSONRPCMessage) ([]byte, error) {
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return json.Marshal(msg)
	}
	var result []byte
	var err error
	switch r := resp.Result.(type) {
	case *mcp.CallToolResult:
		if r == nil {
			return json.Marshal(msg)
		}
		result, err = r.MarshalJSON()
	case mcp.CallToolResult:
		result, err = r.MarshalJSON()
	default:
		return json.Marshal(msg)
	}
	if err != nil {
		return nil, err
	}
	version, err := json.Marshal(resp.JSONRPC)
	if err != nil {
		return nil, err
	}
	id, err := json.Marshal(resp.ID)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(result)+len(version)+len(id)+len(`{"jsonrpc":,"id":,"result":}`))
	b = append(b, `{"jsonrpc":`...)
	b = append(b, version...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}'), nil
}
