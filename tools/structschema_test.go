package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

type schemaTestParams struct {
	Query  string         `json:"query" required:"true" min:"1" max:"maxQueryChars" desc:"the query"`
	Mode   string         `json:"mode" enum:"searchModes" default:"searchModeDefault" desc:"the mode"`
	Kind   string         `json:"kind" enum:"a,b" desc:"a kind"`
	Limit  int            `json:"limit" min:"1" max:"100" default:"10" desc:"at most"`
	Ratio  float64        `json:"ratio" min:"0" max:"2" default:"0.7" desc:"a ratio"`
	Force  bool           `json:"force" default:"true" desc:"force it"`
	Tags   []string       `json:"tags" max:"5" itemmin:"1" itemmax:"40" desc:"Tags"`
	Filter map[string]any `json:"filter" desc:"a filter"`
	Hidden string         `json:"-"`
	shown  int
}

type schemaTestOutput struct {
	ID    string             `json:"id" required:"true" desc:"an id"`
	Hits  []schemaTestHit    `json:"hits,omitempty" desc:"the hits"`
	Warns []string           `json:"warnings,omitempty" items:"a warning" desc:"warnings"`
	Part  *schemaTestHit     `json:"part,omitempty" desc:"a part"`
	Stats map[string]int     `json:"stats" desc:"counts"`
	Blob  *schemaTestHit     `json:"blob" free:"true" desc:"anything"`
	Score float64            `json:"score" min:"0" max:"1" desc:"a score"`
	Extra map[string]float64 `json:"-"`
}

type schemaTestHit struct {
	Rank int `json:"rank" required:"true" desc:"its rank"`
}

// TestInputSchemaIsMCPGos: a params struct's tags give the input schema mcp-go's property
// options give, property for property and in field order, so a tool's contract does not
// change when its schema is derived.
func TestInputSchemaIsMCPGos(t *testing.T) {
	got := newTool("x", inputSchema[schemaTestParams]())
	want := newTool("x",
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(maxQueryChars), mcp.Description("the query")),
		mcp.WithString("mode", mcp.Enum(searchModes...), mcp.DefaultString("advanced"), mcp.Description("the mode")),
		mcp.WithString("kind", mcp.Enum("a", "b"), mcp.Description("a kind")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100), mcp.DefaultNumber(10), mcp.Description("at most")),
		mcp.WithNumber("ratio", mcp.Min(0.0), mcp.Max(2.0), mcp.DefaultNumber(0.7), mcp.Description("a ratio")),
		mcp.WithBoolean("force", mcp.DefaultBool(true), mcp.Description("force it")),
		mcp.WithArray("tags", mcp.MaxItems(5), mcp.WithStringItems(mcp.MinLength(1), mcp.MaxLength(40)), mcp.Description("Tags")),
		mcp.WithObject("filter", mcp.Description("a filter")),
	)
	if !reflect.DeepEqual(got.InputSchema, want.InputSchema) {
		t.Fatalf("derived %#v\nwant    %#v", got.InputSchema, want.InputSchema)
	}
	if g, w := string(mustJSON(got)), string(mustJSON(want)); g != w {
		t.Fatalf("derived %s\nwant    %s", g, w)
	}
}

func TestOutputSchemaOfStruct(t *testing.T) {
	hit := objectSchema(map[string]any{"rank": intProp("its rank")}, "rank")
	want := objectSchema(map[string]any{
		"id":       strProp("an id"),
		"hits":     arrayProp("the hits", hit),
		"warnings": arrayProp("warnings", strProp("a warning")),
		"part":     withDesc("a part", objectSchema(map[string]any{"rank": intProp("its rank")}, "rank")),
		"stats":    freeObjectProp("counts"),
		"blob":     freeObjectProp("anything"),
		"score":    withDesc("a score", map[string]any{"type": "number", "minimum": 0.0, "maximum": 1.0}),
	}, "id")
	got := outputSchema[schemaTestOutput]()
	var g, w any
	if err := json.Unmarshal(mustJSON(got), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("derived %s\nwant    %s", mustJSON(got), mustJSON(want))
	}
}

// A tag the deriver does not understand is a programmer error, reported with the field.
func TestSchemaTagMistakesPanic(t *testing.T) {
	type unknownOption struct {
		A string `json:"a" maxlen:"3" desc:"a"`
	}
	type badNumber struct {
		A int `json:"a" max:"lots" desc:"a"`
	}
	type unknownName struct {
		A string `json:"a" enum:"noSuchValues" desc:"a"`
	}
	tests := []struct {
		name   string
		derive func()
		want   string
	}{
		{"unknown option", func() { inputSchema[unknownOption]() }, `unknownOption.A: unknown tag "maxlen"`},
		{"not a number", func() { inputSchema[badNumber]() }, `badNumber.A: max:"lots" is neither`},
		{"unknown name", func() { inputSchema[unknownName]() }, `unknownName.A: enum:"noSuchValues" is neither`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tt.want) {
					t.Fatalf("panic %v, want %q", r, tt.want)
				}
			}()
			tt.derive()
		})
	}
}

// Builders of the schemas the derivation is expected to produce.

func strProp(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

func intProp(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}

func freeObjectProp(desc string) map[string]any {
	return map[string]any{"type": "object", "description": desc}
}

func arrayProp(desc string, items map[string]any) map[string]any {
	return map[string]any{"type": "array", "description": desc, "items": items}
}

func withDesc(desc string, s map[string]any) map[string]any {
	s["description"] = desc
	return s
}
