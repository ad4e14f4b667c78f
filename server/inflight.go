package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// inflight bounds the requests mcp-go serves at once on stdio. The reader guard takes a
// slot when it hands a request on to mcp-go, and answers "busy" when none is free; the slot
// is given back when the request ends:
//
//   - mcp-go calls OnBeforeAny once it has dispatched a request to its method (and
//     registered the request's cancel function for notifications/cancelled); from there
//     the slot belongs to the request's context, the one mcp-go hands to all of its hooks;
//   - OnSuccess or OnError, one of which ends every such request, gives it back;
//   - a request mcp-go answers before dispatching it (a malformed protocol _meta, a params
//     object it cannot read) reaches neither: its slot is given back when its answer is
//     written (answered), which is the only time the output is read for ids.
//
// inflight also holds on to a client's notifications/cancelled that arrives before mcp-go
// has registered the request it names: mcp-go reads it at once and would find nothing to
// cancel. The guard hands it on anyway, and again (resend) once the request is dispatched.
type inflight struct {
	max     int
	passing atomic.Int32 // len(handed); the writer's fast path

	mu      sync.Mutex
	n       int                          // slots taken
	handed  map[string]int               // id key → requests handed on, not yet dispatched
	held    map[string][]byte            // id key → a cancellation to send again at dispatch
	running map[context.Context]struct{} // dispatched requests holding a slot
	resend  func([]byte)                 // hands a held cancellation to mcp-go again
}

func newInflight(max int) *inflight {
	return &inflight{max: max, handed: map[string]int{}, held: map[string][]byte{}, running: map[context.Context]struct{}{}}
}

// ungated are the requests served whatever the load: a ping is answered at once.
func ungated(method string) bool { return method == string(mcp.MethodPing) }

// admit takes a slot for a request with id key; false when all are taken.
func (g *inflight) admit(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n >= g.max {
		return false
	}
	g.n++
	g.handed[key]++
	g.passing.Store(int32(len(g.handed)))
	return true
}

// cancelled reports a client's notifications/cancelled for the request with id key, whose
// line is msg. When that request was handed on but not yet dispatched, msg is kept to be
// sent again at its dispatch.
func (g *inflight) cancelled(key string, msg []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.handed[key] > 0 {
		g.held[key] = append([]byte(nil), msg...)
	}
}

// answered gives back the slot of a request with id key that mcp-go answered without
// dispatching it.
func (g *inflight) answered(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.handed[key] > 0 {
		g.leave(key)
		g.n--
	}
}

// leave counts one request with id key as no longer handed on; g.mu is held.
func (g *inflight) leave(key string) {
	decr(g.handed, key)
	if g.handed[key] == 0 {
		delete(g.held, key)
	}
	g.passing.Store(int32(len(g.handed)))
}

// hooks registers g's hand-over and release of slots on mcp-go's hooks.
func (g *inflight) hooks(h *mcpserver.Hooks) {
	h.AddBeforeAny(func(ctx context.Context, id any, method mcp.MCPMethod, _ any) {
		if ungated(string(method)) {
			return
		}
		k := idKey(id)
		g.mu.Lock()
		if g.handed[k] == 0 {
			g.mu.Unlock()
			return
		}
		msg, ok := g.held[k]
		g.leave(k)
		g.running[ctx] = struct{}{}
		g.mu.Unlock()
		if ok && g.resend != nil {
			g.resend(msg)
		}
	})
	end := func(ctx context.Context) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.running[ctx]; ok {
			delete(g.running, ctx)
			g.n--
		}
	}
	h.AddOnSuccess(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, _ any) { end(ctx) })
	h.AddOnError(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, _ error) { end(ctx) })
}

func decr(m map[string]int, k string) {
	if m[k] <= 1 {
		delete(m, k)
	} else {
		m[k]--
	}
}

// inFlight reports how many slots are taken.
func (g *inflight) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// idKey is a request id as mcp-go's hooks see it (encoding/json's decoding into any: a
// string or a float64), in one form for the guard's raw ids and the hooks' decoded ones.
func idKey(id any) string {
	switch v := id.(type) {
	case string:
		return "s" + v
	case float64:
		return "n" + strconv.FormatFloat(v, 'f', -1, 64)
	case json.RawMessage:
		if exactInt(v) {
			return "n" + string(v) // what the float64 it decodes into formats as
		}
		var d any
		if json.Unmarshal(v, &d) != nil {
			return ""
		}
		return idKey(d)
	}
	return ""
}

// exactInt reports whether raw is a JSON integer of at most 15 digits, which a float64
// holds exactly and encoding/json writes back as it is.
func exactInt(raw []byte) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// MaxInflight is how many calls s serves at once (Options.MaxInflight, --max-inflight);
// serve --http applies it to whole requests.
func (s *Server) MaxInflight() int {
	return s.cfg.Options.MaxInflight
}
