package server

import (
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// inflight bounds the tools/call and resources/read requests being served. The stdin pump
// admits a request before handing it to the request runner, which releases the slot once
// the response is written, so a call counts from the moment it is read until its answer
// leaves, whether it waits for R2R or for anything else.
type inflight struct {
	max int
	mu  sync.Mutex
	ids map[string]int // mcp.RequestId.String() → requests with that id in flight
	n   int
}

func newInflight(max int) *inflight {
	return &inflight{max: max, ids: map[string]int{}}
}

// admit takes a slot for the request with id key; false when all are taken.
func (g *inflight) admit(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n >= g.max {
		return false
	}
	g.n++
	g.ids[key]++
	return true
}

// done releases the slot of a request with id key, if one is held.
func (g *inflight) done(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.ids[key]
	if !ok {
		return
	}
	if c <= 1 {
		delete(g.ids, key)
	} else {
		g.ids[key] = c - 1
	}
	g.n--
}

// idKey is the canonical form of a JSON-RPC id, the same however the client wrote it (5
// and 5.0 are one id); "" when raw is not a valid id.
func idKey(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var id mcp.RequestId
	if err := json.Unmarshal(raw, &id); err != nil || id.IsNil() {
		return ""
	}
	return id.String()
}

// MaxInflight is how many calls s serves at once (Options.MaxInflight, --max-inflight);
// serve --http applies it to whole requests.
func (s *Server) MaxInflight() int {
	return s.cfg.Options.MaxInflight
}
