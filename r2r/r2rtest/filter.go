package r2rtest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// This file re-implements R2R's filter language (py/core/providers/database/filters.py in
// R2R) over in-memory chunks, including its SQL NULL semantics and its quirks; conformance
// tests search/filter_* and errors/500_* compare it with the real server.

// tri is SQL three-valued logic.
type tri int8

const (
	fFalse tri = iota
	fTrue
	fNull
)

func triOf(b bool) tri {
	if b {
		return fTrue
	}
	return fFalse
}

func triOr(ts ...tri) tri {
	out := fFalse
	for _, t := range ts {
		if t == fTrue {
			return fTrue
		}
		if t == fNull {
			out = fNull
		}
	}
	return out
}

func triNot(t tri) tri {
	switch t {
	case fTrue:
		return fFalse
	case fFalse:
		return fTrue
	}
	return fNull
}

// filterRow is what a filter sees of a chunk (the columns of R2R's chunks table).
type filterRow struct {
	id, documentID, ownerID string
	collectionIDs           []string
	text                    string
	metadata                map[string]any
}

type pred func(*filterRow) tri

// filterError is an error R2R raises while building or running the SQL; it surfaces as a 500
// whose detail carries errType.
type filterError struct {
	errType string
	msg     string
}

func (f *filterError) Error() string { return f.msg }

func ferr(format string, args ...any) error {
	return &filterError{"FilterError", fmt.Sprintf(format, args...)}
}

var knownOps = map[string]bool{"$eq": true, "$ne": true, "$lt": true, "$lte": true, "$gt": true, "$gte": true,
	"$in": true, "$nin": true, "$like": true, "$ilike": true, "$overlap": true, "$contains": true,
	"$json_contains": true, "$and": true, "$or": true}

// topLevelColumns are the keys R2R treats as columns rather than metadata paths. Only some of
// them exist in the chunks table; the others give a database error (500).
var topLevelColumns = map[string]bool{"id": true, "document_id": true, "owner_id": true, "collection_ids": true,
	"created_at": true, "updated_at": true, "status": true, "text": true, "type": true}

var uuidColumns = map[string]bool{"id": true, "document_id": true, "owner_id": true}

// compileFilter turns a filters object into a predicate.
func compileFilter(f map[string]any) (pred, error) {
	return compileDict(f)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compileDict(m map[string]any) (pred, error) {
	var preds []pred
	for _, key := range sortedKeys(m) {
		val := m[key]
		switch key {
		case "$and", "$or":
			list, ok := val.([]any)
			if !ok {
				return nil, ferr("'%s' value must be a list of filter dictionaries.", key)
			}
			var subs []pred
			for _, item := range list {
				if sub, isMap := item.(map[string]any); isMap {
					p, err := compileDict(sub)
					if err != nil {
						return nil, err
					}
					subs = append(subs, p)
				}
			}
			if key == "$and" {
				preds = append(preds, andPred(subs))
				continue
			}
			if len(list) == 0 {
				preds = append(preds, constPred(fFalse))
				continue
			}
			preds = append(preds, func(r *filterRow) tri {
				out := make([]tri, len(subs))
				for i, p := range subs {
					out[i] = p(r)
				}
				return triOr(out...)
			})
		default:
			p, err := compileField(key, val)
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
		}
	}
	return andPred(preds), nil
}

func andPred(ps []pred) pred {
	return func(r *filterRow) tri {
		out := fTrue
		for _, p := range ps {
			switch p(r) {
			case fFalse:
				return fFalse
			case fNull:
				out = fNull
			}
		}
		return out
	}
}

func constPred(t tri) pred { return func(*filterRow) tri { return t } }

func singleOp(v any) (string, any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", nil, false
	}
	for k, x := range m {
		return k, x, true
	}
	return "", nil, false
}

