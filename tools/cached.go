package tools

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unsafe"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

// cachedMarker starts the text of a result served from the cache.
const cachedMarker = "(cached) "

// answer is a tool's finished result: its structured value and its text, both as a fresh
// call returns them, and the structured value as served from the cache. Search and RAG cache
// answers whole, so a hit neither decodes, reshapes nor cleans its structured content again.
type answer[T output] struct {
	Out T // structured value of a fresh call
	// HitJSON is the same with cached: true, cleaned and encoded: what a shared cache keeps.
	// In memory it is kept only when there is no hit value to serve (MarshalJSON encodes the
	// hit value for a shared cache).
	HitJSON json.RawMessage
	Text    string // text without the cached marker

	// hit is the hit's value, when cleaning changed nothing (nil in an answer a shared cache
	// decoded): a hit serves it rather than HitJSON, because encoding/json re-reads and
	// compacts pre-encoded JSON byte by byte, which costs more than encoding the value.
	hit *T
	// hitText is Text with the cached marker, Text being its tail ("" in an answer a shared
	// cache decoded): a hit neither copies the text nor holds it twice.
	hitText string
}

// output is a tool's structured output that an answer holds.
type output interface{ heapSize() int }

// finish builds the answer of out (cached false) and hit (the same, cached true) with text.
// The text and the hit's JSON are cleaned here, once, so a cache hit serves them as they are
// (cleanJSON and cleanHit tell cleanResults so).
func finish[T output](out, hit T, text string) (answer[T], error) {
	b, err := json.Marshal(hit)
	clean := err == nil && !dirtyJSON(b)
	if err == nil && !clean {
		var v any
		if err = json.Unmarshal(b, &v); err == nil {
			b, err = json.Marshal(sanitizeValue(v))
		}
	}
	hitText := cachedMarker + Sanitize(text)
	a := answer[T]{Out: out, Text: hitText[len(cachedMarker):], hitText: hitText}
	if clean {
		a.hit = &hit
	} else {
		a.HitJSON = b
	}
	return a, err
}

// hitContent is the structured content a cache hit serves: a's hit value when it has one,
// else its encoded JSON.
func (a *answer[T]) hitContent() any {
	if a.hit != nil {
		return a.hit
	}
	return cleanJSON(a.HitJSON)
}

// text is the answer's text as served fresh or, marked, from the cache.
func (a *answer[T]) text(cached bool) string {
	if cached && a.hitText != "" {
		return a.hitText
	}
	return withCachedMarker(a.Text, cached)
}

// cleanHit is the structured content of a cache hit served as a value: a pointer to a
// finished output (*SearchOutput, *RAGOutput) whose JSON was checked clean by finish. Fresh
// results carry their output by value, so cleanResult checks those.
type cleanHit interface{ cleanHit() }

// cleanJSON is structured content that is already encoded and already clean: a cache hit's.
type cleanJSON json.RawMessage

// MarshalJSON returns the bytes as they are.
func (c cleanJSON) MarshalJSON() ([]byte, error) { return json.RawMessage(c).MarshalJSON() }

// answerJSON is an answer as a shared cache keeps it: its exported fields.
type answerJSON[T output] answer[T]

// MarshalJSON encodes a for a shared cache, with HitJSON encoded from the hit value when a
// does not keep it.
func (a answer[T]) MarshalJSON() ([]byte, error) {
	if a.HitJSON == nil && a.hit != nil {
		b, err := json.Marshal(a.hit)
		if err != nil {
			return nil, err
		}
		a.HitJSON = b
	}
	return json.Marshal(answerJSON[T](a))
}

// cachedValue is what the cache holds: a finished value and the bytes it costs.
type cachedValue[T any] struct {
	v    T
	size int
}

// CacheSize implements cache.Sized.
func (c *cachedValue[T]) CacheSize() int { return c.size }

func newCachedValue[T any](v T) *cachedValue[T] {
	c := &cachedValue[T]{v: v}
	if s, ok := any(v).(heapSizer); ok {
		c.size = cache.HeapBytes(int(unsafe.Sizeof(*c))) + s.heapSize()
	} else if b, err := json.Marshal(v); err == nil {
		c.size = len(b)
	}
	return c
}

// rateLimited makes load take the rate-limit token of call c first (see admitR2R).
func rateLimited[T any](c *call, load func(context.Context) (T, bool, error)) func(context.Context) (T, bool, error) {
	if c == nil || c.gate.tl == nil {
		return load
	}
	return func(ctx context.Context) (T, bool, error) {
		if err := admitR2R(ctx, c); err != nil {
			var zero T
			return zero, false, err
		}
		return load(ctx)
	}
}

// withCachedMarker marks the text of a result served from the cache.
func withCachedMarker(text string, cached bool) string {
	if cached {
		return cachedMarker + text
	}
	return text
}

// noStore carries a freshly loaded result that must be returned but not cached: the cache
// never stores what a load returns as an error, and callers sharing the load (singleflight)
// still get the value.
type noStore struct{ value any }

