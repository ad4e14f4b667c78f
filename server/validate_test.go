package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

func testTool() tools.Tool {
	def := mcp.NewTool("t_search",
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(10)),
		mcp.WithString("mode", mcp.Enum("basic", "advanced")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100)),
		mcp.WithNumber("temperature", mcp.Min(0), mcp.Max(2)),
		mcp.WithObject("filters"),
	)
	return tools.Tool{Def: def}
}

func callReq(raw string) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name = "t_search"
	if raw != "" {
		if err := json.Unmarshal([]byte(`{"name":"t_search","arguments":`+raw+`}`), &req.Params); err != nil {
			panic(err)
		}
	}
	return req
}

func TestArgValidator(t *testing.T) {
	v := newArgValidator([]tools.Tool{testTool()}, slog.New(slog.DiscardHandler))
	tests := []struct {
		name string
		args string // raw JSON; "" = no arguments member
		want []string
	}{
		{"valid", `{"query":"x","limit":5,"mode":"basic","temperature":0.5,"filters":{"a":1}}`, nil},
		{"zero and false are values", `{"query":"x","temperature":0}`, nil},
		{"misspelled", `{"qeury":"x"}`, []string{`missing required argument "query"`, `unknown argument "qeury" (did you mean "query"?)`}},
		{"wrong case", `{"Query":"x"}`, []string{`unknown argument "Query" (did you mean "query"?)`}},
		{"unrelated unknown", `{"query":"x","zzz":1}`, []string{`unknown argument "zzz"`}},
		{"missing", `{}`, []string{`missing required argument "query"`}},
		{"no arguments", ``, []string{`missing required argument "query"`}},
		{"null arguments", `null`, []string{`missing required argument "query"`}},
		{"above maximum", `{"query":"x","limit":1000}`, []string{`argument "limit" must be at most 100, got 1000`}},
		{"below minimum", `{"query":"x","limit":0}`, []string{`argument "limit" must be at least 1, got 0`}},
		{"fraction for integer", `{"query":"x","limit":3.7}`, []string{`argument "limit" must be integer, got number`}},
		{"string for integer", `{"query":"x","limit":"10"}`, []string{`argument "limit" must be integer, got string`}},
		{"float bound", `{"query":"x","temperature":2.5}`, []string{`argument "temperature" must be at most 2, got 2.5`}},
		{"enum", `{"query":"x","mode":"fast"}`, []string{`argument "mode" must be one of "basic", "advanced", got "fast"`}},
		{"too long", `{"query":"01234567890"}`, []string{`argument "query" must be at most 10 characters long, got 11`}},
		{"empty string", `{"query":""}`, []string{`argument "query" must be at least 1 characters long, got 0`}},
		{"not an object", `[1]`, []string{"the arguments must be object, got array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := v.check(callReq(tt.args))
			if tt.want == nil {
				if got != nil {
					t.Fatalf("rejected valid arguments: %v", got)
				}
				return
			}
			joined := strings.Join(got, "; ")
			for _, w := range tt.want {
				if !strings.Contains(joined, w) {
					t.Errorf("problems %q lack %q", joined, w)
				}
			}
		})
	}
}

func TestArgValidatorResult(t *testing.T) {
	v := newArgValidator([]tools.Tool{testTool()}, slog.New(slog.DiscardHandler))
	res := v.invalid("t_search", v.check(callReq(`{"qeury":"x"}`)))
	if !res.IsError {
		t.Fatal("not an error result")
	}
	text := res.Content[0].(mcp.TextContent).Text
	for _, w := range []string{"Invalid arguments for t_search", "Valid arguments: query, filters, limit, mode, temperature", "call again"} {
		if !strings.Contains(text, w) {
			t.Errorf("text %q lacks %q", text, w)
		}
	}
	if res.StructuredContent != nil {
		t.Errorf("error result carries structured content (it must match the output schema): %#v", res.StructuredContent)
	}
	info, ok := tools.ErrorOf(res)
	if !ok || info.Code != tools.CodeInvalidParams || info.Type != "invalid_params" || info.Retryable || info.Message != text {
		t.Errorf("_meta error = %#v (ok %v)", info, ok)
	}
	wire, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(wire, &m); err != nil {
		t.Fatal(err)
	}
	meta, _ := m["_meta"].(map[string]any)
	if e, _ := meta[tools.ErrorMetaKey].(map[string]any); e["code"] != float64(tools.CodeInvalidParams) || e["type"] != "invalid_params" || e["retryable"] != false {
		t.Errorf("wire _meta = %s", wire)
	}
}

