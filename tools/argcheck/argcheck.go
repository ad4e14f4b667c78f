// Package argcheck checks the arguments of a tool call against the tool's published input
// schema and words each violation so that a model can fix its call.
package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// Validator checks tool arguments against each tool's input schema. mcp-go's
// WithInputSchemaValidation does the same check but words failures as
// "<root>: &{Properties:[qeury]}"; a model fixes its call faster from "unknown argument
// "qeury" (did you mean "query"?)".
type Validator struct {
	logger  *slog.Logger
	tools   map[string]*toolSchema
	aliases map[string]ValueAliases // by tool name
}

// toolSchema is one tool's input schema, compiled on the tool's first call: a server that
// is only started and listed never pays for it.
type toolSchema struct {
	def    mcp.Tool
	once   sync.Once
	schema *jsonschema.Schema
	props  []string // property names, required first
	err    error

	looseOnce sync.Once
	ls        looseSchema
}

var printer = message.NewPrinter(language.English)

// New prepares the validation of the arguments of the tools defs; nothing is compiled
// before a tool's first call. Schemas are made strict (additionalProperties false unless
// the tool says otherwise), exactly as mcp-go's WithStrictInputSchemaDefault publishes
// them, so what is enforced is what clients see. aliases (by tool name) are the values
// Forgive maps; logger receives broken schemas.
func New(defs []mcp.Tool, aliases map[string]ValueAliases, logger *slog.Logger) *Validator {
	v := &Validator{logger: logger, tools: make(map[string]*toolSchema, len(defs)), aliases: aliases}
	for _, d := range defs {
		v.tools[d.Name] = &toolSchema{def: strictSchema(d)}
	}
	return v
}

// Error is a call's arguments that do not fit its tool's schema.
type Error struct {
	Tool     string
	Problems []string  // one sentence fragment per violation, at most maxProblems+1
	Valid    []string  // the tool's argument names, required first
	Read     []Mapping // loose forms Forgive read before the check (set by the caller)
}

// Error is the whole rejection as a model reads it: what is wrong, the valid argument
// names and the next step.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Invalid arguments for %s: %s.", e.Tool, strings.Join(e.Problems, "; "))
	if len(e.Read) > 0 {
		read := make([]string, len(e.Read))
		for i, m := range e.Read {
			read[i] = m.String()
		}
		fmt.Fprintf(&b, " (Read %s.)", strings.Join(read, ", "))
	}
	if len(e.Valid) > 0 {
		fmt.Fprintf(&b, " Valid arguments: %s.", strings.Join(e.Valid, ", "))
	}
	b.WriteString(" Fix the arguments and call again.")
	return b.String()
}

// Check returns nil when req's arguments fit its tool's schema, or when the tool is not
// one of New's (mcp-go answers unknown tools itself), and an *Error otherwise.
func (v *Validator) Check(req mcp.CallToolRequest) *Error {
	problems := v.check(req)
	if problems == nil {
		return nil
	}
	return &Error{Tool: req.Params.Name, Problems: problems, Valid: v.props(req.Params.Name)}
}

// compiled returns the tool's compiled schema and property names, compiling them once.
func (t *toolSchema) compiled() (*jsonschema.Schema, []string, error) {
	t.once.Do(func() {
		raw, err := t.raw()
		if err != nil {
			t.err = err
			return
		}
		c := shared.get(t.def.Name, raw)
		t.schema, t.props, t.err = c.schema, c.props, c.err
	})
	return t.schema, t.props, t.err
}

// loose returns what Forgive reads of the tool's input schema, reading it once.
func (t *toolSchema) loose() looseSchema {
	t.looseOnce.Do(func() {
		if raw, err := t.raw(); err == nil {
			t.ls = parseLoose(raw)
		}
	})
	return t.ls
}

// raw is the tool's input schema as JSON.
func (t *toolSchema) raw() ([]byte, error) {
	if len(t.def.RawInputSchema) > 0 {
		return t.def.RawInputSchema, nil
	}
	b, err := json.Marshal(t.def.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%s: input schema: %w", t.def.Name, err)
	}
	return b, nil
}

