package tools

import (
	"fmt"
	"slices"
	"strings"
)

// Limits on a caller's search filter.
const (
	maxFilterDepth = 8   // nesting of objects and $and/$or lists
	maxFilterNodes = 200 // objects, keys and list elements in total
	maxFilterList  = 100 // elements of one list ($in, $and, …)
	maxFieldName   = 256
)

// filterOps are the comparison operators R2R's filter language knows.
var filterOps = []string{"$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$like", "$ilike",
	"$in", "$nin", "$overlap", "$contains", "$json_contains"}

// logicalOps combine whole filter objects.
var logicalOps = []string{"$and", "$or"}

// opAliases are spellings R2R's docs use but its code does not understand.
var opAliases = map[string]string{"$neq": "$ne"}

func allowedOpsText() string {
	return strings.Join(append(slices.Clone(filterOps), logicalOps...), " ")
}

// filterChecker validates and normalises one filter tree.
type filterChecker struct {
	nodes int
}

// normalizeFilters validates a caller's filter object and returns a normalised copy ($neq
// rewritten to $ne). Errors name the offending path and say what is allowed.
func normalizeFilters(f map[string]any) (map[string]any, error) {
	c := &filterChecker{}
	out, err := c.object(f, "filters", 1)
	if err != nil {
		return nil, &ArgError{Arg: "filters", Msg: err.Error()}
	}
	return out, nil
}

func (c *filterChecker) count(path string) error {
	c.nodes++
	if c.nodes > maxFilterNodes {
		return fmt.Errorf("is too large at %s: at most %d keys and list elements", path, maxFilterNodes)
	}
	return nil
}

// object checks a filter object: keys are $and/$or or field names.
func (c *filterChecker) object(f map[string]any, path string, depth int) (map[string]any, error) {
	if depth > maxFilterDepth {
		return nil, fmt.Errorf("is nested too deeply at %s (limit %d levels)", path, maxFilterDepth)
	}
	out := make(map[string]any, len(f))
	for _, k := range sortedKeys(f) {
		v := f[k]
		p := path + "." + k
		if err := c.count(p); err != nil {
			return nil, err
		}
		if strings.HasPrefix(k, "$") {
			if !slices.Contains(logicalOps, k) {
				if slices.Contains(filterOps, k) || opAliases[k] != "" {
					return nil, fmt.Errorf("uses %s at %s without a field; write {\"<field>\": {\"%s\": …}}", k, path, k)
				}
				return nil, unknownOp(k, path)
			}
			list, err := c.logical(k, v, p, depth)
			if err != nil {
				return nil, err
			}
			out[k] = list
			continue
		}
		if err := checkFieldName(k, path); err != nil {
			return nil, err
		}
		cond, err := c.condition(v, p, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = cond
	}
	return out, nil
}

func (c *filterChecker) logical(op string, v any, path string, depth int) ([]any, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("needs a list of filter objects for %s at %s, got %s", op, path, jsonType(v))
	}
	if len(list) > maxFilterList {
		return nil, fmt.Errorf("has %d elements in %s at %s; the limit is %d", len(list), op, path, maxFilterList)
	}
	out := make([]any, len(list))
	for i, e := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		if err := c.count(p); err != nil {
			return nil, err
		}
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("needs filter objects inside %s, got %s at %s", op, jsonType(e), p)
		}
		sub, err := c.object(m, p, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = sub
	}
	return out, nil
}

// condition checks the value of a field: a bare value (shorthand for $eq), an operator
// object, or a nested object of metadata sub-fields.
func (c *filterChecker) condition(v any, path string, depth int) (any, error) {
	if depth > maxFilterDepth {
		return nil, fmt.Errorf("is nested too deeply at %s (limit %d levels)", path, maxFilterDepth)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c.operand("", v, path)
	}
	var ops, fields int
	for k := range m {
		if strings.HasPrefix(k, "$") {
			ops++
		} else {
			fields++
		}
	}
	if ops > 0 && fields > 0 {
		return nil, fmt.Errorf("mixes operators and field names at %s; use one or the other", path)
	}
	if fields > 0 || len(m) == 0 {
		// An operator written without its $ ({"document_type": {"eq": "md"}}) would be read
		// as a nested metadata key and silently match nothing.
		for _, k := range sortedKeys(m) {
			if op := "$" + strings.ToLower(k); slices.Contains(filterOps, op) || slices.Contains(logicalOps, op) || opAliases[op] != "" {
				return nil, fmt.Errorf("uses %q at %s, which R2R would read as a metadata field and match nothing; "+
					"operators start with $: write {%q: …}", k, path, op)
			}
		}
		// {"metadata": {"title": …}} addresses a nested metadata key.
		return c.object(m, path, depth)
	}
	out := make(map[string]any, len(m))
	for _, k := range sortedKeys(m) {
		p := path + "." + k
		if err := c.count(p); err != nil {
			return nil, err
		}
		op := k
		if alias, ok := opAliases[k]; ok {
			op = alias
		}
		if slices.Contains(logicalOps, op) {
			return nil, fmt.Errorf("uses %s inside a field condition at %s; put $and/$or around whole filter objects", op, path)
		}
		if !slices.Contains(filterOps, op) {
			return nil, unknownOp(k, path)
		}
		if _, dup := out[op]; dup {
			return nil, fmt.Errorf("gives %s twice at %s (once as %s)", op, path, k)
		}
		val, err := c.operand(op, m[k], p)
		if err != nil {
			return nil, err
		}
		out[op] = val
	}
	return out, nil
}

