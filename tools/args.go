package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
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

// checker is a params struct with rules its tool's input schema cannot express (a UUID's
// form, a size in bytes, a filter's shape). check may also normalise the values; d
// resolves short document ids.
type checker interface {
	check(d *Deps) error
}

// bound returns the handler of tool def. The server has validated each call's arguments
// against def's input schema (ValidateArgs); they are bound once into a P over the
// defaults the schema publishes, P's check runs when P has one, and h gets the result.
func bound[P any](d *Deps, def mcp.Tool, h func(context.Context, *call, mcp.CallToolRequest, P) (*mcp.CallToolResult, error)) handler {
	// Prepared on the first call, not while the server starts.
	prepare := sync.OnceValues(func() (*binder, P) {
		var p P
		b := newBinder(reflect.TypeFor[P]())
		if err := b.set(reflect.ValueOf(&p).Elem(), schemaDefaults(def)); err != nil {
			panic(fmt.Sprintf("%s: the schema's defaults do not fit its params: %v", def.Name, err))
		}
		return b, p
	})
	return func(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, p := prepare()
		if err := b.bind(req, &p); err != nil {
			return internalError(fmt.Sprintf("r2r-mcp could not read the arguments of %s (%v); this is a bug, please report it.", def.Name, err)), nil
		}
		if c, ok := any(&p).(checker); ok {
			if err := c.check(d); err != nil {
				return invalidArgs(err), nil
			}
		}
		return h(ctx, c, req, p)
	}
}

// binder sets the fields of a params struct, named by their json tags, from a call's
// decoded arguments. The arguments went through the schema, so every argument has a field
// and every value its field's type; a mismatch is a params struct out of step with its
// schema. Integers arrive as JSON numbers (10.0 is an integer to JSON Schema too).
type binder struct {
	fields map[string][]int // argument name → index of its field
}

func newBinder(t reflect.Type) *binder {
	b := &binder{fields: map[string][]int{}}
	for _, f := range reflect.VisibleFields(t) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && f.IsExported() {
			b.fields[name] = f.Index
		}
	}
	return b
}

// bind sets *p from req's arguments; arguments absent or null keep p's values.
func (b *binder) bind(req mcp.CallToolRequest, p any) error {
	var args map[string]any
	switch a := req.Params.Arguments.(type) {
	case map[string]any:
		args = a
	case nil:
		if len(bytes.TrimSpace(req.Params.RawArguments)) > 0 {
			if err := json.Unmarshal(req.Params.RawArguments, &args); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("arguments are %s, not an object", jsonType(a))
	}
	return b.set(reflect.ValueOf(p).Elem(), args)
}

func (b *binder) set(p reflect.Value, args map[string]any) error {
	for name, v := range args {
		index, ok := b.fields[name]
		if !ok {
			return fmt.Errorf("no field for argument %q", name)
		}
		if v == nil {
			continue
		}
		if err := setField(p.FieldByIndex(index), v); err != nil {
			return fmt.Errorf("argument %q: %w", name, err)
		}
	}
	return nil
}

func setField(f reflect.Value, v any) error {
	switch f.Kind() {
	case reflect.String:
		if s, ok := v.(string); ok {
			f.SetString(s)
			return nil
		}
	case reflect.Bool:
		if x, ok := v.(bool); ok {
			f.SetBool(x)
			return nil
		}
	case reflect.Int:
		if n, ok := integer(v); ok {
			f.SetInt(n)
			return nil
		}
	case reflect.Float64:
		if x, ok := number(v); ok {
			f.SetFloat(x)
			return nil
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok && f.Type() == reflect.TypeOf(m) {
			f.Set(reflect.ValueOf(m))
			return nil
		}
	}
	return fmt.Errorf("%s cannot go into a field of type %s", jsonType(v), f.Type())
}

// integer is v as an integer, when it is one exactly.
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x), true
		}
	case int:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}

// number is v as a float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// schemaDefaults are the default values def's input schema publishes, by argument name.
func schemaDefaults(def mcp.Tool) map[string]any {
	out := map[string]any{}
	for name, prop := range def.InputSchema.Properties {
		if m, ok := prop.(map[string]any); ok && m["default"] != nil {
			out[name] = m["default"]
		}
	}
	return out
}

// nonBlank rejects a string of white space only, which a minLength of 1 lets through.
func nonBlank(name, s string) error {
	if strings.TrimSpace(s) == "" {
		return argErr(name, "must not be empty")
	}
	return nil
}

// optUUID returns an optional UUID argument in canonical lower-case form; "" stays "".
func optUUID(name, s, listHint string) (string, error) {
	if s == "" {
		return "", nil
	}
	return parseUUIDArg(name, s, listHint)
}

// objectWithin rejects an object argument longer than maxBytes as JSON.
func objectWithin(name string, m map[string]any, maxBytes int) error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return argErr(name, "is not valid JSON: %v", err)
	}
	if len(b) > maxBytes {
		return argErr(name, "is %d bytes when serialized; the limit is %d bytes", len(b), maxBytes)
	}
	return nil
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