func (*noStore) Error() string { return "tools: result not cacheable" }

// loader is what the cached reads take (cachedLoad): the result cache, and what its keys
// and its bypass while an upload of this server is still ingesting depend on.
type loader struct {
	cache   Cache              // nil = no caching
	client  func() *r2r.Client // the tools' client, read at each load as the tools read it
	pending *upload.Pending    // uploads R2R has not finished with
	now     func() time.Time
}

// cachedLoad returns the result of one read of call c (nil outside a tool call), from l's
// cache when it holds it; a load takes c's rate-limit token first. kind selects
// the TTL; tool, args (the EFFECTIVE arguments, defaults applied) and collection (the one
// the result depends on; "" for results that span collections) form the key together
// with the R2R URL and the credential's identity. load fetches from R2R and builds the
// finished value; it says whether the value is complete and may be stored (not when a
// title lookup failed, nor while R2R is still ingesting: R2R changes such results without
// a write through r2r-mcp). Errors, a cancelled or timed-out load included, are never
// cached, nor is a value whose caller went away before it was finished. cached reports a
// hit. The value may be shared with the cache and other callers: it must not be modified.
//
// While a document ingested by this server is still being processed in collection, the
// cache is bypassed for that collection: search results from before the document is
// searchable must not be served for minutes after it is.
func cachedLoad[T any](ctx context.Context, c *call, l *loader, kind cache.Kind, tool string, args map[string]any, collection string,
	load func(context.Context) (T, bool, error)) (out T, cached bool, err error) {
	load = rateLimited(c, load)
	if l.cache == nil {
		out, _, err = load(ctx)
		return out, false, err
	}
	client := l.client()
	key, err := l.cache.Key(cache.Key{R2RURL: client.BaseURL(), Identity: client.Identity(), Tool: tool,
		Args: args, Collection: collection})
	// The ingestion check comes after the key: an ingest marks the collection busy before it
	// bumps its generation, so a key of the new generation always sees the mark.
	if err != nil || l.pending.Busy(collection, l.now()) {
		out, _, err = load(ctx)
		return out, false, err
	}
	get := l.cache.GetOrLoad
	if sc, ok := l.cache.(SharedCache); ok {
		get = func(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error)) (any, bool, error) {
			return sc.GetOrLoadShared(ctx, kind, key, load, decodeCached[T])
		}
	}
	v, hit, err := get(ctx, kind, key, func(ctx context.Context) (any, error) {
		v, store, err := load(ctx)
		switch {
		case err != nil:
			return nil, err
		case !store || ctx.Err() != nil: // incomplete, or finished for a caller that is gone
			return nil, &noStore{value: v}
		}
		return newCachedValue(v), nil
	})
	if ns, ok := errors.AsType[*noStore](err); ok {
		return ns.value.(T), false, nil
	}
	if err != nil {
		return out, false, err
	}
	cv, ok := v.(*cachedValue[T])
	if !ok { // another type under this key cannot happen; fetch afresh rather than fail
		out, _, err = load(ctx)
		return out, false, err
	}
	return cv.v, hit, nil
}

// invalidator is the write side of the result cache: what a write, or the end of an
// ingestion this server started, makes stale.
type invalidator struct {
	cache   Cache           // nil = no caching
	titles  *titleMemory    // document titles remembered by id
	pending *upload.Pending // uploads R2R has not finished with
}

// wrote invalidates cached results after a write to collection: its own results and
// those spanning collections (the collection list shows document counts), and the
// remembered document titles.
func (w *invalidator) wrote(collection string) {
	w.titles.forget()
	if w.cache == nil {
		return
	}
	w.cache.Bump(collection)
	if collection != "" {
		w.cache.Bump("")
	}
}

// ingested records that R2R finished (or failed) ingesting docID. When this server
// started that ingestion, the collection's cached results are invalidated, since the
// document is searchable now.
func (w *invalidator) ingested(docID, status string) {
	if !kbsync.Terminal(status) {
		return
	}
	if coll, ok := w.pending.Finish(docID); ok {
		w.wrote(coll)
	}
}

// deleted invalidates cached results after docID was deleted from collection; an upload
// of it still in progress is forgotten (its ingestion will never end).
func (w *invalidator) deleted(docID, collection string) {
	w.pending.Finish(docID)
	w.wrote(collection)
}

// SharedCache is a Cache that also keeps its entries outside this process (the Redis the
// replicas of serve --http share), where values travel as JSON: a loaded value is encoded
// with encoding/json, and decode turns what any replica stored back into a value.
type SharedCache interface {
	GetOrLoadShared(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error),
		decode func([]byte) (any, error)) (value any, cached bool, err error)
}

// MarshalJSON encodes the value itself, for a SharedCache.
func (c *cachedValue[T]) MarshalJSON() ([]byte, error) { return json.Marshal(c.v) }

// decodeCached is the SharedCache decoder of cachedLoad[T]'s values.
func decodeCached[T any](b []byte) (any, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return newCachedValue(v), nil
}