// operand checks an operator's value ("" = a bare value).
func (c *filterChecker) operand(op string, v any, path string) (any, error) {
	switch op {
	case "$in", "$nin", "$overlap":
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("needs a list for %s at %s, got %s", op, path, jsonType(v))
		}
		return c.scalarList(op, list, path)
	case "$like", "$ilike":
		if _, ok := v.(string); !ok {
			return nil, fmt.Errorf("needs a string pattern for %s at %s (SQL wildcards %% and _), got %s", op, path, jsonType(v))
		}
		return v, nil
	case "$lt", "$lte", "$gt", "$gte":
		switch v.(type) {
		case float64, string:
			return v, nil
		}
		return nil, fmt.Errorf("needs a number or string for %s at %s, got %s", op, path, jsonType(v))
	case "$json_contains":
		return v, c.jsonValue(v, path, 1)
	}
	// $eq, $ne, $contains and bare values: scalars, null, or lists of scalars.
	switch x := v.(type) {
	case []any:
		return c.scalarList(op, x, path)
	case map[string]any:
		return nil, fmt.Errorf("cannot compare with an object at %s; use $json_contains for JSON containment", path)
	}
	return v, nil
}

// jsonValue bounds a $json_contains value (any JSON) like the rest of the filter: its
// objects, keys and list elements count towards maxFilterNodes, its nesting towards
// maxFilterDepth, and its lists and field names have the usual limits.
func (c *filterChecker) jsonValue(v any, path string, depth int) error {
	if depth > maxFilterDepth {
		return fmt.Errorf("is nested too deeply at %s (limit %d levels)", path, maxFilterDepth)
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := path + "." + k
			if err := checkFieldName(k, path); err != nil {
				return err
			}
			if err := c.count(p); err != nil {
				return err
			}
			if err := c.jsonValue(x[k], p, depth+1); err != nil {
				return err
			}
		}
	case []any:
		if len(x) > maxFilterList {
			return fmt.Errorf("has %d elements at %s; the limit is %d", len(x), path, maxFilterList)
		}
		for i, e := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			if err := c.count(p); err != nil {
				return err
			}
			if err := c.jsonValue(e, p, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *filterChecker) scalarList(op string, list []any, path string) ([]any, error) {
	if len(list) > maxFilterList {
		return nil, fmt.Errorf("has %d elements at %s; the limit is %d", len(list), path, maxFilterList)
	}
	for i, e := range list {
		if err := c.count(path); err != nil {
			return nil, err
		}
		switch e.(type) {
		case string, float64, bool:
		default:
			what := op
			if what == "" {
				what = "the list"
			}
			return nil, fmt.Errorf("needs strings, numbers or booleans in %s at %s[%d], got %s", what, path, i, jsonType(e))
		}
	}
	return slices.Clone(list), nil
}

func checkFieldName(k, path string) error {
	if strings.TrimSpace(k) == "" {
		return fmt.Errorf("has an empty field name at %s", path)
	}
	if len(k) > maxFieldName {
		return fmt.Errorf("has a field name longer than %d bytes at %s", maxFieldName, path)
	}
	return nil
}

func unknownOp(op, path string) error {
	return fmt.Errorf("uses unknown operator %s at %s; allowed operators: %s", op, path, allowedOpsText())
}

// filterFields lists the field names a filter tests (outside $and/$or), sorted, for advice
// when it matched nothing.
func filterFields(f map[string]any) []string {
	var out []string
	var walk func(m map[string]any)
	walk = func(m map[string]any) {
		for k, v := range m {
			if slices.Contains(logicalOps, k) {
				if list, ok := v.([]any); ok {
					for _, e := range list {
						if sub, ok := e.(map[string]any); ok {
							walk(sub)
						}
					}
				}
				continue
			}
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	walk(f)
	slices.Sort(out)
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