func compileField(field string, spec any) (pred, error) {
	switch {
	case field == "collection_id":
		if op, val, ok := singleOp(spec); ok {
			switch op {
			case "$eq":
				return collectionCond("$overlap", []any{val})
			case "$ne":
				s, isStr := val.(string)
				u, err := uuid.Parse(s)
				if !isStr || err != nil {
					return nil, &filterError{"DataError", fmt.Sprintf("invalid input for query argument: %v (invalid UUID)", pyRepr(val))}
				}
				id := u.String()
				return func(r *filterRow) tri { return triOf(!slices.Contains(r.collectionIDs, id)) }, nil
			default:
				return collectionCond(op, val)
			}
		}
		if s, ok := spec.(string); ok {
			return collectionCond("$overlap", []any{s})
		}
		return nil, ferr("Invalid condition for shorthand '%s'. Expected UUID string or {op: value} dict.", field)
	case field == "collection_ids":
		if op, val, ok := singleOp(spec); ok {
			return collectionCond(op, val)
		}
		if list, ok := spec.([]any); ok {
			return collectionCond("$overlap", list)
		}
		return nil, ferr("Invalid condition for '%s'. Expected {op: value} dict or list of UUIDs.", field)
	case field == "metadata":
		m, ok := spec.(map[string]any)
		if !ok {
			return nil, ferr("Filter for 'metadata' column must be a dictionary specifying paths and conditions.")
		}
		var preds []pred
		for _, path := range sortedKeys(m) {
			p, err := metadataCond(path, m[path])
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
		}
		return andPred(preds), nil
	case strings.HasPrefix(field, "metadata."):
		return metadataCond(strings.TrimPrefix(field, "metadata."), spec)
	case topLevelColumns[field]:
		if op, val, ok := singleOp(spec); ok {
			if !strings.HasPrefix(op, "$") {
				return nil, ferr("Invalid operator '%s' for field '%s'. Operators must start with '$'.", op, field)
			}
			return columnCond(field, op, val)
		}
		return columnCond(field, "$eq", spec)
	default:
		return metadataCond(field, spec)
	}
}

func parseUUIDList(op string, list []any) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, item := range list {
		u, err := uuid.Parse(fmt.Sprint(item))
		if err != nil {
			return nil, ferr("Invalid UUID format in list for 'collection_ids' filter: badly formed hexadecimal UUID string")
		}
		out = append(out, u.String())
	}
	return out, nil
}

// collectionCond handles the collection_ids uuid[] column.
func collectionCond(op string, val any) (pred, error) {
	switch op {
	case "$overlap", "$contains", "$in", "$nin":
		list, ok := val.([]any)
		if !ok {
			return nil, ferr("Operator '%s' on 'collection_ids' requires a list of UUID strings.", op)
		}
		if len(list) == 0 {
			return constPred(triOf(op == "$contains" || op == "$nin")), nil
		}
		ids, err := parseUUIDList(op, list)
		if err != nil {
			return nil, err
		}
		return func(r *filterRow) tri {
			n := 0
			for _, id := range ids {
				if slices.Contains(r.collectionIDs, id) {
					n++
				}
			}
			switch op {
			case "$contains":
				all := true
				for _, id := range ids {
					all = all && slices.Contains(r.collectionIDs, id)
				}
				return triOf(all)
			case "$nin":
				return triOf(n == 0)
			}
			return triOf(n > 0)
		}, nil
	case "$eq", "$ne":
		s, ok := val.(string)
		if !ok {
			return nil, ferr("Operator '%s' on 'collection_ids' requires a single UUID string value.", op)
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return nil, ferr("Invalid UUID format for '%s' on 'collection_ids': badly formed hexadecimal UUID string", op)
		}
		id := u.String()
		return func(r *filterRow) tri {
			eq := len(r.collectionIDs) == 1 && r.collectionIDs[0] == id
			return triOf(eq == (op == "$eq"))
		}, nil
	}
	return nil, ferr("Unsupported operator '%s' for array column 'collection_ids'.", op)
}

