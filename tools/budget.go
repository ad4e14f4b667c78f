package tools

import (
	"encoding/json"
	"unicode/utf8"
)

// Budgets of metadata-derived values in results (titles, names, metadata objects): what
// R2R stores is up to its users, and a result must stay small whatever it holds, in the
// text and in the structured content alike.
const (
	// maxTitleBytes bounds a title or name shown as a field, as JSON.
	maxTitleBytes = 512
	// maxMetadataOutBytes bounds a metadata object in a result, as JSON.
	maxMetadataOutBytes = 4096
	// maxMetaValueBytes bounds one string inside that object, as JSON.
	maxMetaValueBytes = 512
	// maxMetaKeyBytes bounds one key inside that object.
	maxMetaKeyBytes = 64
	// maxMetaItems bounds the entries of one object or list inside that object.
	maxMetaItems = 32
	// maxMetaDepth bounds how deep objects and lists nest inside that object.
	maxMetaDepth = 4
	// maxMetaNodes bounds the values kept from that object in all, so a wide and deep
	// object costs little work.
	maxMetaNodes = 256
	// maxIDList bounds a list of ids in a result (a document's collections).
	maxIDList = 100
)

// clipped marks the end of a string that was cut to fit its budget.
const clipped = "…"

// clipJSON returns s, or its longest prefix (cut on a rune boundary) that fits in max bytes
// as a JSON string together with the "…" marking the cut. The size is jsonStringSize's, so
// characters encoding/json escapes count as what they cost.
func clipJSON(s string, max int) string {
	if jsonStringSize(s) <= max {
		return s
	}
	room := max - jsonStringSize(clipped)
	n, used := 0, 0
	for n < len(s) {
		_, w := utf8.DecodeRuneInString(s[n:])
		size := jsonStringSize(s[n:n+w]) - 2
		if used+size > room {
			break
		}
		used += size
		n += w
	}
	return s[:n] + clipped
}

// boundMetadata returns a copy of m within maxMetadataOutBytes as JSON: strings and keys
// clipped, objects and lists cut to maxMetaItems entries (keys in sorted order) and
// maxMetaDepth levels, and then keys left out from the end while the whole is too large.
// cut reports whether anything was left out or shortened.
func boundMetadata(m map[string]any) (out map[string]any, cut bool) {
	if m == nil {
		return nil, false
	}
	nodes := maxMetaNodes
	v, cut := boundValue(m, 0, &nodes)
	out = v.(map[string]any)
	keys := sortedKeys(out)
	for size := jsonSize(out); size > maxMetadataOutBytes && len(keys) > 0; size = jsonSize(out) {
		delete(out, keys[len(keys)-1])
		keys, cut = keys[:len(keys)-1], true
	}
	return out, cut
}

// boundValue bounds one decoded JSON value at nesting depth; nodes is how many more values
// may be kept in all (each costs one).
func boundValue(v any, depth int, nodes *int) (any, bool) {
	*nodes--
	switch x := v.(type) {
	case string:
		c := clipJSON(x, maxMetaValueBytes)
		return c, c != x
	case map[string]any:
		if depth >= maxMetaDepth {
			return map[string]any{}, len(x) > 0
		}
		keys := sortedKeys(x)
		keys, cut := keys[:min(len(keys), maxMetaItems, max(*nodes, 0))], len(keys) > min(maxMetaItems, max(*nodes, 0))
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			e, c := boundValue(x[k], depth+1, nodes)
			ck := clipJSON(k, maxMetaKeyBytes)
			out[ck] = e
			cut = cut || c || ck != k
		}
		return out, cut
	case []any:
		if depth >= maxMetaDepth {
			return []any{}, len(x) > 0
		}
		keep := min(len(x), maxMetaItems, max(*nodes, 0))
		cut := len(x) > keep
		out := make([]any, 0, keep)
		for _, e := range x[:keep] {
			b, c := boundValue(e, depth+1, nodes)
			out = append(out, b)
			cut = cut || c
		}
		return out, cut
	}
	return v, false
}

// boundIDs returns at most maxIDList of ids, and whether some were left out.
func boundIDs(ids []string) ([]string, bool) {
	if len(ids) <= maxIDList {
		return ids, false
	}
	return ids[:maxIDList], true
}

// jsonSize is the length of v encoded by encoding/json (0 when it cannot be).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
