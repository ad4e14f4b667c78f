package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/argcheck"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// TestValidateArgsResult: a rejection is an error result in the shape of every tool error,
// and the handler does not run.
func TestValidateArgsResult(t *testing.T) {
	def := mcp.NewTool("t_search", mcp.WithString("query", mcp.Required()))
	ran := false
	h := ValidateArgs([]Tool{{Def: def}}, slog.New(slog.DiscardHandler))(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran = true
		return result("ok", nil), nil
	})
	var req mcp.CallToolRequest
	if err := json.Unmarshal([]byte(`{"name":"t_search","arguments":{"quest":"x"}}`), &req.Params); err != nil {
		t.Fatal(err)
	}
	res, err := h(context.Background(), req)
	if err != nil || ran || !res.IsError {
		t.Fatalf("res %#v, err %v, handler ran %v", res, err, ran)
	}
	text := res.Content[0].(mcp.TextContent).Text
	for _, w := range []string{"Invalid arguments for t_search", `(did you mean "query"?)`, "Valid arguments: query", "call again"} {
		if !strings.Contains(text, w) {
			t.Errorf("text %q lacks %q", text, w)
		}
	}
	if res.StructuredContent != nil {
		t.Errorf("error result carries structured content (it must match the output schema): %#v", res.StructuredContent)
	}
	info, ok := toolerr.Of(res)
	if !ok || info.Code != toolerr.CodeInvalidParams || info.Type != "invalid_params" || info.Retryable || info.Message != text {
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
	if e, _ := meta[toolerr.MetaKey].(map[string]any); e["code"] != float64(toolerr.CodeInvalidParams) || e["type"] != "invalid_params" || e["retryable"] != false {
		t.Errorf("wire _meta = %s", wire)
	}
}

// A loose argument with one strict reading reaches the handler read as the schema says,
// and the result's _meta says what was read, without changing the handler's result.
func TestValidateArgsReadsLooseArguments(t *testing.T) {
	def := mcp.NewTool("t_search", mcp.WithString("query", mcp.Required()), mcp.WithString("mode", mcp.Enum("basic", "advanced")))
	shared := result("ok", nil)
	var got map[string]any
	h := ValidateArgs([]Tool{{Def: def, Aliases: argcheck.ValueAliases{"mode": {"hybrid": "advanced"}}}}, slog.New(slog.DiscardHandler))(
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got = req.GetArguments()
			return shared, nil
		})
	var req mcp.CallToolRequest
	if err := json.Unmarshal([]byte(`{"name":"t_search","arguments":{"qeury":"x","mode":"hybrid"}}`), &req.Params); err != nil {
		t.Fatal(err)
	}
	res, err := h(context.Background(), req)
	if err != nil || res.IsError || got["query"] != "x" || got["mode"] != "advanced" {
		t.Fatalf("res %#v, err %v, handler got %v", res, err, got)
	}
	wire, _ := json.Marshal(res)
	want := `"_meta":{"r2r-mcp/arguments-read":[{"argument":"query","given":"qeury","kind":"name"},{"argument":"mode","given":"hybrid","to":"advanced","kind":"value"}]}`
	if !strings.Contains(string(wire), want) {
		t.Errorf("result %s lacks %s", wire, want)
	}
	if shared.Meta != nil {
		t.Errorf("the handler's result (maybe cached, shared) was changed: %#v", shared.Meta)
	}
}

// TestRegistrySchemasCompile checks every real tool schema compiles and accepts the tool's
// example call, so the validator never blocks a tool by mistake.
func TestRegistrySchemasCompile(t *testing.T) {
	client, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg := Registry(&Deps{Config: testConfig(), Client: client, Projects: project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-"})})
	defs := make([]mcp.Tool, len(reg))
	for i, tl := range reg {
		defs[i] = tl.Def
	}
	v := argcheck.New(defs, nil, slog.New(slog.DiscardHandler))
	call := func(name, args string) mcp.CallToolRequest {
		var req mcp.CallToolRequest
		if err := json.Unmarshal([]byte(`{"name":"`+name+`","arguments":`+args+`}`), &req.Params); err != nil {
			t.Fatal(err)
		}
		return req
	}
	for _, tl := range reg {
		args := string(mustJSON(tl.Example.Args))
		if err := v.Check(call(tl.Def.Name, args)); err != nil {
			t.Errorf("%s rejects %s: %v", tl.Def.Name, args, err)
		}
		err := v.Check(call(tl.Def.Name, `{"no_such_argument":1}`))
		if err == nil || !strings.Contains(err.Error(), `unknown argument "no_such_argument"`) {
			t.Errorf("%s accepts an unknown argument: %v", tl.Def.Name, err)
		}
	}
}

// TestRegistryArgumentsInEveryStyle: every argument of every real tool is read from its
// name in camelCase, PascalCase, kebab-case, words and capitals (no word of a real name is
// taken for one that changes the meaning), and never from its name with a negation added in
// front or behind.
func TestRegistryArgumentsInEveryStyle(t *testing.T) {
	client, err := r2r.New(r2r.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	reg := Registry(&Deps{Config: testConfig(), Client: client, Projects: project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-"})})
	defs := make([]mcp.Tool, len(reg))
	for i, tl := range reg {
		defs[i] = tl.Def
	}
	v := argcheck.New(defs, nil, slog.New(slog.DiscardHandler))
	read := func(tool, name string) []argcheck.Mapping {
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = tool, map[string]any{name: "x"}
		_, got := v.Forgive(req)
		return got
	}
	for _, tl := range reg {
		for arg := range tl.Def.InputSchema.Properties {
			words := strings.Split(arg, "_")
			camel := words[0]
			for _, w := range words[1:] {
				camel += strings.ToUpper(w[:1]) + w[1:]
			}
			forms := []string{camel, strings.ToUpper(camel[:1]) + camel[1:], strings.Join(words, "-"),
				strings.Join(words, " "), strings.ToUpper(arg)}
			for _, form := range forms {
				if form == arg {
					continue
				}
				if got := read(tl.Def.Name, form); len(got) != 1 || got[0].Argument != arg {
					t.Errorf("%s: %q read as %v, want %s", tl.Def.Name, form, got, arg)
				}
			}
			for _, neg := range []string{"no_" + arg, "not" + camel, "dont_" + arg, "skip-" + strings.Join(words, "-"),
				"without " + strings.Join(words, " "), arg + "_disabled", camel + "Off", "keep_" + arg, "exclude_" + arg} {
				if got := read(tl.Def.Name, neg); len(got) != 0 {
					t.Errorf("%s: %q read as %v", tl.Def.Name, neg, got)
				}
			}
		}
	}
}
