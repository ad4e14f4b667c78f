package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// maxIDs bounds the ids the stdio transport remembers: stand-ins whose answer never came
// (a cancelled call's is not written) and the server's requests the client never answered.
const maxIDs = 1024

// idTable gives a stand-in string id to a request whose numeric id mcp-go would not write
// back as the client wrote it, and restores the client's id in the answer. mcp-go decodes
// every id into a float64 and writes that back: 9007199254740993 (2^53+1) returns as
// 9007199254740992, and a 23-digit id as 1.2345678901234568e+22.
type idTable struct {
	pending atomic.Int32 // len(raw); the writer's fast path
	mu      sync.Mutex
	next    uint64
	raw     map[string]json.RawMessage // stand-in (as JSON) → the client's id
	stand   map[string]json.RawMessage // the client's id → its stand-in (as JSON)
}

func newIDTable() *idTable {
	return &idTable{raw: map[string]json.RawMessage{}, stand: map[string]json.RawMessage{}}
}

// standIn returns the stand-in for id when mcp-go would not write id back unchanged.
func (t *idTable) standIn(id json.RawMessage) (json.RawMessage, bool) {
	if id[0] == '"' || exactInt(id) {
		return nil, false
	}
	var f float64
	if err := json.Unmarshal(id, &f); err != nil {
		return nil, false
	}
	if back, err := json.Marshal(f); err == nil && bytes.Equal(back, id) {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.raw) >= maxIDs {
		clear(t.raw)
		clear(t.stand)
	}
	t.next++
	s, _ := json.Marshal(fmt.Sprintf("\x00r2r-mcp id %d", t.next))
	id = append(json.RawMessage(nil), id...)
	t.raw[string(s)], t.stand[string(id)] = id, s
	t.pending.Store(int32(len(t.raw)))
	return s, true
}

// lookup returns the stand-in given to the request whose id the client wrote as id.
func (t *idTable) lookup(id json.RawMessage) (json.RawMessage, bool) {
	if t.pending.Load() == 0 {
		return nil, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.stand[string(id)]
	return s, ok
}

// restore returns the client's id for the stand-in s, forgetting it.
func (t *idTable) restore(s json.RawMessage) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id, ok := t.raw[string(s)]
	if ok {
		delete(t.raw, string(s))
		delete(t.stand, string(id))
		t.pending.Store(int32(len(t.raw)))
	}
	return id, ok
}

// askedTable holds the ids of the server's requests to the client (roots/list) that the
// client has not answered yet.
type askedTable struct {
	mu  sync.Mutex
	ids map[string]int
}

func newAskedTable() *askedTable { return &askedTable{ids: map[string]int{}} }

func (a *askedTable) add(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ids) >= maxIDs {
		clear(a.ids)
	}
	a.ids[key]++
}

// take reports whether key is the id of an unanswered request of the server's, which it
// then counts as answered.
func (a *askedTable) take(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ids[key] == 0 {
		return false
	}
	decr(a.ids, key)
	return true
}

// mcpOutput is the writer mcp-go's stdio server writes to. It notes the server's own
// requests (so the guard knows the client's answers to them), gives back the in-flight slot
// of a request mcp-go answered without dispatching it, and puts the client's id back into
// an answer to a request that was handed on with a stand-in. It reads a message's head only
// while one of those can apply.
type mcpOutput struct {
	w     io.Writer
	gate  *inflight
	ids   *idTable
	asked *askedTable
}

func (o *mcpOutput) Write(p []byte) (int, error) {
	n := len(p)
	if o.gate.passing.Load() > 0 || o.ids.pending.Load() > 0 || bytes.Contains(p[:min(len(p), 96)], []byte(`"method"`)) {
		id, request := head(p)
		switch {
		case id == nil:
		case request:
			o.asked.add(idKey(id))
		default:
			o.gate.answered(idKey(id))
			if id[0] != '"' || o.ids.pending.Load() == 0 {
				break
			}
			if raw, ok := o.ids.restore(id); ok {
				p = bytes.Replace(p, append([]byte(`"id":`), id...), append([]byte(`"id":`), raw...), 1)
			}
		}
	}
	if _, err := o.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// head reads a message's top-level members until it knows its id and whether it is a
// request (a method beside the id) or an answer (a result or an error), without reading
// a result itself when the id comes first, as mcp-go writes it.
func head(msg []byte) (id json.RawMessage, request bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	kind := ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch t {
		case "method", "result", "error":
			kind, _ = t.(string)
			if id != nil {
				return id, kind == "method"
			}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if t == "id" && validID(v) {
			id = v
			if kind != "" {
				return id, kind == "method"
			}
		}
	}
	return nil, false
}

// withMember returns the JSON object obj with its member name set to v; obj unchanged when
// it is not an object.
func withMember(obj json.RawMessage, name string, v json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return obj
	}
	m[name] = v
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}
