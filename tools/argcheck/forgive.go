package argcheck

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// ValueAliases are the other words a model may use for an enum argument's values:
// argument name → alias → canonical value. Each alias is documented in its argument's
// description; the published schema lists the canonical values only.
type ValueAliases map[string]map[string]string

// Mapping is one loose form of an argument that Forgive read as its tool's schema says: a
// near-miss name, an alias or a value of another case, or a JSON string holding the
// argument's type. It is reported in the result's _meta, so a program can see what was read.
type Mapping struct {
	Argument string `json:"argument"`       // the argument as the schema names it; "" = the arguments object
	Given    string `json:"given"`          // the name sent, or the value sent, or "a JSON string"
	To       string `json:"to,omitempty"`   // the value it became, for a value mapping
	Kind     string `json:"kind"`           // "name", "value" or "decoded"
	Note     string `json:"note,omitempty"` // for a decoded string: the type it became
}

// echo returns m as it may be shown: what the caller sent goes back to the model and into
// the result's _meta, so Given loses the characters that hide or reorder text and is cut to
// maxQuoted characters.
func (m Mapping) echo() Mapping {
	m.Given = cleantext.Runes(cleantext.Line(m.Given), maxQuoted)
	return m
}

// String is the mapping as a model reads it.
func (m Mapping) String() string {
	switch m.Kind {
	case "name":
		return quote(m.Given) + " as " + quote(m.Argument)
	case "value":
		return quote(m.Argument) + " " + quote(m.Given) + " as " + quote(m.To)
	}
	if m.Argument == "" {
		return "the arguments string as " + m.Note
	}
	return quote(m.Argument) + " as " + m.Note
}

// looseProp is what Forgive needs of one property of an input schema.
type looseProp struct {
	types []string // JSON Schema types; empty = any
	enum  []string // string enum values
}

// looseSchema is the part of a tool's input schema Forgive reads.
type looseSchema struct {
	props map[string]looseProp
	names []string
}

func parseLoose(raw []byte) looseSchema {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	out := looseSchema{props: map[string]looseProp{}}
	if json.Unmarshal(raw, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		var lp looseProp
		switch t := p.Type.(type) {
		case string:
			lp.types = []string{t}
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok {
					lp.types = append(lp.types, s)
				}
			}
		}
		for _, e := range p.Enum {
			if s, ok := e.(string); ok {
				lp.enum = append(lp.enum, s)
			}
		}
		out.props[name] = lp
		out.names = append(out.names, name)
	}
	slices.Sort(out.names)
	return out
}

// Forgive rewrites the loose forms of req's arguments that have exactly one strict reading
// before they are checked: the arguments object sent as a JSON string; a non-string
// argument sent as a JSON string of its type ("{\"a\":1}" for an object, "[1]" for an
// array, "10" for an integer); an enum value in another case or one of the tool's
// documented aliases; an unknown argument name that is a near miss of exactly one known,
// absent argument (filePath, path → file_path). Anything with more than one reading is
// left as it is, for Check to reject. It returns req unchanged when nothing was rewritten.
func (v *Validator) Forgive(req mcp.CallToolRequest) (mcp.CallToolRequest, []Mapping) {
	t, ok := v.tools[req.Params.Name]
	if !ok {
		return req, nil
	}
	ls := t.loose()
	args, top := argsOf(req)
	if args == nil {
		return req, top
	}
	// Names first, so a renamed argument's value is read under its real name.
	rw := &rewrite{out: args, done: top}
	rw.rename(ls.renames(args))
	rw.readValues(ls, v.aliases[req.Params.Name])
	if len(rw.done) == 0 {
		return req, nil
	}
	raw, err := json.Marshal(rw.out)
	if err != nil {
		return req, nil
	}
	req.Params.Arguments, req.Params.RawArguments = rw.out, raw
	return req, rw.done
}