// columnCond handles the other top-level columns.
func columnCond(field, op string, val any) (pred, error) {
	switch op {
	case "$eq", "$ne", "$lt", "$lte", "$gt", "$gte":
	case "$like", "$ilike":
		if _, ok := val.(string); !ok {
			return nil, ferr("'%s' requires a string value for field '%s'.", op, field)
		}
	case "$in", "$nin":
		if val == nil {
			break
		}
		list, ok := val.([]any)
		if !ok {
			return nil, ferr("'%s' requires a list value for field '%s'.", op, field)
		}
		if len(list) == 0 {
			return constPred(triOf(op == "$nin")), nil
		}
	default:
		if val != nil {
			return nil, ferr("Unsupported operator '%s' for standard column '%s'.", op, field)
		}
	}
	if val == nil {
		// Chunk columns are never NULL.
		return constPred(triOf(op == "$ne")), nil
	}
	switch field {
	case "created_at", "updated_at", "status", "type":
		return nil, &filterError{"UndefinedColumnError", fmt.Sprintf("column \"%s\" does not exist", field)}
	}
	get := func(r *filterRow) string {
		switch field {
		case "id":
			return r.id
		case "document_id":
			return r.documentID
		case "owner_id":
			return r.ownerID
		}
		return r.text
	}
	isUUID := uuidColumns[field]
	// coerce validates a parameter the way asyncpg would when binding it.
	coerce := func(v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", &filterError{"DataError", fmt.Sprintf("invalid input for query argument: %s (expected str, got %s)", pyRepr(v), pyType(v))}
		}
		if !isUUID {
			return s, nil
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return "", &filterError{"DataError", fmt.Sprintf("invalid input for query argument: %s (invalid UUID %s)", pyRepr(v), pyRepr(v))}
		}
		return u.String(), nil
	}
	switch op {
	case "$like", "$ilike":
		if isUUID {
			return nil, &filterError{"UndefinedFunctionError", fmt.Sprintf("operator does not exist: uuid %s unknown", map[string]string{"$like": "~~", "$ilike": "~~*"}[op])}
		}
		re := likeRegexp(val.(string), op == "$ilike")
		return func(r *filterRow) tri { return triOf(re.MatchString(get(r))) }, nil
	case "$in", "$nin":
		var set []string
		for _, item := range val.([]any) {
			s, err := coerce(item)
			if err != nil {
				return nil, err
			}
			set = append(set, s)
		}
		return func(r *filterRow) tri { return triOf(slices.Contains(set, get(r)) == (op == "$in")) }, nil
	}
	s, err := coerce(val)
	if err != nil {
		return nil, err
	}
	return func(r *filterRow) tri { return triOf(compareOp(op, strings.Compare(get(r), s))) }, nil
}

func compareOp(op string, c int) bool {
	switch op {
	case "$eq":
		return c == 0
	case "$ne":
		return c != 0
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	}
	return false
}

// metadataCond handles a (possibly nested) path inside the metadata JSONB column.
func metadataCond(path string, spec any) (pred, error) {
	if m, ok := spec.(map[string]any); ok {
		if len(m) != 1 {
			return nil, ferr("Invalid filter structure for metadata path '%s'. Expected a value or a single-key dictionary with an operator or nested path. Found: %s", path, pyRepr(spec))
		}
		op, val, _ := singleOp(spec)
		if strings.HasPrefix(op, "$") && knownOps[op] {
			return metadataOp(path, op, val)
		}
		// Not an operator: a nested path segment (this is how "$neq" silently matches nothing).
		return metadataCond(path+"."+op, val)
	}
	return metadataOp(path, "$eq", spec)
}

