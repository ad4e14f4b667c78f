package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// ArgError is an invalid tool argument. Handlers turn it into an isError result with code
// -32602 whose text names the argument and the rule it broke.
type ArgError struct {
	Arg string // argument name; "" for problems with the argument object itself
	Msg string
}

func (e *ArgError) Error() string {
	if e.Arg == "" {
		return e.Msg
	}
	return fmt.Sprintf("argument %q %s", e.Arg, e.Msg)
}

func argErr(name, format string, a ...any) *ArgError {
	return &ArgError{Arg: name, Msg: fmt.Sprintf(format, a...)}
}

// Args are the decoded arguments of one tool call. The helpers never truncate or coerce:
// 3.7 is not an integer, "10" is not a number, and 0, false and "" given explicitly are
// values, not "missing" (only optional strings treat "" as absent, see OptString).
type Args map[string]any

// newArgs checks the raw arguments of a call: they must be a JSON object (or absent) whose
// keys are all in valid.
func newArgs(raw any, valid []string) (Args, error) {
	var m map[string]any
	switch v := raw.(type) {
	case nil:
		m = map[string]any{}
	case map[string]any:
		m = v
	case json.RawMessage:
		// "arguments": null means no arguments, as an absent field does.
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, &ArgError{Msg: "arguments must be a JSON object"}
		}
		if m == nil {
			m = map[string]any{}
		}
	default:
		return nil, &ArgError{Msg: fmt.Sprintf("arguments must be a JSON object, got %s", jsonType(raw))}
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(valid, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		quoted := make([]string, len(unknown))
		for i, u := range unknown {
			quoted[i] = strconv.Quote(u)
		}
		noun := "argument"
		if len(unknown) > 1 {
			noun = "arguments"
		}
		return nil, &ArgError{Arg: unknown[0], Msg: fmt.Sprintf("unknown %s %s; valid arguments: %s",
			noun, strings.Join(quoted, ", "), strings.Join(valid, ", "))}
	}
	return Args(m), nil
}

// present reports whether name was given with a non-null value.
func (a Args) present(name string) bool {
	v, ok := a[name]
	return ok && v != nil
}

// ReqString returns a required string of 1..maxLen characters (Unicode code points, as
// JSON Schema's maxLength counts). Whitespace-only counts as empty.
func (a Args) ReqString(name string, maxLen int) (string, error) {
	if !a.present(name) {
		return "", argErr(name, "is required")
	}
	s, err := a.str(name, maxLen)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", argErr(name, "must not be empty")
	}
	return s, nil
}

// OptString returns an optional string of at most maxLen characters; ok is false when the
// argument is absent, null or "" (clients often send "" for "not set").
func (a Args) OptString(name string, maxLen int) (s string, ok bool, err error) {
	if !a.present(name) {
		return "", false, nil
	}
	s, err = a.str(name, maxLen)
	if err != nil || s == "" {
		return "", false, err
	}
	return s, true, nil
}

func (a Args) str(name string, maxLen int) (string, error) {
	s, ok := a[name].(string)
	if !ok {
		return "", argErr(name, "must be a string, got %s", jsonType(a[name]))
	}
	if !utf8.ValidString(s) {
		return "", argErr(name, "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); maxLen > 0 && n > maxLen {
		return "", argErr(name, "is %d characters long; the limit is %d", n, maxLen)
	}
	return s, nil
}

// Enum returns a string from allowed, or def when absent.
func (a Args) Enum(name string, allowed []string, def string) (string, error) {
	if !a.present(name) {
		return def, nil
	}
	s, ok := a[name].(string)
	if !ok {
		return "", argErr(name, "must be a string, got %s", jsonType(a[name]))
	}
	if !slices.Contains(allowed, s) {
		return "", argErr(name, "must be one of %s, got %q", strings.Join(allowed, ", "), s)
	}
	return s, nil
}

// Int returns an integer in [lo, hi], or def when absent. JSON numbers arrive as float64;
// a value with a fractional part, a string or any other type is an error, never rounded.
func (a Args) Int(name string, lo, hi, def int) (int, error) {
	if !a.present(name) {
		return def, nil
	}
	n, err := toInt(a[name])
	if err != nil {
		return 0, argErr(name, "%s", err.Error())
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, argErr(name, "must be between %d and %d, got %d", lo, hi, n)
	}
	return int(n), nil
}

func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x) {
			return 0, fmt.Errorf("must be an integer, got %v", x)
		}
		if math.Abs(x) > 1<<53 {
			return 0, fmt.Errorf("is out of range: %v", x)
		}
		return int64(x), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("must be an integer, got %s", x)
		}
		return n, nil
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	}
	return 0, fmt.Errorf("must be an integer, got %s", jsonType(v))
}

// Number returns a number in [lo, hi], or def when absent.
func (a Args) Number(name string, lo, hi, def float64) (float64, error) {
	if !a.present(name) {
		return def, nil
	}
	var f float64
	switch x := a[name].(type) {
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, argErr(name, "must be a number, got %s", x)
		}
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	default:
		return 0, argErr(name, "must be a number, got %s", jsonType(a[name]))
	}
	if math.IsNaN(f) || f < lo || f > hi {
		return 0, argErr(name, "must be between %g and %g, got %g", lo, hi, f)
	}
	return f, nil
}

// Bool returns a boolean, or def when absent. "true" (a string) is not a boolean.
func (a Args) Bool(name string, def bool) (bool, error) {
	if !a.present(name) {
		return def, nil
	}
	b, ok := a[name].(bool)
	if !ok {
		return false, argErr(name, "must be a boolean, got %s", jsonType(a[name]))
	}
	return b, nil
}

// Object returns an optional JSON object whose serialized form is at most maxBytes long.
func (a Args) Object(name string, maxBytes int) (map[string]any, bool, error) {
	if !a.present(name) {
		return nil, false, nil
	}
	m, ok := a[name].(map[string]any)
	if !ok {
		return nil, false, argErr(name, "must be an object, got %s", jsonType(a[name]))
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false, argErr(name, "is not valid JSON: %v", err)
	}
	if len(b) > maxBytes {
		return nil, false, argErr(name, "is %d bytes when serialized; the limit is %d bytes", len(b), maxBytes)
	}
	return m, true, nil
}

// UUID returns a required UUID in canonical lower-case form.
func (a Args) UUID(name, listHint string) (string, error) {
	s, err := a.ReqString(name, 64)
	if err != nil {
		return "", err
	}
	return parseUUIDArg(name, s, listHint)
}

// OptUUID returns an optional UUID in canonical lower-case form.
func (a Args) OptUUID(name, listHint string) (string, bool, error) {
	s, ok, err := a.OptString(name, 64)
	if err != nil || !ok {
		return "", false, err
	}
	id, err := parseUUIDArg(name, s, listHint)
	return id, err == nil, err
}

func parseUUIDArg(name, s, listHint string) (string, error) {
	u, err := uuid.Parse(strings.TrimSpace(s))
	if err != nil || len(strings.TrimSpace(s)) != 36 {
		msg := fmt.Sprintf("must be a UUID like 9fbe403b-c11c-5aae-8ade-ef22980c3ad1, got %q", s)
		if listHint != "" {
			msg += "; " + listHint
		}
		return "", argErr(name, "%s", msg)
	}
	return u.String(), nil
}

// jsonType names the JSON type of a decoded value for error messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, json.Number, int, int64, int32:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