// renames reads args' unknown names as near misses of known, absent arguments: argument →
// the unknown name sent for it. A call with more unknown names than maxRenames is no near
// miss, and comparing them all would cost work in proportion to what the caller sent.
func (ls looseSchema) renames(args map[string]any) map[string]string {
	var unknown []string
	for name := range args {
		if _, known := ls.props[name]; !known {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > maxRenames {
		return nil
	}
	renamed := map[string]string{} // "" = more than one name for the argument
	for _, name := range slices.Sorted(slices.Values(unknown)) {
		target := ls.nearMiss(name)
		if target == "" {
			continue
		}
		if _, given := args[target]; given {
			continue // two values for one argument: Check rejects the unknown name
		}
		if _, twice := renamed[target]; twice {
			renamed[target] = "" // two names for one argument: neither is taken
			continue
		}
		renamed[target] = name
	}
	return renamed
}

// rewrite is the arguments object Forgive builds: the caller's, copied on the first change,
// and the mappings that changed it.
type rewrite struct {
	out    map[string]any
	copied bool
	done   []Mapping
}

// own copies out before its first change, so the caller's arguments stay as they were sent.
func (rw *rewrite) own() {
	if !rw.copied {
		rw.out, rw.copied = maps.Clone(rw.out), true
	}
}

// rename moves each renamed argument's value from the name sent to the argument's own.
func (rw *rewrite) rename(renamed map[string]string) {
	for _, target := range slices.Sorted(maps.Keys(renamed)) {
		from := renamed[target]
		if from == "" {
			continue
		}
		rw.own()
		rw.out[target] = rw.out[from]
		delete(rw.out, from)
		rw.done = append(rw.done, Mapping{Argument: target, Given: from, Kind: "name"}.echo())
	}
}

// readValues replaces a string argument's loose value by its strict reading: an enum value in
// another case or one of its aliases, or a JSON string holding the argument's type.
func (rw *rewrite) readValues(ls looseSchema, aliases ValueAliases) {
	for _, name := range slices.Sorted(maps.Keys(rw.out)) {
		p, known := ls.props[name]
		if !known {
			continue
		}
		s, isString := rw.out[name].(string)
		if !isString {
			continue
		}
		if len(p.enum) > 0 {
			if canon := enumValue(s, p.enum, aliases[name]); canon != "" && canon != s {
				rw.own()
				rw.out[name] = canon
				rw.done = append(rw.done, Mapping{Argument: name, Given: s, To: canon, Kind: "value"}.echo())
			}
			continue
		}
		if x, typ := decodeAs(s, p.types); typ != "" {
			rw.own()
			rw.out[name] = x
			rw.done = append(rw.done, Mapping{Argument: name, Given: "a JSON string", Kind: "decoded", Note: typ})
		}
	}
}

// maxRenames bounds the unknown argument names Forgive reads as near misses in one call.
const maxRenames = 4

// argsOf returns req's arguments as an object; an arguments object sent as a JSON string
// is decoded and reported. nil when the arguments are no object.
func argsOf(req mcp.CallToolRequest) (map[string]any, []Mapping) {
	if m, ok := req.Params.Arguments.(map[string]any); ok {
		return m, nil
	}
	var x any = req.Params.Arguments
	if x == nil && len(bytes.TrimSpace(req.Params.RawArguments)) > 0 {
		if json.Unmarshal(req.Params.RawArguments, &x) != nil {
			return nil, nil
		}
	}
	s, ok := x.(string)
	if !ok {
		if m, ok := x.(map[string]any); ok {
			return m, nil
		}
		return nil, nil
	}
	if m, typ := decodeAs(s, []string{"object"}); typ != "" {
		return m.(map[string]any), []Mapping{{Given: "a JSON string", Kind: "decoded", Note: typ}}
	}
	return nil, nil
}

// decodeAs decodes s, a JSON text, when it holds a value of one of the types (JSON
// Schema type names) other than string; typ names the type found, "" when s holds none.
func decodeAs(s string, types []string) (value any, typ string) {
	if len(types) == 0 || slices.Contains(types, "string") {
		return nil, ""
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, ""
	}
	var x any
	if json.Unmarshal([]byte(t), &x) != nil {
		return nil, ""
	}
	var got string
	switch n := x.(type) {
	case map[string]any:
		got = "object"
	case []any:
		got = "array"
	case bool:
		got = "boolean"
	case float64:
		got = "number"
		if slices.Contains(types, "integer") && n == float64(int64(n)) {
			got = "integer"
		}
	default:
		return nil, ""
	}
	if slices.Contains(types, got) || (got == "integer" && slices.Contains(types, "number")) {
		return x, article[got] + " " + got
	}
	return nil, ""
}

var article = map[string]string{"object": "an", "array": "an", "integer": "an", "number": "a", "boolean": "a"}

// enumValue returns the enum value s stands for: one in another case, or an alias (in
// any case); "" when none.
func enumValue(s string, enum []string, aliases map[string]string) string {
	if slices.Contains(enum, s) {
		return s
	}
	var found []string
	for _, e := range enum {
		if strings.EqualFold(e, s) {
			found = append(found, e)
		}
	}
	for a, canon := range aliases {
		if strings.EqualFold(a, s) && slices.Contains(enum, canon) && !slices.Contains(found, canon) {
			found = append(found, canon)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// nearMiss returns the one known argument name got is a near miss of, or "" when there is
// none or more than one (see nearMisses). Only a plain name is read as a near miss.
func (ls looseSchema) nearMiss(got string) string {
	if c, _, _ := ls.nearMisses(got); len(c) == 1 && plain(got) {
		return c[0]
	}
	return ""
}

// nearMisses returns the known names got may stand for. A name in another case or
// separator style (filePath, File-Path) stands for file_path alone; otherwise every name
// got is a near miss of: one edit away, or two for names of seven or more characters
// (qeury → query), or a run of its words or the other way round (path → file_path, mode →
// search_mode, search_query → query). Names shorter than three characters, or longer than
// maxQuoted, stand for none. When got differs from one of those names by a word that
// changes the meaning (no_prune for prune, keep_document_id for document_id), it stands for
// none: refused is that name and word the word.
func (ls looseSchema) nearMisses(got string) (near []string, refused, word string) {
	if len(got) > maxQuoted {
		return nil, "", ""
	}
	g := snake(got)
	if len(g) < 3 {
		return nil, "", ""
	}
	if _, ok := ls.props[g]; ok {
		near = []string{g}
	} else {
		for _, name := range ls.names {
			switch d := editDistance(g, name); {
			case d == 1 && len(g) >= 4, d == 2 && len(g) >= 7, wordRun(g, name), wordRun(name, g):
				near = append(near, name)
			}
		}
	}
	for _, name := range near {
		if w := meaning(got, name); w != "" {
			return nil, name, w
		}
	}
	return near, "", ""
}

// wordRun reports whether the words of short (split at "_") are a run of the words of long.
func wordRun(short, long string) bool {
	s, l := strings.Split(short, "_"), strings.Split(long, "_")
	if len(s) >= len(l) {
		return false
	}
	for i := 0; i+len(s) <= len(l); i++ {
		if slices.Equal(l[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

// snake is name in lower snake case: filePath, FilePath, file-path, "file path" and
// FILE_PATH are all file_path.
func snake(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		out := r
		switch {
		case r == '-' || r == ' ' || r == '.':
			out = '_'
		case unicode.IsUpper(r):
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				b.WriteByte('_')
			}
			out = unicode.ToLower(r)
		}
		b.WriteRune(out)
		prev = r
	}
	return b.String()
}