// compiledSchema is one input schema compiled; compiled schemas are only read afterwards.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema
	props  []string
	err    error
}

// schemaMemo shares compiled schemas between validators: serve --http keeps a copy of the
// tools for each user, all with the same schemas, and compiling one takes milliseconds and
// holds tens of kilobytes. It holds at most maxShared schemas; beyond that each validator
// compiles its own.
type schemaMemo struct {
	mu sync.Mutex
	m  map[string]*compiledSchema
}

const maxShared = 256

var shared = &schemaMemo{m: map[string]*compiledSchema{}}

func (s *schemaMemo) get(name string, raw []byte) *compiledSchema {
	key := name + "\x00" + string(raw)
	s.mu.Lock()
	c, ok := s.m[key]
	if !ok {
		c = &compiledSchema{}
		if len(s.m) < maxShared {
			s.m[key] = c
		}
	}
	s.mu.Unlock()
	c.once.Do(func() { c.schema, c.props, c.err = compile(name, raw) })
	return c
}

// compile compiles the input schema raw of the tool name.
func compile(name string, raw []byte) (*jsonschema.Schema, []string, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: input schema: %w", name, err)
	}
	url := "mem:///r2r-mcp/tools/" + name + ".json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, nil, fmt.Errorf("%s: input schema: %w", name, err)
	}
	schema, err := c.Compile(url)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: input schema does not compile: %w", name, err)
	}
	return schema, propertyList(raw), nil
}

// props returns a tool's property names, required first; nil when unknown.
func (v *Validator) props(tool string) []string {
	t, ok := v.tools[tool]
	if !ok {
		return nil
	}
	_, props, _ := t.compiled()
	return props
}

// strictSchema applies the WithStrictInputSchemaDefault rule to a copy of def.
func strictSchema(def mcp.Tool) mcp.Tool {
	if len(def.RawInputSchema) == 0 && def.InputSchema.AdditionalProperties == nil {
		def.InputSchema.AdditionalProperties = false
	}
	return def
}

// propertyList returns the schema's property names, required ones first, each group sorted.
func propertyList(raw []byte) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var req, opt []string
	for name := range s.Properties {
		if slices.Contains(s.Required, name) {
			req = append(req, name)
		} else {
			opt = append(opt, name)
		}
	}
	slices.Sort(req)
	slices.Sort(opt)
	return append(req, opt...)
}

