// Package knob turns the tagged fields of a settings struct into serve's knobs. A field
// tagged `knob:"name"` is one row — its name, environment twin, default, bounds and help —
// from which the flag, the environment variable, r2r_status's settings and the README's
// configuration table are all produced, so adding a knob means adding its field and using
// it.
//
// The tags of a field:
//
//	knob:"timeout-search"   flag name; the environment twin is R2R_MCP_TIMEOUT_SEARCH
//	env:"NAME"              another environment twin
//	default:"20s"           the default (also on fields that are not knobs)
//	min:"1ms" max:"50s"     bounds of a number, duration or size
//	enum:"user,shared"      the values a string may take
//	unit:"bytes"            an int64 given as a size: 64MiB, 512KB
//	zero:"off"              how the zero value reads in r2r_status and the README
//	with:"http"             the knob applies only when the knob named here is set
//	show:"host"             r2r_status shows only the host of this URL (it may hold a password)
//	meta:"ADDR"             the flag's value name in the README
//	help:"…"                what the knob does, for the flag and the README
//
// Fields of struct type (tagged or not) are walked into; each type's tags are read once.
// A tag that cannot be read is a programmer error: Rows and Defaults panic, and the tests
// that build the rows catch it.
package knob

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// EnvPrefix starts the environment twin of every knob that does not name its own.
const EnvPrefix = "R2R_MCP_"

// Row is one knob bound to its field.
type Row struct {
	Name string // flag name, without dashes
	Env  string // environment twin
	Help string
	// With names the knob that must be set for this one to apply ("" = always applies).
	With string

	def      string // default as the tag gives it ("" = the zero value)
	min, max string
	enum     []string
	zero     string // how the zero value reads; "" = formatted like any other
	meta     string
	showHost bool
	v        *value
}

// Value is a knob's field as a flag value (it implements pflag.Value): it parses, checks
// its bounds and formats itself.
type Value interface {
	String() string
	Set(string) error
	Type() string
}

// Value is the field as a flag value.
func (r Row) Value() Value { return r.v }

// Secret reports whether the value may hold a password, so it is never echoed.
func (r Row) Secret() bool { return r.showHost }

// Usage is the flag's help: the help, the bounds and the environment twin.
func (r Row) Usage() string {
	s := r.Help
	if b := r.Bounds(); b != "" {
		s += " (" + b + ")"
	}
	return s + " (env " + r.Env + ")"
}

// Bounds describes the values the knob takes ("" = any of its type).
func (r Row) Bounds() string { return r.bounds(func(s string) string { return s }) }

// bounds is Bounds with each value passed through show.
func (r Row) bounds(show func(string) string) string {
	switch {
	case len(r.enum) > 0:
		vals := make([]string, len(r.enum))
		for i, e := range r.enum {
			vals[i] = show(e)
		}
		return strings.Join(vals, " or ")
	case r.min != "" && r.max != "":
		return show(r.min) + " to " + show(r.max)
	case r.min != "":
		return "at least " + show(r.min)
	case r.max != "":
		return "at most " + show(r.max)
	}
	return ""
}

// Default is the default as the README shows it.
func (r Row) Default() string {
	if r.def == "" || r.def == "0" {
		if r.zero != "" {
			return r.zero
		}
		if r.def == "" {
			return "none"
		}
	}
	return "`" + r.def + "`"
}

// Setting is the knob's key and current value for r2r_status; ok is false when an
// unset text or list has nothing to show.
func (r Row) Setting() (key, val string, ok bool) {
	key = strings.ReplaceAll(r.Name, "-", "_")
	if r.v.isZero() {
		if r.zero != "" {
			return key, r.zero, true
		}
		if k := r.v.f.Kind(); k == reflect.String || k == reflect.Slice {
			return key, "", false
		}
	}
	if r.showHost {
		return key, urlHost(r.v.String()), true
	}
	return key, r.v.String(), true
}

// Rows returns the knobs of the struct cfg points to, in field order, bound to its
// fields.
func Rows(cfg any) []Row {
	s := structOf(cfg)
	var rows []Row
	for _, f := range fields(s.Type()) {
		if f.row == nil {
			continue
		}
		r, v := *f.row, *f.row.v
		v.f = s.FieldByIndex(f.index)
		r.v = &v
		rows = append(rows, r)
	}
	return rows
}

// Defaults sets every field of the struct cfg points to that has a default tag.
func Defaults(cfg any) {
	s := structOf(cfg)
	for _, f := range fields(s.Type()) {
		if !f.def.IsValid() {
			continue
		}
		def := f.def
		if def.Kind() == reflect.Slice { // a copy: the default is shared
			def = reflect.AppendSlice(reflect.MakeSlice(def.Type(), 0, def.Len()), def)
		}
		s.FieldByIndex(f.index).Set(def)
	}
}