// jsonPath walks a dotted path like Postgres' #> operator.
func jsonPath(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, part := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[part]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil {
				return nil, false
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// jsonText is Postgres' ->> text extraction: SQL NULL for missing keys and JSON null.
func jsonText(v any, present bool) (string, bool) {
	if !present || v == nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case json.Number:
		return x.String(), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int:
		return strconv.Itoa(x), true
	}
	return pgJSON(v), true
}

// pgJSON renders JSON the way Postgres prints jsonb (", " and ": " separators).
func pgJSON(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, string(mustJSON(k))+": "+pgJSON(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, pgJSON(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return string(mustJSON(v))
}

func metadataOp(path, op string, val any) (pred, error) {
	get := func(r *filterRow) (any, bool) { return jsonPath(r.metadata, path) }
	switch op {
	case "$in", "$nin":
		list, ok := val.([]any)
		if !ok {
			return nil, ferr("'%s' requires list value for '%s'.", op, path)
		}
		if len(list) == 0 {
			return constPred(triOf(op == "$nin")), nil
		}
		strs := make([]string, len(list))
		for i, item := range list {
			strs[i] = pyStr(item)
		}
		return func(r *filterRow) tri {
			v, present := get(r)
			if !present {
				return fNull
			}
			t := triOf(jsonbExistsAny(v, strs))
			if op == "$nin" {
				return triNot(t)
			}
			return t
		}, nil
	case "$json_contains":
		return func(r *filterRow) tri {
			v, present := get(r)
			if !present {
				return fNull
			}
			return triOf(jsonbContains(v, val, true))
		}, nil
	case "$contains":
		list, ok := val.([]any)
		if !ok {
			return nil, ferr("Operator '$contains' on JSONB path '%s' requires a list value (representing elements to check for containment).", path)
		}
		if len(list) == 0 {
			return constPred(fTrue), nil
		}
		return func(r *filterRow) tri {
			v, present := get(r)
			if !present {
				return fNull
			}
			return triOf(jsonbContains(v, val, true))
		}, nil
	}
	if val == nil {
		switch op {
		case "$eq", "$ne":
			return func(r *filterRow) tri {
				_, notNull := jsonText(get(r))
				return triOf(notNull == (op == "$ne"))
			}, nil
		}
		return constPred(fFalse), nil
	}
	switch op {
	case "$eq", "$ne", "$lt", "$lte", "$gt", "$gte":
		switch x := val.(type) {
		case bool:
			return func(r *filterRow) tri {
				s, ok := jsonText(get(r))
				if !ok {
					return fFalse
				}
				b, ok := pgBool(s)
				if !ok {
					return fFalse // Postgres would raise a cast error here; the emulator does not match.
				}
				return triOf(compareOp(op, boolCmp(b, x)))
			}, nil
		case json.Number, float64, int:
			want, _ := toFloat(x)
			return func(r *filterRow) tri {
				s, ok := jsonText(get(r))
				if !ok {
					return fFalse
				}
				f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
				if err != nil || math.IsInf(f, 0) {
					return fFalse // a failed ::numeric cast; see above
				}
				return triOf(compareOp(op, floatCmp(f, want)))
			}, nil
		default:
			want := pyStr(val)
			return func(r *filterRow) tri {
				s, ok := jsonText(get(r))
				if !ok {
					return fNull
				}
				return triOf(compareOp(op, strings.Compare(s, want)))
			}, nil
		}
	case "$like", "$ilike":
		s, ok := val.(string)
		if !ok {
			return nil, ferr("'%s' requires string value for '%s'.", op, path)
		}
		re := likeRegexp(s, op == "$ilike")
		return func(r *filterRow) tri {
			t, ok := jsonText(get(r))
			if !ok {
				return fNull
			}
			return triOf(re.MatchString(t))
		}, nil
	}
	return nil, ferr("Unsupported operator '%s' for metadata field '%s'.", op, path)
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func floatCmp(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func pgBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "t", "true", "y", "yes", "on", "1":
		return true, true
	case "f", "false", "n", "no", "off", "0":
		return false, true
	}
	return false, false
}

// jsonbExistsAny is Postgres' ?| operator: string values, string array elements or object
// keys. Numbers never match, as in Postgres.
func jsonbExistsAny(v any, strs []string) bool {
	switch x := v.(type) {
	case string:
		return slices.Contains(strs, x)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && slices.Contains(strs, s) {
				return true
			}
		}
	case map[string]any:
		for k := range x {
			if slices.Contains(strs, k) {
				return true
			}
		}
	}
	return false
}

// jsonbContains is Postgres' @> operator.
func jsonbContains(a, b any, top bool) bool {
	switch bv := b.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range bv {
			av, ok := am[k]
			if !ok || !jsonbContains(av, v, false) {
				return false
			}
		}
		return true
	case []any:
		aa, ok := a.([]any)
		if !ok {
			return false
		}
		for _, want := range bv {
			found := false
			for _, have := range aa {
				if jsonbContains(have, want, false) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	if aa, ok := a.([]any); ok && top {
		// A top-level array contains a primitive that is one of its elements.
		for _, have := range aa {
			if jsonScalarEqual(have, b) {
				return true
			}
		}
		return false
	}
	return jsonScalarEqual(a, b)
}

func jsonScalarEqual(a, b any) bool {
	af, aNum := toFloat(a)
	bf, bNum := toFloat(b)
	if aNum || bNum {
		return aNum && bNum && af == bf
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// likeRegexp translates a SQL LIKE pattern (% and _, backslash escapes) to a regexp.
func likeRegexp(pattern string, fold bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)")
	if fold {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// pyStr is Python's str() of a JSON value (used where R2R stringifies parameters).
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	}
	return pyRepr(v)
}

// pyRepr approximates Python's repr() of a JSON value, for error messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "\\'") + "'"
	case nil, bool, json.Number:
		return pyStr(v)
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, pyRepr(k)+": "+pyRepr(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, pyRepr(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "int"
		}
		return "float"
	case map[string]any:
		return "dict"
	case []any:
		return "list"
	}
	return "str"
}
