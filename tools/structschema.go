package tools

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// A tool's schemas are derived from its Go types: the input schema from its params struct
// (inputSchema), the output schema from its structured result (outputSchema). Each field
// named by a json tag is a property, in field order; its other tags, in the style of the
// knob tags (server/knob), say the rest:
//
//	desc:"…"           the property's description (every property has one)
//	required:"true"    the property is required
//	min:"1" max:"100"  bounds: of a number's value, a string's length, an array's items
//	default:"10"       the value an omitted input takes
//	enum:"a,b,c"       the values a string may take
//	items:"…"          the description of a []string's items; itemmin, itemmax their lengths
//	free:"true"        an object whose fields are not described
//
// A value may also name one in schemaValues, so a bound the code checks too, or a text
// two tools share, has one home: its Go constant.

// schemaValues are the Go values a schema tag may name.
var schemaValues = map[string]any{
	"maxQueryChars":       maxQueryChars,
	"searchModes":         searchModes,
	"searchModeDefault":   r2r.SearchModeAdvanced,
	"defaultSearchLimit":  defaultSearchLimit,
	"memoryKinds":         memory.Kinds,
	"memoryOutcomes":      []string{memory.OutcomeDeleted, memory.OutcomeHidden, memory.OutcomeGone, memory.OutcomePending, memory.OutcomeShown},
	"memoryTitleChars":    memory.MaxTitleChars,
	"memoryBodyBytes":     memory.MaxBodyBytes,
	"memoryErrorBytes":    memory.MaxErrorBytes,
	"memoryPaths":         memory.MaxPaths,
	"memoryPathChars":     memory.MaxPathChars,
	"memoryTags":          memory.MaxTags,
	"memoryTagChars":      memory.MaxTagChars,
	"statusFilters":       statusFilters,
	"ingestionModes":      kbsync.IngestionModes,
	"maxModelChars":       maxModelChars,
	"maxRAGTokens":        maxRAGTokens,
	"minShortID":          minShortID,
	"maxPathChars":        maxPathChars,
	"maxMaxChars":         maxMaxChars,
	"defaultMaxChars":     defaultMaxChars,
	"troubleMatches":      []string{matchSignature, matchMeaning},
	"maxTroubleBytes":     maxTroubleBytes,
	"ingestionStatusDesc": ingestionStatusDesc,
	"teamAccess":          []string{string(team.AccessOwner), string(team.AccessMember), string(team.AccessNone)},
	"jobStates":           []string{jobRunning, jobDone, jobFailed},
	"maxStatusWait":       maxStatusWait,
	"syncRefusedDesc":     syncRefusedDesc,
	"syncFailedDesc":      syncFailedDesc,
	"teamLeftDesc":        teamLeftDesc,
}

// inputSchema declares P's fields as a tool's input properties, in field order.
func inputSchema[P any]() mcp.ToolOption {
	in := derived(reflect.TypeFor[P](), "input", deriveInput)
	return func(t *mcp.Tool) {
		for i, name := range in.names {
			if in.required[i] {
				t.InputSchema.Required = append(t.InputSchema.Required, name)
			}
			t.InputSchema.Properties[name] = in.props[i]
			t.InputSchema.PropertyOrder = append(t.InputSchema.PropertyOrder, name)
		}
	}
}

// outputSchema is the output schema of a tool whose structured result is an O (an
// objectSchema, for readTool or withOutputSchema).
func outputSchema[O any]() map[string]any {
	return derived(reflect.TypeFor[O](), "output", objectOf)
}

// inputProps are the input properties of a params struct, in field order.
type inputProps struct {
	names    []string
	props    []map[string]any
	required []bool
}

func deriveInput(t reflect.Type) inputProps {
	var in inputProps
	for _, f := range schemaFields(t) {
		in.names = append(in.names, f.name)
		in.props = append(in.props, propertyOf(f, true))
		in.required = append(in.required, f.required())
	}
	return in
}

// schemas holds what derived derived, by type and use: a type's schema is derived once per
// process and shared by every registry (one per user over HTTP), as nothing changes a
// schema once a tool is defined.
var schemas sync.Map // schemaKey → value

type schemaKey struct {
	t   reflect.Type
	use string // input or output
}

// derived returns derive(t) for use, computed once per type and use.
func derived[V any](t reflect.Type, use string, derive func(reflect.Type) V) V {
	k := schemaKey{t: t, use: use}
	if v, ok := schemas.Load(k); ok {
		return v.(V)
	}
	v, _ := schemas.LoadOrStore(k, derive(t))
	return v.(V)
}

// objectOf is the output schema of struct type t (an objectSchema).
func objectOf(t reflect.Type) map[string]any {
	fields := schemaFields(t)
	props := make(map[string]any, len(fields))
	var required []string
	for _, f := range fields {
		props[f.name] = propertyOf(f, false)
		if f.required() {
			required = append(required, f.name)
		}
	}
	return objectSchema(props, required...)
}

