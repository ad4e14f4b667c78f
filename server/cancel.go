package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// A client's notifications/cancelled makes mcp-go cancel the handler's context (it keeps
// the cancel function of every in-flight request), so the tool's HTTP request to R2R is
// aborted and the handler returns at once. mcp-go v1.2.1 then still writes the handler's
// response; the MCP spec says a cancelled request SHOULD NOT get one, so cancelledCalls
// records such calls and drops their responses on the way out. Calls cut short by shutdown
// (stdin closed, a signal) are not the client's cancellation: they keep their answer. What
// decides is what ended the call's context, not when its handler returned: a call the
// client cancelled before the shutdown began stays cancelled even when it returns after.

// maxCancelledAge bounds how long a suppression waits for its response (it comes right
// after the hook, so this only keeps the set from growing if one never does).
const maxCancelledAge = time.Minute

type cancelledCalls struct {
	logger   *slog.Logger
	stopping atomic.Bool  // shutdown began: contexts end for that reason now
	pending  atomic.Int32 // len(ids); the writer's fast path
	mu       sync.Mutex
	ids      map[string]time.Time // JSON-encoded request id → when the call ended
	// running holds the context of every tool call in flight; true once stop found it
	// already ended, by the client's cancellation since shutdown had not begun.
	running map[context.Context]bool
}

func newCancelledCalls(logger *slog.Logger) *cancelledCalls {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &cancelledCalls{logger: logger, ids: map[string]time.Time{}, running: map[context.Context]bool{}}
}

// hooks registers c on mcp-go's hooks: a tool call is followed from its start to its end.
func (c *cancelledCalls) hooks(h *mcpserver.Hooks) {
	h.AddBeforeCallTool(c.beforeCallTool)
	h.AddAfterCallTool(c.afterCallTool)
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodToolsCall {
			c.forget(ctx)
		}
	})
}

// beforeCallTool is an mcp-go BeforeCallTool hook; ctx is the one afterCallTool gets.
func (c *cancelledCalls) beforeCallTool(ctx context.Context, _ any, _ *mcp.CallToolRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopping.Load() {
		c.running[ctx] = false
	}
}

// forget stops following the call of ctx; it reports whether the client cancelled it.
func (c *cancelledCalls) forget(ctx context.Context) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	byClient := ctx.Err() != nil && (!c.stopping.Load() || c.running[ctx])
	delete(c.running, ctx)
	return byClient
}

// afterCallTool is an mcp-go AfterCallTool hook. It runs on the handler's goroutine after
// the handler returned and before the response is written; ctx is the request's context,
// which mcp-go cancels on notifications/cancelled.
func (c *cancelledCalls) afterCallTool(ctx context.Context, id any, req *mcp.CallToolRequest, _ any) {
	if !c.forget(ctx) || id == nil {
		return
	}
	key, err := json.Marshal(id)
	if err != nil {
		return
	}
	now := time.Now()
	c.mu.Lock()
	for k, at := range c.ids {
		if now.Sub(at) > maxCancelledAge {
			delete(c.ids, k)
		}
	}
	c.ids[string(key)] = now
	c.pending.Store(int32(len(c.ids)))
	c.mu.Unlock()
	name := ""
	if req != nil {
		name = req.Params.Name
	}
	c.logger.Info("tool call cancelled before it answered; no response is sent", "tool", name, "id", string(key))
}

// take reports whether the response with JSON id key must be dropped, forgetting it.
func (c *cancelledCalls) take(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[key]; !ok {
		return false
	}
	delete(c.ids, key)
	c.pending.Store(int32(len(c.ids)))
	return true
}

// filter returns a writer that passes every message to w except the responses of
// cancelled calls. mcp-go writes each message with one Write call.
func (c *cancelledCalls) filter(w io.Writer) io.Writer {
	return &cancelFilter{w: w, c: c}
}

type cancelFilter struct {
	w io.Writer
	c *cancelledCalls
}

func (f *cancelFilter) Write(p []byte) (int, error) {
	if f.c.pending.Load() > 0 {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &m) == nil && m.Method == "" && len(m.ID) > 0 && f.c.take(string(m.ID)) {
			return len(p), nil
		}
	}
	return f.w.Write(p)
}

// stop records that the server is shutting down. It must run before the shutdown cancels
// the calls in flight: those whose context already ended then were cancelled by the client.
func (c *cancelledCalls) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping.Swap(true) {
		return
	}
	for ctx := range c.running {
		c.running[ctx] = ctx.Err() != nil
	}
}

// watch returns stdin wrapped so that stop runs before mcp-go sees the end of the input
// (which makes it cancel every in-flight call). On a signal, serveStdio runs stop itself
// (stdioConfig.stop) before it cancels the calls.
func (c *cancelledCalls) watch(stdin io.Reader) io.Reader {
	return &stopOnEOF{r: stdin, stop: c.stop}
}

type stopOnEOF struct {
	r    io.Reader
	stop func()
}

func (s *stopOnEOF) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		s.stop()
	}
	return n, err
}