// check returns what is wrong with req's arguments, or nil when they fit the tool's schema.
func (v *Validator) check(req mcp.CallToolRequest) []string {
	name := req.Params.Name
	t, ok := v.tools[name]
	if !ok {
		return nil // not a registry tool; mcp-go answers unknown tools itself
	}
	s, _, err := t.compiled()
	if err != nil { // a programmer error; TestRegistrySchemasCompile catches it
		v.logger.Error("tool input schema", "error", err)
		return []string{"r2r-mcp cannot check the arguments of " + name + " (its schema is broken; this is a bug, please report it)"}
	}
	var raw []byte
	switch {
	case len(bytes.TrimSpace(req.Params.RawArguments)) > 0:
		raw = req.Params.RawArguments
	case req.Params.Arguments == nil:
		raw = []byte("{}")
	default:
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return []string{"arguments are not valid JSON"}
		}
		raw = b
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []string{"arguments are not valid JSON"}
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		inst = map[string]any{}
	}
	err = s.Validate(inst)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []string{err.Error()}
	}
	var problems []string
	more := 0
	for _, leaf := range leaves(verr) {
		p := v.describe(name, leaf)
		switch {
		case p == "" || slices.Contains(problems, p):
		case len(problems) >= maxProblems:
			more++
		default:
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		problems = []string{escapeHidden(cleantext.Runes(verr.LocalizedError(printer), 4*maxQuoted))}
	}
	if more > 0 {
		problems = append(problems, fmt.Sprintf("and %d more", more))
	}
	return problems
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// describe words one schema violation for a model.
func (v *Validator) describe(tool string, e *jsonschema.ValidationError) string {
	arg := strings.Join(e.InstanceLocation, ".")
	subject := "the arguments"
	if arg != "" {
		subject = "argument " + quote(arg)
	}
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		var parts []string
		for i, p := range slices.Sorted(slices.Values(k.Properties)) {
			if i == maxProblems {
				parts = append(parts, fmt.Sprintf("and %d more unknown arguments", len(k.Properties)-i))
				break
			}
			s := "unknown argument " + quote(p)
			if arg != "" {
				s = fmt.Sprintf("unknown field %s in %s", quote(p), subject)
			} else {
				s += v.suggest(tool, p)
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "; ")
	case *kind.Required:
		what := "missing required argument"
		if arg != "" {
			what = "missing required field in " + subject + ":"
		}
		if len(k.Missing) > 1 && arg == "" {
			what += "s"
		}
		return what + " " + quoteAll(k.Missing)
	case *kind.Type:
		return fmt.Sprintf("%s must be %s, got %s", subject, strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			want[i] = string(b)
		}
		got, _ := json.Marshal(k.Got)
		return fmt.Sprintf("%s must be one of %s, got %s", subject, strings.Join(want, ", "), escapeHidden(cleantext.Runes(string(got), maxQuoted)))
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s, got %s", subject, ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s, got %s", subject, ratString(k.Want), ratString(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long, got %d", subject, k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long, got %d", subject, k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("%s may have at most %d items, got %d", subject, k.Want, k.Got)
	}
	return subject + ": " + escapeHidden(cleantext.Runes(e.ErrorKind.LocalizedString(printer), 4*maxQuoted))
}

// suggest words, in parentheses after an unknown argument name, the known names it may
// stand for: all of them when it is a near miss of more than one (which Forgive does not
// choose between), else the closest; or, when it differs from the known name by a word that
// changes the meaning (no_prune), why it was not read as that name. "" when none is close.
func (v *Validator) suggest(tool, name string) string {
	t, ok := v.tools[tool]
	if !ok {
		return ""
	}
	ls := t.loose()
	c, refused, word := ls.nearMisses(name)
	if len(c) > 1 {
		return " (did you mean " + quoteAll(c[:len(c)-1]) + " or " + quote(c[len(c)-1]) + "?)"
	}
	if refused == "" {
		if m := closest(name, v.props(tool)); m != "" {
			if word = meaning(name, m); word == "" {
				return " (did you mean " + quote(m) + "?)"
			}
			refused = m
		}
	}
	if refused == "" {
		return ""
	}
	s := " (not read as " + quote(refused) + ": the word " + quote(word) + " changes its meaning"
	if slices.Contains(ls.props[refused].types, "boolean") {
		s += "; send " + quote(refused) + ": true or false"
	}
	return s + ")"
}

// Bounds on what a rejection repeats of the caller's input: argument names and values are
// untrusted and unbounded, and go back to the model and into the log.
const (
	maxQuoted   = 64 // characters of a name or value quoted
	maxProblems = 10 // problems listed
)

// quote is strconv.Quote of at most maxQuoted characters of s, with every character
// cleantext drops escaped (strconv.Quote leaves a few printable ones as they are).
func quote(s string) string {
	return escapeHidden(strconv.Quote(cleantext.Runes(s, maxQuoted)))
}

// escapeHidden writes each character of s that cleantext drops as a Go escape (\u202e), so
// an echoed value shows it instead of hiding or reordering the text around it.
func escapeHidden(s string) string {
	if !strings.ContainsFunc(s, cleantext.Changes) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if cleantext.Changes(r) {
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// closest returns the valid name nearest to got (case-insensitive edit distance at most 2,
// or one containing the other), or "" when none is close. Names longer than maxQuoted
// are no typo of a short property name and are not compared (the distance costs
// len(got)·len(valid name)).
func closest(got string, valid []string) string {
	if len(got) > maxQuoted {
		return ""
	}
	g := strings.ToLower(got)
	best, bestD := "", 3
	for _, v := range valid {
		lv := strings.ToLower(v)
		d := editDistance(g, lv)
		if d > 2 && (strings.Contains(lv, g) || strings.Contains(g, lv)) && len(g) >= 3 {
			d = 2
		}
		if d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein (optimal string alignment) distance, so a swap
// of two adjacent letters ("qeury") counts as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
