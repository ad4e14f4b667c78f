package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/ristretto/v2/z"
)

// Key describes one cacheable R2R request. Two Keys denote the same entry when every field is
// equal after normalisation; the collection's generation (see Cache.Bump) is mixed in by
// Cache.Key, so entries written before a write to the collection are never read again.
type Key struct {
	// R2RURL is the R2R base URL, normally r2r.Client.BaseURL(). Trailing slashes are ignored.
	R2RURL string
	// Identity is the credential's non-secret identity (r2r.Credentials.Identity()), so one
	// user's results are never served to another.
	Identity string
	// Tool is the MCP tool (or internal operation) name.
	Tool string
	// Args are the EFFECTIVE arguments, after defaults are applied, so that {query:"x"} and
	// {query:"x", limit:10} (10 being the default) hit the same entry. Any JSON-encodable value
	// is accepted; it is compared by its JSON content: map key order, struct-versus-map and
	// int-versus-float64 (10 == 10.0) do not matter, JSON types do ("10" != 10). Numbers are
	// compared as float64, as encoding/json decodes them. nil and an empty map are equal.
	Args any
	// Collection is the collection the result depends on ("" for results that span
	// collections, e.g. the list of collections).
	Collection string
}

// keyLen is the length of the keys Cache.Key returns: a raw SHA-256 digest.
const keyLen = sha256.Size

// keyVersion changes whenever the encoding below changes.
const keyVersion = 1

// generations holds one counter per collection plus a global one (BumpAll).
type generations struct {
	global atomic.Uint64
	mu     sync.RWMutex
	m      map[string]*atomic.Uint64
}

func (g *generations) get(collection string) uint64 {
	g.mu.RLock()
	n := g.m[collection]
	g.mu.RUnlock()
	if n == nil {
		return 0
	}
	return n.Load()
}

func (g *generations) bump(collection string) {
	g.mu.RLock()
	n := g.m[collection]
	g.mu.RUnlock()
	if n == nil {
		g.mu.Lock()
		if n = g.m[collection]; n == nil {
			if g.m == nil {
				g.m = make(map[string]*atomic.Uint64)
			}
			n = new(atomic.Uint64)
			g.m[collection] = n
		}
		g.mu.Unlock()
	}
	n.Add(1)
}

// Key returns the opaque cache key (a 32-byte SHA-256 digest, not printable) for k under the
// current generation of k.Collection and the current global generation. Compute it once per
// request and use it for Get, Set and GetOrLoad. It fails only when k.Args cannot be encoded as
// JSON. A nil Cache computes keys with generation 0.
func (c *Cache) Key(k Key) (string, error) {
	var collGen, globalGen uint64
	if c != nil {
		collGen = c.gens.get(k.Collection)
		globalGen = c.gens.global.Load()
	}
	var arr [512]byte
	buf := append(arr[:0], keyVersion)
	buf = appendString(buf, strings.TrimRight(k.R2RURL, "/"))
	buf = appendString(buf, k.Identity)
	buf = appendString(buf, k.Tool)
	buf = appendString(buf, k.Collection)
	buf = binary.AppendUvarint(buf, collGen)
	buf = binary.AppendUvarint(buf, globalGen)
	head := len(buf)

	args := k.Args
	if args == nil {
		args = map[string]any(nil)
	}
	buf, ok := appendValue(buf, args)
	if !ok {
		// Not plain JSON data (a struct, typed map, json.RawMessage...): reduce it to what
		// encoding/json would decode, so equal JSON content gives equal keys.
		raw, err := json.Marshal(args)
		if err != nil {
			return "", fmt.Errorf("cache: encode arguments of %s: %w", k.Tool, err)
		}
		var plain any
		if err := json.Unmarshal(raw, &plain); err != nil {
			return "", fmt.Errorf("cache: encode arguments of %s: %w", k.Tool, err)
		}
		if plain == nil {
			plain = map[string]any(nil)
		}
		buf, _ = appendValue(buf[:head], plain) // decoded JSON is always plain
	}
	sum := sha256.Sum256(buf)
	return string(sum[:]), nil
}

// appendValue appends a prefix-free (hence injective) encoding of v. ok is false when v holds a
// type outside the plain set that encoding/json produces (plus int, int64 and []string), in
// which case buf is garbage past its original length.
func appendValue(buf []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(buf, 'n'), true
	case bool:
		if v {
			return append(buf, 't'), true
		}
		return append(buf, 'f'), true
	case string:
		return appendString(append(buf, 's'), v), true
	case float64:
		return appendFloat(buf, v), true
	case int:
		return append(strconv.AppendInt(append(buf, 'N'), int64(v), 10), ';'), true
	case int64:
		return append(strconv.AppendInt(append(buf, 'N'), v, 10), ';'), true
	case []any:
		buf = binary.AppendUvarint(append(buf, 'a'), uint64(len(v)))
		for _, e := range v {
			var ok bool
			if buf, ok = appendValue(buf, e); !ok {
				return buf, false
			}
		}
		return buf, true
	case []string:
		buf = binary.AppendUvarint(append(buf, 'a'), uint64(len(v)))
		for _, e := range v {
			buf = appendString(append(buf, 's'), e)
		}
		return buf, true
	case map[string]any:
		var arr [16]string
		keys := arr[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf = binary.AppendUvarint(append(buf, 'm'), uint64(len(keys)))
		for _, k := range keys {
			buf = appendString(buf, k)
			var ok bool
			if buf, ok = appendValue(buf, v[k]); !ok {
				return buf, false
			}
		}
		return buf, true
	}
	return buf, false
}

// appendFloat encodes integral values like ints, so 10.0 and 10 are one key.
func appendFloat(buf []byte, f float64) []byte {
	buf = append(buf, 'N')
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		buf = strconv.AppendInt(buf, int64(f), 10)
	} else {
		buf = strconv.AppendFloat(buf, f, 'g', -1, 64)
	}
	return append(buf, ';')
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// keyToHash feeds ristretto the digest itself instead of hashing it again. The conflict hash
// is forced non-zero because ristretto skips the conflict check for 0.
func keyToHash(k string) (uint64, uint64) {
	if len(k) != keyLen {
		return otherKeyToHash(k)
	}
	return le64(k[0:8]), le64(k[8:16]) | 1
}

func otherKeyToHash(k string) (uint64, uint64) {
	h, conflict := z.KeyToHash(k)
	return h, conflict | 1
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
