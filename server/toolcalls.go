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

// callRunner serves the tools/call requests the front door admits, each on its own
// goroutine, beside mcp-go's stdio server, which reads every other message. It hands a
// call to the same MCPServer.HandleMessage, with the same session context, as mcp-go's
// own tool-call workers would, and writes the response itself (encodeMessage): mcp-go's
// stdio server encodes a response with json.Marshal, which compacts and re-checks the
// whole JSON a json.Marshaler returns, and a tool result is one. On an r2r_search cache
// hit (about 8 KB) that second pass was a quarter of the call's time.
type callRunner struct {
	srv  *mcpserver.MCPServer
	gate *inflight // the call's slot is released once its response is written
	out  io.Writer // the serialised protocol writer (behind it, the cancelled-call filter)
	log  *slog.Logger

	once  sync.Once
	ready chan struct{}   // closed when ctx is set
	ctx   context.Context // the stdio session's context, from mcp-go's context func
	stop  <-chan struct{} // closed when serving ends; calls still waiting for ready give up
	wg    sync.WaitGroup  // calls being served
}

func newCallRunner(srv *mcpserver.MCPServer, gate *inflight, out io.Writer, log *slog.Logger, stop <-chan struct{}) *callRunner {
	return &callRunner{srv: srv, gate: gate, out: out, log: log, ready: make(chan struct{}), stop: stop}
}

// sessionContext is the stdio server's context func (mcpserver.WithStdioContextFunc): it
// receives the context mcp-go gives its own workers (the stdio session registered in it,
// cancelled when serving ends) and keeps it for the calls run here.
func (r *callRunner) sessionContext(ctx context.Context) context.Context {
	r.once.Do(func() {
		r.ctx = ctx
		close(r.ready)
	})
	return ctx
}

// start serves the tools/call request msg (with JSON-RPC id, admitted by the gate under
// key) on a goroutine of its own; msg is copied, so the caller may reuse it.
func (r *callRunner) start(key string, id json.RawMessage, msg []byte) {
	id, msg = append(json.RawMessage(nil), id...), append([]byte(nil), msg...)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer r.gate.done(key)
		select {
		case <-r.ready:
		case <-r.stop:
			return
		}
		resp := r.handle(id, msg)
		if resp == nil {
			return
		}
		b, err := encodeMessage(resp)
		if err != nil {
			r.log.Error("cannot encode a response", "error", err)
			return
		}
		if _, err := r.out.Write(append(b, '\n')); err != nil {
			r.log.Debug("cannot write a response", "error", err)
		}
	}()
}

// handle runs one call through mcp-go; a panic in mcp-go itself becomes an internal error
// (a tool handler's own panic is recovered inside the tool chain, with its cause).
func (r *callRunner) handle(id json.RawMessage, msg []byte) (resp mcp.JSONRPCMessage) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("panic while serving a tool call", "panic", p)
			var rid mcp.RequestId
			_ = json.Unmarshal(id, &rid)
			resp = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: rid,
				Error: mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: "Internal error in r2r-mcp while serving the call; it is logged. Call again."}}
		}
	}()
	return r.srv.HandleMessage(r.ctx, msg)
}

// wait waits until the calls being served have written their responses, or done closes.
func (r *callRunner) wait(done <-chan time.Time) bool {
	finished := make(chan struct{})
	go func() { r.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return true
	case <-done:
		return false
	}
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
