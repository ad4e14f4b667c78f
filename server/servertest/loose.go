package servertest

import (
	"slices"
	"strings"
	"testing"
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

// LooseCases is the loose-argument table: file is a file the server may ingest (relative
// to the project over stdio, absolute inside an --allow-dir root over HTTP) and collection
// a collection id to pass to the tools that take one ("" = none). A JSON string of an array
// is covered by tools/argcheck's own table: no tool here takes an array.
func LooseCases(file, collection string) []LooseCase {
	with := func(args map[string]any) map[string]any {
		if collection != "" {
			args["collection_id"] = collection
		}
		return args
	}
	return []LooseCase{
		{Name: "10.0 for an integer", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "limit": 10.0}),
			Want: map[string]any{"limit": 10.0}},
		{Name: "object as a JSON string", Tool: "r2r_search",
			Args: with(map[string]any{"query": "payout", "filters": `{"title": {"$like": "%"}}`}), Read: []string{"filters"}},
		{Name: "integer as a JSON string", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "limit": "3"}),
			Read: []string{"limit"}, Want: map[string]any{"limit": 3.0}},
		{Name: "hybrid", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "search_mode": "hybrid"}),
			Read: []string{"search_mode"}, Want: map[string]any{"search_mode": "advanced"}},
		{Name: "semantic", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "search_mode": "semantic"}),
			Read: []string{"search_mode"}, Want: map[string]any{"search_mode": "basic"}},
		{Name: "path for file_path", Tool: "r2r_ingest_document", Args: with(map[string]any{"path": file}),
			Read: []string{"file_path"}},
		{Name: "camelCase name", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "searchMode": "basic"}),
			Read: []string{"search_mode"}, Want: map[string]any{"search_mode": "basic"}},
		{Name: "two values for one argument", Tool: "r2r_ingest_document", Args: with(map[string]any{"path": file, "file_path": file}),
			Error: `unknown argument "path" (did you mean "file_path"?)`},
		{Name: "a name too short to read", Tool: "r2r_get_document", Args: map[string]any{"id": "00000000-0000-4000-8000-000000000000"},
			Error: `unknown argument "id"`},
		{Name: "an unknown value", Tool: "r2r_search", Args: with(map[string]any{"query": "payout", "search_mode": "fuzzy"}),
			Error: `must be one of "basic", "advanced", "custom", got "fuzzy"`},
	}
}

// Check fails t unless o is what c must answer.
func (c LooseCase) Check(t testing.TB, transport string, o LooseOutcome) {
	t.Helper()
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
