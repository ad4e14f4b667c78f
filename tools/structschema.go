package tools

import (
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// A tool's schemas are derived from its Go types: the input schema from its params struct
// (inputSchema), the output schema from its structured result (outputSchema). Each field
// named by a json tag is a property, in field order; its tags say the rest:
//
//	desc:"…"      the property's description (every property has one)
//	schema:"…"    comma-separated: required, minLength=N, maxLength=N, min=N, max=N,
//	              maxItems=N, default=V, enum=a|b|c, items.minLength=N,
//	              items.maxLength=N, free (an object whose fields are not described)
//	items:"…"     the description of a []string output's items
//
// N, V and an enum may also name a value in schemaValues, so a bound the code checks too
// has one home: its Go constant.

// schemaValues are the Go values a schema tag may name.
var schemaValues = map[string]any{
	"maxQueryChars":     maxQueryChars,
	"searchModes":       searchModes,
	"searchModeDefault": r2r.SearchModeAdvanced,
	"memoryKinds":       memory.Kinds,
}

// inputSchema returns the options that declare P's fields as input properties (see
// newTool, which keeps their order).
func inputSchema[P any]() []mcp.ToolOption {
	t := reflect.TypeFor[P]()
	var opts []mcp.ToolOption
	for _, f := range schemaFields(t) {
		name, prop, required := f.name, propertyOf(f, true), f.options.has("required")
		opts = append(opts, func(t *mcp.Tool) {
			if required {
				t.InputSchema.Required = append(t.InputSchema.Required, name)
			}
			t.InputSchema.Properties[name] = maps.Clone(prop)
		})
	}
	return opts
}

// outputSchema is the output schema of a tool whose structured result is an O (an
// objectSchema, for readTool or withOutputSchema).
func outputSchema[O any]() map[string]any {
	return objectOf(reflect.TypeFor[O]())
}

// objectOf is the output schema of struct type t (an objectSchema).
func objectOf(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range schemaFields(t) {
		props[f.name] = propertyOf(f, false)
		if f.options.has("required") {
			required = append(required, f.name)
		}
	}
	return objectSchema(props, required...)
}

// schemaField is one field of a struct that has a property.
type schemaField struct {
	name    string
	typ     reflect.Type
	desc    string
	items   string
	options schemaOptions
}

func schemaFields(t reflect.Type) []schemaField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []schemaField
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || f.Anonymous || name == "" || name == "-" {
			continue
		}
		out = append(out, schemaField{name: name, typ: f.Type, desc: f.Tag.Get("desc"), items: f.Tag.Get("items"),
			options: parseSchemaTag(t.Name()+"."+f.Name, f.Tag.Get("schema"))})
	}
	return out
}

// propertyOf is the schema of one field, as mcp-go's property options build it for an input.
func propertyOf(f schemaField, input bool) map[string]any {
	t := f.typ
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var p map[string]any
	switch {
	case f.options.has("free") || t.Kind() == reflect.Map:
		p = map[string]any{"type": "object"}
		if input {
			p["properties"] = map[string]any{} // as mcp.WithObject declares it
		}
	case t.Kind() == reflect.Struct:
		p = objectOf(t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		items := map[string]any{"type": "string"}
		if f.items != "" {
			items["description"] = f.items
		}
		f.options.apply("items.", items, reflect.String)
		p = map[string]any{"type": "array", "items": items}
	case t.Kind() == reflect.Slice:
		p = map[string]any{"type": "array", "items": objectOf(t.Elem())}
	default:
		p = map[string]any{"type": schemaType(t)}
	}
	if f.desc != "" {
		p["description"] = f.desc
	}
	f.options.apply("", p, t.Kind())
	return p
}

func schemaType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	panic(fmt.Sprintf("tools: no JSON schema type for %s", t))
}

// schemaOptions are a field's schema tag, parsed: option → value ("" for a flag).
type schemaOptions struct {
	field string
	kv    [][2]string
}

func parseSchemaTag(field, tag string) schemaOptions {
	o := schemaOptions{field: field}
	for opt := range strings.SplitSeq(tag, ",") {
		if opt = strings.TrimSpace(opt); opt != "" {
			k, v, _ := strings.Cut(opt, "=")
			o.kv = append(o.kv, [2]string{k, v})
		}
	}
	return o
}

func (o schemaOptions) has(key string) bool {
	for _, kv := range o.kv {
		if kv[0] == key {
			return true
		}
	}
	return false
}

// schemaKeys maps a tag's option to its JSON Schema keyword; the flags have none.
var schemaKeys = map[string]string{"minLength": "minLength", "maxLength": "maxLength", "min": "minimum", "max": "maximum",
	"maxItems": "maxItems", "default": "default", "enum": "enum", "required": "", "free": ""}

// apply sets the options under prefix ("" or "items.") on schema p of a value of kind k.
// A tag that is not understood is a programmer error: it panics, and the registry's tests
// catch it.
func (o schemaOptions) apply(prefix string, p map[string]any, k reflect.Kind) {
	for _, kv := range o.kv {
		key, ok := strings.CutPrefix(kv[0], prefix)
		if !ok || (prefix == "" && strings.HasPrefix(key, "items.")) {
			continue
		}
		word, known := schemaKeys[key]
		if !known {
			panic(fmt.Sprintf("tools: %s: unknown schema option %q", o.field, kv[0]))
		}
		if word == "" {
			continue
		}
		v, err := schemaValue(key, kv[1], k)
		if err != nil {
			panic(fmt.Sprintf("tools: %s: schema option %s=%s is neither a value of its kind nor a name in schemaValues: %v", o.field, kv[0], kv[1], err))
		}
		p[word] = v
	}
}

// schemaValue reads an option's value as mcp-go's property options store it: lengths and
// counts as int, bounds and defaults as the field's kind, an enum as []string.
func schemaValue(key, s string, k reflect.Kind) (any, error) {
	if v, ok := schemaValues[s]; ok {
		return v, nil
	}
	switch {
	case key == "enum":
		return strings.Split(s, "|"), nil
	case key == "default" && k == reflect.String:
		return s, nil
	case key == "default" && k == reflect.Bool:
		return strconv.ParseBool(s)
	case k == reflect.Float32 || k == reflect.Float64:
		return strconv.ParseFloat(s, 64)
	}
	return strconv.Atoi(s)
}
