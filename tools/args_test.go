package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

type bindTestParams struct {
	Query string         `json:"query"`
	Limit int            `json:"limit"`
	Temp  float64        `json:"temperature"`
	Flag  bool           `json:"flag"`
	Obj   map[string]any `json:"obj"`
}

func (p *bindTestParams) check(*Deps) error { return nonBlank("query", p.Query) }

func bindTestDef() mcp.Tool {
	return mcp.NewTool("t_bind",
		mcp.WithString("query", mcp.Required()),
		mcp.WithInteger("limit", mcp.DefaultNumber(10)),
		mcp.WithNumber("temperature", mcp.DefaultNumber(0.7)),
		mcp.WithBoolean("flag", mcp.DefaultBool(true)),
		mcp.WithObject("obj"),
	)
}

func TestBind(t *testing.T) {
	b := newBinder(reflect.TypeFor[bindTestParams]())
	var defaults bindTestParams
	if err := b.set(reflect.ValueOf(&defaults).Elem(), schemaDefaults(bindTestDef())); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    any    // req.Params.Arguments
		raw     string // req.Params.RawArguments, when args is nil
		want    bindTestParams
		wantErr string
	}{
		{"defaults from the schema", map[string]any{"query": "q"}, "", bindTestParams{Query: "q", Limit: 10, Temp: 0.7, Flag: true}, ""},
		{"zero and false are values", map[string]any{"query": "q", "limit": 0.0, "temperature": 0.0, "flag": false},
			"", bindTestParams{Query: "q"}, ""},
		{"an integer as a JSON number", map[string]any{"query": "q", "limit": 3.0}, "", bindTestParams{Query: "q", Limit: 3, Temp: 0.7, Flag: true}, ""},
		{"a Go int (in-process callers)", map[string]any{"query": "q", "limit": 42}, "", bindTestParams{Query: "q", Limit: 42, Temp: 0.7, Flag: true}, ""},
		{"an object", map[string]any{"query": "q", "obj": map[string]any{"a": "b"}}, "",
			bindTestParams{Query: "q", Limit: 10, Temp: 0.7, Flag: true, Obj: map[string]any{"a": "b"}}, ""},
		{"raw arguments only", nil, `{"query":"q","limit":1e1}`, bindTestParams{Query: "q", Limit: 10, Temp: 0.7, Flag: true}, ""},
		{"no arguments", nil, "", bindTestParams{Limit: 10, Temp: 0.7, Flag: true}, ""},
		{"null keeps the default", map[string]any{"query": "q", "limit": nil}, "", bindTestParams{Query: "q", Limit: 10, Temp: 0.7, Flag: true}, ""},
		{"a key the params lack", map[string]any{"query": "q", "top_k": 1.0}, "", bindTestParams{}, `no field for argument "top_k"`},
		{"a fraction for an int", map[string]any{"query": "q", "limit": 3.5}, "", bindTestParams{}, `argument "limit": a number cannot go into a field of type int`},
		{"a string for a bool", map[string]any{"query": "q", "flag": "true"}, "", bindTestParams{}, `argument "flag": a string cannot go into a field of type bool`},
		{"not an object", []any{1.0}, "", bindTestParams{}, "arguments are an array, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req mcp.CallToolRequest
			req.Params.Arguments = tt.args
			req.Params.RawArguments = json.RawMessage(tt.raw)
			got := defaults
			err := b.bind(req, &got)
			checkArg(t, err, tt.wantErr)
			if tt.wantErr == "" && !jsonEqual(t, got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

// TestBound: the params' own check answers as invalid arguments; arguments that cannot be
// decoded (the schema let through what the params cannot hold) are r2r-mcp's bug.
func TestBound(t *testing.T) {
	var seen bindTestParams
	h := bound(&Deps{}, bindTestDef(), func(_ context.Context, _ *call, _ mcp.CallToolRequest, p bindTestParams) (*mcp.CallToolResult, error) {
		seen = p
		return result("ok", nil), nil
	})
	tests := []struct {
		name      string
		args      map[string]any
		wantType  string
		wantInMsg string
	}{
		{"valid", map[string]any{"query": "q"}, "", ""},
		{"check fails", map[string]any{"query": "  "}, "invalid_params", `Invalid arguments: argument "query" must not be empty`},
		{"cannot decode", map[string]any{"query": 5.0}, "internal", "could not read the arguments of t_bind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = bindTestParams{}
			var req mcp.CallToolRequest
			req.Params.Arguments = tt.args
			res, err := h(context.Background(), &call{}, req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantType == "" {
				if res.IsError || seen.Query != "q" || seen.Limit != 10 {
					t.Fatalf("res %+v, handler saw %+v", res, seen)
				}
				return
			}
			info, ok := toolerr.Of(res)
			if !ok || info.Type != tt.wantType || !strings.Contains(info.Message, tt.wantInMsg) || seen.Query != "" {
				t.Fatalf("info %+v (ok %v), handler saw %+v", info, ok, seen)
			}
		})
	}
}

func TestArgumentRules(t *testing.T) {
	tests := []struct {
		name    string
		run     func() (string, error)
		want    string
		wantErr string
	}{
		{"not blank", func() (string, error) { return "", nonBlank("q", " x ") }, "", ""},
		{"blank", func() (string, error) { return "", nonBlank("q", " \t ") }, "", `argument "q" must not be empty`},
		{"optional uuid absent", func() (string, error) { return optUUID("id", "", "") }, "", ""},
		{"uuid normalised", func() (string, error) { return optUUID("id", "9FBE403B-C11C-5AAE-8ADE-EF22980C3AD1", "") },
			"9fbe403b-c11c-5aae-8ade-ef22980c3ad1", ""},
		{"uuid rejected with hint", func() (string, error) { return optUUID("id", "1a2b3c4d", "run r2r_list_documents") },
			"", `argument "id" must be a UUID like 9fbe403b-c11c-5aae-8ade-ef22980c3ad1, got "1a2b3c4d"; run r2r_list_documents`},
		{"uuid without hyphens rejected", func() (string, error) { return optUUID("id", "9fbe403bc11c5aae8adeef22980c3ad1", "") },
			"", "must be a UUID"},
		{"object within its size", func() (string, error) { return "", objectWithin("o", map[string]any{"k": "v"}, 50) }, "", ""},
		{"absent object", func() (string, error) { return "", objectWithin("o", nil, 1) }, "", ""},
		{"object too large", func() (string, error) {
			return "", objectWithin("o", map[string]any{"k": strings.Repeat("x", 100)}, 50)
		}, "", `argument "o" is 108 bytes when serialized; the limit is 50 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.run()
			checkArg(t, err, tt.wantErr)
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func checkArg(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
}

// TestEveryArgumentBinds calls each tool with every argument its schema declares, each a
// value the schema accepts: whatever the call's outcome, the schema lets it through and
// the tool's params hold every argument.
func TestEveryArgumentBinds(t *testing.T) {
	e := newEnv(t)
	const id = "9fbe403b-c11c-5aae-8ade-ef22980c3ad1"
	for _, tl := range e.list {
		args := map[string]any{}
		for name, prop := range tl.Def.InputSchema.Properties {
			p, _ := prop.(map[string]any)
			switch enum, _ := p["enum"].([]string); {
			case p["default"] != nil:
				args[name] = p["default"]
			case len(enum) > 0:
				args[name] = enum[0]
			case p["type"] == "string":
				args[name] = id
			case p["type"] == "object":
				args[name] = map[string]any{}
			case p["type"] == "integer":
				args[name] = p["minimum"]
			default:
				t.Fatalf("%s: no value for %s %v", tl.Def.Name, name, p)
			}
		}
		res := e.call(tl.Def.Name, args)
		if info, _ := toolerr.Of(res); strings.HasPrefix(info.Message, "Invalid arguments for") || info.Type == "internal" {
			t.Errorf("%s(%v): %s", tl.Def.Name, args, info.Message)
		}
	}
}