// schemaField is one field of a struct that has a property.
type schemaField struct {
	name string // the property's
	path string // Type.Field, for messages
	typ  reflect.Type
	tag  reflect.StructTag
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
		sf := schemaField{name: name, path: t.Name() + "." + f.Name, typ: f.Type, tag: f.Tag}
		for _, k := range tagKeys(f.Tag) {
			if !slices.Contains(schemaTags, k) {
				panic(fmt.Sprintf("tools: %s: unknown tag %q (a schema knows %v)", sf.path, k, schemaTags))
			}
		}
		out = append(out, sf)
	}
	return out
}

// schemaTags are the tags a field with a property may have.
var schemaTags = []string{"json", "desc", "required", "min", "max", "default", "enum", "items", "itemmin", "itemmax", "free"}

// tagKeys are the keys of a struct tag in the conventional key:"value" form.
func tagKeys(tag reflect.StructTag) []string {
	var keys []string
	for s := strings.TrimSpace(string(tag)); s != ""; s = strings.TrimSpace(s) {
		k, rest, ok := strings.Cut(s, ":")
		if !ok {
			return append(keys, s) // malformed: go vet reports it
		}
		keys = append(keys, k)
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return keys
		}
		s = rest[len(q):]
	}
	return keys
}

func (f schemaField) required() bool { return f.tag.Get("required") == "true" }

// propertyOf is the schema of one field, as mcp-go's property options build it for an input.
func propertyOf(f schemaField, input bool) map[string]any {
	t := f.typ
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var p map[string]any
	switch {
	case f.tag.Get("free") == "true" || t.Kind() == reflect.Map:
		p = map[string]any{"type": "object"}
		if input {
			p["properties"] = map[string]any{} // as mcp.WithObject declares it
		}
	case t.Kind() == reflect.Struct:
		p = objectOf(t)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		items := map[string]any{"type": "string"}
		f.set(items, "description", "items", reflect.String)
		f.set(items, "minLength", "itemmin", reflect.String)
		f.set(items, "maxLength", "itemmax", reflect.String)
		p = map[string]any{"type": "array", "items": items}
	case t.Kind() == reflect.Slice:
		p = map[string]any{"type": "array", "items": objectOf(t.Elem())}
	default:
		p = map[string]any{"type": schemaType(t)}
	}
	f.set(p, "description", "desc", reflect.String)
	f.set(p, "enum", "enum", reflect.String)
	f.set(p, "default", "default", t.Kind())
	lo, hi := "minimum", "maximum"
	switch t.Kind() {
	case reflect.String:
		lo, hi = "minLength", "maxLength"
	case reflect.Slice:
		lo, hi = "minItems", "maxItems"
	}
	f.set(p, lo, "min", t.Kind())
	f.set(p, hi, "max", t.Kind())
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

// set sets keyword of schema p from f's tag, if f has it, as mcp-go's property options
// store it: lengths and counts as int, bounds and defaults of the field's kind k, an enum
// as []string. A value that cannot be read is a programmer error: it panics, and the
// registry's tests catch it.
func (f schemaField) set(p map[string]any, keyword, tag string, k reflect.Kind) {
	s, ok := f.tag.Lookup(tag)
	if !ok {
		return
	}
	v, err := schemaValue(keyword, s, k)
	if err != nil {
		panic(fmt.Sprintf("tools: %s: %s:%q is neither a value of its kind nor a name in schemaValues: %v", f.path, tag, s, err))
	}
	p[keyword] = v
}

// schemaValue reads the value s of keyword for a field of kind k.
func schemaValue(keyword, s string, k reflect.Kind) (any, error) {
	if v, ok := schemaValues[s]; ok {
		return v, nil
	}
	if goName(s) {
		return nil, errors.New("no such name in schemaValues")
	}
	switch {
	case keyword == "description":
		return s, nil
	case keyword == "enum":
		return strings.Split(s, ","), nil
	case strings.HasSuffix(keyword, "Length") || strings.HasSuffix(keyword, "Items"):
		return strconv.Atoi(s)
	case k == reflect.String:
		return s, nil
	case k == reflect.Bool:
		return strconv.ParseBool(s)
	case k == reflect.Float32 || k == reflect.Float64:
		return strconv.ParseFloat(s, 64)
	}
	return strconv.Atoi(s)
}

// goName reports whether s reads as the name of an unexported Go value (lower camelCase:
// a lower-case letter, then letters and digits, some upper case) rather than a literal
// value or text.
func goName(s string) bool {
	if s == "" || !unicode.IsLower(rune(s[0])) || strings.ToLower(s) == s {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