// TestArgValidatorBoundsEcho: argument names and values are untrusted and unbounded; a
// rejection quotes at most maxQuoted characters of each, lists at most maxProblems
// problems, and does not compute edit distances for names no property could be a typo of.
func TestArgValidatorBoundsEcho(t *testing.T) {
	v := newArgValidator([]tools.Tool{testTool()}, slog.New(slog.DiscardHandler))
	long := strings.Repeat("q", 1<<20)
	var many strings.Builder
	many.WriteString(`{"query":"x"`)
	for i := range 50 {
		fmt.Fprintf(&many, `,"unknown%02d":1`, i)
	}
	many.WriteString("}")
	tests := []struct {
		name, args string
		want       []string
		maxLen     int
	}{
		{"long name", `{"query":"x","` + long + `":1}`, []string{`unknown argument "` + strings.Repeat("q", 63) + `…"`}, 300},
		{"long name like a property", `{"query":"x","query` + long + `":1}`, []string{`unknown argument "query` + strings.Repeat("q", 58) + `…"`}, 300},
		{"long enum value", `{"query":"x","mode":"` + long + `"}`, []string{`must be one of "basic", "advanced", got "qqq`, `…`}, 300},
		{"long nested field", `{"query":"x","filters":{"a":1},"limit":{"` + long + `":1}}`, []string{`argument "limit" must be integer, got object`}, 300},
		{"many unknown", many.String(), []string{`unknown argument "unknown00"`, `unknown argument "unknown09"`, "and 40 more unknown arguments"}, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := v.check(callReq(tt.args))
			text := v.invalid("t_search", problems).Content[0].(mcp.TextContent).Text
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("text %q lacks %q", text, w)
				}
			}
			if strings.Contains(text, "did you mean") {
				t.Errorf("suggested a property for a name no property is a typo of: %q", text)
			}
			if len(text) > tt.maxLen+200 {
				t.Errorf("rejection is %d bytes long: %.400q", len(text), text)
			}
		})
	}
}

// TestRegistrySchemasCompile checks every real tool schema compiles and accepts a minimal
// valid call, so the validator never blocks a tool by mistake.
func TestRegistrySchemasCompile(t *testing.T) {
	client, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.Registry(&tools.Deps{Client: client, Projects: project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-"})})
	v := newArgValidator(reg, slog.New(slog.DiscardHandler))
	minimal := map[string]string{
		"r2r_search":          `{"query":"q"}`,
		"r2r_rag_query":       `{"question":"q"}`,
		"r2r_ingest_document": `{"file_path":"README.md"}`,
		"r2r_monitor_task":    `{"document_id":"5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}`,
		"r2r_get_document":    `{"document_id":"5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}`,
		"r2r_delete_document": `{"document_id":"5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}`,
	}
	for _, tl := range reg {
		args := minimal[tl.Def.Name]
		if args == "" {
			args = `{}`
		}
		req := callReq(args)
		req.Params.Name = tl.Def.Name
		if p := v.check(req); p != nil {
			t.Errorf("%s rejects %s: %v", tl.Def.Name, args, p)
		}
		req = callReq(`{"no_such_argument":1}`)
		req.Params.Name = tl.Def.Name
		if p := v.check(req); !strings.Contains(strings.Join(p, ";"), `unknown argument "no_such_argument"`) {
			t.Errorf("%s accepts an unknown argument: %v", tl.Def.Name, p)
		}
	}
}

func TestClosest(t *testing.T) {
	valid := []string{"query", "collection_id", "search_mode", "limit", "filters"}
	tests := map[string]string{
		"qeury":        "query",
		"querry":       "query",
		"QUERY":        "query",
		"collection":   "collection_id",
		"collectionId": "collection_id",
		"limt":         "limit",
		"filter":       "filters",
		"mode":         "search_mode",
		"zzz":          "",
		"temperature":  "",
	}
	for got, want := range tests {
		if c := closest(got, valid); c != want {
			t.Errorf("closest(%q) = %q, want %q", got, c, want)
		}
	}
}
