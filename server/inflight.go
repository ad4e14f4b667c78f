package server

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// inflight bounds the tools/call and resources/read requests being served. The stdin pump
// admits a request before handing it on; the slot is released when the request's response
// is written (by the call runner for a tools/call; for a resources/read, release watches
// what mcp-go writes), so a call counts from the moment it is read until its answer
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

// busy reports how many requests are in flight.
func (g *inflight) inFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// release wraps the protocol writer mcp-go writes to: every response it writes (one Write
// per message) releases the slot of its request.
func (g *inflight) release(w io.Writer) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		if g.inFlight() > 0 {
			if key, isResponse := responseID(p); isResponse {
				g.done(key)
			}
		}
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// idKey is the canonical form of a JSON-RPC id, the same for the request as read and the
// response as mcp-go writes it back ("" when raw is not a valid id).
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

// responseID finds the id of a JSON-RPC response (a message with "result" or "error" and
// no "method") by reading its top-level members only as far as needed: mcp-go writes
// jsonrpc and id before the result, so the result itself is not parsed.
func responseID(msg []byte) (key string, isResponse bool) {
	dec := json.NewDecoder(bytesReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	var id json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := t.(string)
		switch name {
		case "method":
			return "", false
		case "result", "error":
			if id != nil {
				return idKey(id), true
			}
			isResponse = true
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		if name == "id" {
			id = v
			if isResponse {
				return idKey(id), true
			}
		}
	}
	return "", false
}

// MaxInflight is how many calls s serves at once (Options.MaxInflight, --max-inflight);
// serve --http applies it to whole requests.
func (s *Server) MaxInflight() int {
	return s.cfg.Options.MaxInflight
}