func structOf(cfg any) reflect.Value {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("knob: want a pointer to a struct, got %T", cfg))
	}
	return v.Elem()
}

// field is a field of a settings type with a knob or default tag, its tags read once.
type field struct {
	index []int
	row   *Row          // nil = not a knob; its value holds the bounds but no field
	def   reflect.Value // the default; invalid = none
}

// fieldsOf caches fields by type: serve builds its rows while it starts, more than once.
var fieldsOf sync.Map // reflect.Type → []field

// fields are the tagged fields of t and of the structs it holds, in field order.
func fields(t reflect.Type) []field {
	if fs, ok := fieldsOf.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	collect(t, nil, &fs)
	fieldsOf.Store(t, fs)
	return fs
}

func collect(t reflect.Type, index []int, out *[]field) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		idx := append(slices.Clone(index), i)
		if sf.Type.Kind() == reflect.Struct {
			collect(sf.Type, idx, out)
			continue
		}
		tag, isKnob, hasDef := parseTag(sf.Tag)
		if !isKnob && !hasDef {
			continue
		}
		f := field{index: idx}
		if hasDef {
			f.def = reflect.New(sf.Type).Elem()
			if err := (&value{f: f.def, unit: tag.unit}).parse(tag.def); err != nil {
				panic(fmt.Sprintf("knob: default of %s: %v", sf.Name, err))
			}
		}
		if isKnob {
			r := newRow(sf, tag)
			f.row = &r
		}
		*out = append(*out, f)
	}
}

// newRow is the row of field sf with tags tag, its value not yet bound to a field.
func newRow(sf reflect.StructField, t tags) Row {
	name := t.knob
	r := Row{Name: name, Env: t.env, Help: t.help, With: t.with,
		def: t.def, min: t.min, max: t.max, zero: t.zero, meta: t.meta,
		showHost: t.show == "host"}
	if r.Env == "" {
		r.Env = EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	}
	if e := t.enum; e != "" {
		r.enum = strings.Split(e, ",")
	}
	if name == "" || r.Help == "" {
		panic(fmt.Sprintf("knob: field %s needs a name and help", sf.Name))
	}
	r.v = &value{unit: t.unit, enum: r.enum}
	for _, b := range []struct {
		s   string
		dst *reflect.Value
	}{{r.min, &r.v.lo}, {r.max, &r.v.hi}} {
		if b.s == "" {
			continue
		}
		bound := reflect.New(sf.Type).Elem()
		if err := (&value{f: bound, unit: r.v.unit}).parse(b.s); err != nil {
			panic(fmt.Sprintf("knob: bound of %s: %v", name, err))
		}
		*b.dst = bound
	}
	return r
}

// tags are the knob keys of a field's struct tag.
type tags struct {
	knob, env, help, with, def, min, max, zero, meta, show, enum, unit string
}

// parseTag reads the knob keys of tag in one pass (StructTag.Lookup scans the whole tag
// for each key, and serve builds its rows while it starts); isKnob and hasDef report
// whether it has a knob and a default key.
func parseTag(tag reflect.StructTag) (t tags, isKnob, hasDef bool) {
	keys := [...]struct {
		name string
		dst  *string
	}{{"knob", &t.knob}, {"default", &t.def}, {"env", &t.env}, {"help", &t.help}, {"with", &t.with},
		{"min", &t.min}, {"max", &t.max}, {"zero", &t.zero}, {"meta", &t.meta}, {"show", &t.show},
		{"enum", &t.enum}, {"unit", &t.unit}}
	s := string(tag)
	for s != "" {
		s = strings.TrimLeft(s, " ")
		i := strings.Index(s, ":\"")
		if i <= 0 {
			break
		}
		key := s[:i]
		s = s[i+1:]
		j := 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(s) {
			panic(fmt.Sprintf("knob: unterminated tag %q", string(tag)))
		}
		v := s[1:j] // most values hold no escape: no copy
		if strings.IndexByte(v, '\\') >= 0 {
			var err error
			if v, err = strconv.Unquote(s[:j+1]); err != nil {
				panic(fmt.Sprintf("knob: tag %q: %v", string(tag), err))
			}
		}
		s = s[j+1:]
		for _, k := range keys {
			if k.name == key {
				*k.dst = v
				isKnob, hasDef = isKnob || key == "knob", hasDef || key == "default"
				break
			}
		}
	}
	return t, isKnob, hasDef
}
