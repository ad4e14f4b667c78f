package servertest

import (
	_ "embed"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// LooseCase is one tool call with arguments sent the way models send them, and what every
// transport (stdio, Streamable HTTP, the REST gateway) must answer.
type LooseCase struct {
	Name string
	Tool string
	Args map[string]any
	// Read are the arguments the server must report in _meta["r2r-mcp/arguments-read"] as
	// read from a loose form; nil = none.
	Read []string
	// Want are fields the structured result must hold (numbers as float64).
	Want map[string]any
	// Error, when set, makes the call an invalid-arguments error whose text holds it.
	Error string
}

// LooseOutcome is a call's answer in the shape every transport can give.
type LooseOutcome struct {
	IsError    bool
	ErrorType  string // the error's type ("invalid_params"), for error results
	Text       string
	Structured map[string]any
	Read       []any // _meta["r2r-mcp/arguments-read"] (or the gateway's arguments_read)
}

// Loose is r's answer as a LooseOutcome: what an MCP transport (stdio, Streamable HTTP)
// gives, with the arguments read and the error type taken from _meta.
func (r ToolResult) Loose() LooseOutcome {
	o := LooseOutcome{IsError: r.IsError, Text: r.Text, Structured: r.Structured}
	o.Read, _ = r.Meta[tools.ArgumentsMetaKey].([]any)
	if e, ok := r.Meta[toolerr.MetaKey].(map[string]any); ok {
		o.ErrorType, _ = e["type"].(string)
	}
	return o
}

// hidden reports whether s holds a character cleantext drops (control, invisible, BiDi).
func hidden(s string) bool { return strings.ContainsFunc(s, cleantext.Changes) }

//go:embed testdata/loose-arguments.json
var looseTable []byte

// LooseCases is the loose-argument table (testdata/loose-arguments.json): file is a file
// the server may ingest (relative to the project over stdio, absolute inside an
// --allow-dir root over HTTP), written where a case says $FILE, and collection a collection
// id passed to the cases marked collection ("" = none). A JSON string of an array is
// covered by tools/argcheck's own table: no tool here takes an array.
func LooseCases(file, collection string) []LooseCase {
	var rows []struct {
		Name       string         `json:"name"`
		Tool       string         `json:"tool"`
		Args       map[string]any `json:"args"`
		Read       []string       `json:"read"`
		Want       map[string]any `json:"want"`
		Error      string         `json:"error"`
		Collection bool           `json:"collection"`
	}
	if err := json.Unmarshal(looseTable, &rows); err != nil {
		panic("servertest: testdata/loose-arguments.json: " + err.Error())
	}
	out := make([]LooseCase, len(rows))
	for i, r := range rows {
		for k, v := range r.Args {
			if v == "$FILE" {
				r.Args[k] = file
			}
		}
		if r.Collection && collection != "" {
			r.Args["collection_id"] = collection
		}
		out[i] = LooseCase{Name: r.Name, Tool: r.Tool, Args: r.Args, Read: r.Read, Want: r.Want, Error: r.Error}
	}
	return out
}

// Check fails t unless o is what c must answer. Whatever the answer, neither its text nor
// what it says was read carries a control, invisible or BiDi character.
func (c LooseCase) Check(t testing.TB, transport string, o LooseOutcome) {
	t.Helper()
	if hidden(o.Text) {
		t.Errorf("%s %s: the text carries a hidden character: %q", transport, c.Name, o.Text)
	}
	for _, r := range o.Read {
		m, _ := r.(map[string]any)
		for k, v := range m {
			if s, _ := v.(string); hidden(s) {
				t.Errorf("%s %s: arguments read %s carries a hidden character: %q", transport, c.Name, k, s)
			}
		}
	}
	if c.Error != "" {
		if !o.IsError || o.ErrorType != "invalid_params" || !strings.Contains(o.Text, c.Error) {
			t.Errorf("%s %s: got error %v (%s) %q, want invalid_params with %q", transport, c.Name, o.IsError, o.ErrorType, o.Text, c.Error)
		}
		return
	}
	if o.IsError {
		t.Errorf("%s %s: %s", transport, c.Name, o.Text)
		return
	}
	var read []string
	for _, r := range o.Read {
		m, _ := r.(map[string]any)
		arg, _ := m["argument"].(string)
		read = append(read, arg)
	}
	slices.Sort(read)
	want := slices.Sorted(slices.Values(c.Read))
	if !slices.Equal(read, want) {
		t.Errorf("%s %s: arguments read %v (%v), want %v", transport, c.Name, read, o.Read, want)
	}
	for k, v := range c.Want {
		if o.Structured[k] != v {
			t.Errorf("%s %s: structured %s = %v, want %v", transport, c.Name, k, o.Structured[k], v)
		}
	}
}
