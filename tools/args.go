package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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
// against def's input schema (ValidateArgs); they are decoded once into a P over the
// defaults the schema publishes, P's check runs when P has one, and h gets the result.
func bound[P any](d *Deps, def mcp.Tool, h func(context.Context, mcp.CallToolRequest, P) (*mcp.CallToolResult, error)) server.ToolHandlerFunc {
	defaults := schemaDefaults(def)
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var p P
		if err := bind(req, defaults, &p); err != nil {
			return internalError(fmt.Sprintf("r2r-mcp could not read the arguments of %s (%v); this is a bug, please report it.", def.Name, err)), nil
		}
		if c, ok := any(&p).(checker); ok {
			if err := c.check(d); err != nil {
				return invalidArgs(err), nil
			}
		}
		return h(ctx, req, p)
	}
}

// bind decodes the arguments of req, over defaults, into p. The arguments went through
// the schema, so every key has a field in p and every value its type; numbers are
// re-encoded from the decoded map, so 10.0 fits an int field as JSON Schema's integer
// type says it does.
func bind(req mcp.CallToolRequest, defaults map[string]any, p any) error {
	args := maps.Clone(defaults)
	switch a := req.Params.Arguments.(type) {
	case map[string]any:
		maps.Copy(args, a)
	case nil:
		if len(bytes.TrimSpace(req.Params.RawArguments)) > 0 {
			var m map[string]any
			if err := json.Unmarshal(req.Params.RawArguments, &m); err != nil {
				return err
			}
			maps.Copy(args, m)
		}
	default:
		return fmt.Errorf("arguments are %s, not an object", jsonType(a))
	}
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(p)
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
