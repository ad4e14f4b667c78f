package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

func TestRegistryRules(t *testing.T) {
	e := newEnv(t)
	if err := Check(e.list); err != nil {
		t.Fatal(err)
	}
	for _, tl := range e.list {
		t.Run(tl.Def.Name, func(t *testing.T) {
			d := tl.Def
			a := d.Annotations
			if d.Title == "" || a.Title != d.Title || d.Description == "" {
				t.Fatalf("title %q, annotation title %q, description %q", d.Title, a.Title, d.Description)
			}
			for _, h := range []*bool{a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint} {
				if h == nil {
					t.Fatal("an annotation hint is unset")
				}
			}
			if *a.ReadOnlyHint != tl.ReadOnly {
				t.Fatalf("ReadOnly %v != readOnlyHint %v", tl.ReadOnly, *a.ReadOnlyHint)
			}
			in := schemaMap(t, d.InputSchema)
			out := schemaMap(t, outputSchemaJSON(t, d))
			for _, s := range []map[string]any{in, out} {
				if s["type"] != "object" {
					t.Fatalf("schema type %v", s["type"])
				}
				for _, k := range []string{"anyOf", "oneOf", "allOf", "not"} {
					if _, ok := s[k]; ok {
						t.Fatalf("top-level %s in schema", k)
					}
				}
			}
			for _, req := range d.InputSchema.Required {
				if _, ok := d.InputSchema.Properties[req]; !ok {
					t.Fatalf("required %q is not a property", req)
				}
			}
			checkProperties(t, "input", d.InputSchema.Properties, true)
			checkProperties(t, "output", out["properties"].(map[string]any), false)
			compileSchema(t, outputSchemaJSON(t, d))
			compileSchema(t, mustJSON(d.InputSchema))
		})
	}
}

// checkProperties: every property has a description; input integers have both bounds;
// string inputs have a length limit or an enum.
func checkProperties(t *testing.T, where string, props map[string]any, input bool) {
	t.Helper()
	for name, raw := range props {
		p, ok := raw.(map[string]any)
		if !ok {
			t.Fatalf("%s property %s is %T", where, name, raw)
		}
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s property %s has no description", where, name)
		}
		if !input {
			continue
		}
		switch p["type"] {
		case "integer", "number":
			if _, ok := p["minimum"]; !ok {
				t.Errorf("input %s has no minimum", name)
			}
			if _, ok := p["maximum"]; !ok {
				t.Errorf("input %s has no maximum", name)
			}
		case "string":
			_, hasEnum := p["enum"]
			_, hasMax := p["maxLength"]
			if !hasEnum && !hasMax {
				t.Errorf("input string %s has neither enum nor maxLength", name)
			}
		case "array":
			items, _ := p["items"].(map[string]any)
			_, hasMax := p["maxItems"]
			_, itemMax := items["maxLength"]
			if !hasMax || items["type"] != "string" || !itemMax {
				t.Errorf("input array %s needs maxItems and string items with a maxLength", name)
			}
		}
	}
}

func schemaMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compileSchema(t *testing.T, raw []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

// validateStructured checks a successful result's structured content against the tool's
// output schema, as a client would see it (through JSON).
func validateStructured(t *testing.T, tl Tool, res *mcp.CallToolResult) {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: error result: %s", tl.Def.Name, text(res))
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structured content", tl.Def.Name)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t, outputSchemaJSON(t, tl.Def)).Validate(inst); err != nil {
		t.Fatalf("%s: structured content does not match the output schema: %v\n%s", tl.Def.Name, err, b)
	}
}

func TestCheckRejectsBrokenDefinitions(t *testing.T) {
	e := newEnv(t)
	good := e.tools["r2r_search"]
	mutate := func(f func(*Tool)) []Tool {
		tl := good
		tl.Def.Annotations.ReadOnlyHint = mcp.ToBoolPtr(*good.Def.Annotations.ReadOnlyHint)
		f(&tl)
		return []Tool{tl}
	}
	tests := []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"duplicate", []Tool{good, good}, "duplicate name"},
		{"read-only mismatch", mutate(func(tl *Tool) { tl.ReadOnly = false }), "ReadOnly=false but readOnlyHint=true"},
		{"unset hint", mutate(func(tl *Tool) { tl.Def.Annotations.OpenWorldHint = nil }), "all four annotation hints"},
		{"no title", mutate(func(tl *Tool) { tl.Def.Title = "" }), "title"},
		{"destructive read", mutate(func(tl *Tool) { tl.Def.Annotations.DestructiveHint = mcp.ToBoolPtr(true) }), "cannot be destructive"},
		{"no example", mutate(func(tl *Tool) { tl.Example = Example{} }), "no example call"},
		{"no output schema", mutate(func(tl *Tool) { tl.Def.RawOutputSchema, tl.Def.OutputSchema = nil, mcp.ToolOutputSchema{} }), "output schema missing"},
		{"mcp-go defaults", []Tool{{Def: mcp.NewTool("x", mcp.WithToolTitle("X"), mcp.WithTitleAnnotation("X")), ReadOnly: true, Group: "g",
			Handler: good.Handler, Example: good.Example}}, "ReadOnly=true but readOnlyHint=false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.tools)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFilterReadOnlyDropsWriteTools(t *testing.T) {
	e := newEnv(t)
	all := Filter(e.list, false)
	if len(all) != len(e.list) {
		t.Fatalf("Filter(false) dropped tools")
	}
	ro := Filter(e.list, true)
	want := slices.DeleteFunc(slices.Clone(e.list), func(tl Tool) bool { return !tl.ReadOnly })
	if len(want) == len(e.list) {
		t.Fatal("the registry has no write tool to drop")
	}
	if names(ro) != names(want) {
		t.Fatalf("read-only tools = %s, want %s", names(ro), names(want))
	}
}

// TestToolSnaps compares every tool definition with testdata/toolsnaps/<tool>.json, and
// each definition that differs over HTTP (serve --http: no local project) with
// <tool>.http.json. UPDATE_TOOLSNAPS=1 rewrites them; a missing snapshot fails under
// CI=true and is written (and still fails, so it gets reviewed) otherwise.
func TestToolSnaps(t *testing.T) {
	e := newEnv(t)
	remote := newEnv(t, withDeps(func(d *Deps) {
		d.Projects = project.NewResolver(project.Options{WorkDir: t.TempDir(), CacheFile: "-", Remote: true})
	}))
	dir := filepath.Join("..", "testdata", "toolsnaps")
	snaps, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range snaps {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), ".json"), ".http")
		if _, ok := e.tools[name]; !ok {
			t.Errorf("%s is the snapshot of no tool in the registry; delete it", p)
		}
	}
	for i, tl := range e.list {
		t.Run(tl.Def.Name, func(t *testing.T) {
			got := snapJSON(t, tl.Def)
			compareSnap(t, filepath.Join(dir, tl.Def.Name+".json"), got)
			httpPath := filepath.Join(dir, tl.Def.Name+".http.json")
			if overHTTP := snapJSON(t, remote.list[i].Def); !bytes.Equal(overHTTP, got) {
				compareSnap(t, httpPath, overHTTP)
			} else if _, err := os.Stat(httpPath); err == nil {
				t.Errorf("%s is stale: the definition is the same over HTTP; delete it", httpPath)
			}
		})
	}
}

func snapJSON(t *testing.T, def mcp.Tool) []byte {
	t.Helper()
	got, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(got, '\n')
}

// compareSnap compares got with the snapshot at path (see TestToolSnaps).
func compareSnap(t *testing.T, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	switch {
	case os.Getenv("UPDATE_TOOLSNAPS") == "1":
		mustMkdir(t, filepath.Dir(path))
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	case errors.Is(err, os.ErrNotExist) && os.Getenv("CI") == "true":
		t.Fatalf("missing snapshot %s; run UPDATE_TOOLSNAPS=1 go test ./tools and commit it", path)
	case errors.Is(err, os.ErrNotExist):
		mustMkdir(t, filepath.Dir(path))
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("snapshot %s was missing and has been written; review and commit it", path)
	case err != nil:
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("tool definition differs from %s. If the change is intended, run UPDATE_TOOLSNAPS=1 go test ./tools\n--- got:\n%s", path, got)
	}
}

const (
	readmeStart = "<!-- tools:start -->"
	readmeEnd   = "<!-- tools:end -->"
)

// TestREADMEToolsTable keeps the README's tools table generated from the registry.
// UPDATE_TOOLSNAPS=1 rewrites the block between the markers.
func TestREADMEToolsTable(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i, j := strings.Index(readme, readmeStart), strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no tools table markers. Add a line %q and a line %q where the tools table belongs, "+
			"then run UPDATE_TOOLSNAPS=1 go test ./tools to fill it.", readmeStart, readmeEnd)
	}
	block := readmeStart + "\n" + MarkdownTable(e.list) + readmeEnd
	cur := readme[i : j+len(readmeEnd)]
	if cur == block {
		return
	}
	if os.Getenv("UPDATE_TOOLSNAPS") == "1" {
		if err := os.WriteFile(path, []byte(readme[:i]+block+readme[j+len(readmeEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("the README tools table is out of date; run UPDATE_TOOLSNAPS=1 go test ./tools\n--- want:\n%s", block)
}

func TestMarkdownTable(t *testing.T) {
	e := newEnv(t)
	md := MarkdownTable(e.list)
	lines := strings.Split(strings.TrimSpace(md), "\n")
	if len(lines) != 2+len(e.list) {
		t.Fatalf("table has %d lines:\n%s", len(lines), md)
	}
	rows := map[string]string{}
	for i, tl := range e.list {
		if !strings.HasPrefix(lines[i+2], "| `"+tl.Def.Name+"` |") {
			t.Fatalf("row %d = %q", i, lines[i+2])
		}
		rows[tl.Def.Name] = lines[i+2]
		if want := map[bool]string{true: "| read |", false: "| write |"}[tl.ReadOnly]; !strings.Contains(lines[i+2], want) {
			t.Errorf("%s row lacks %q: %s", tl.Def.Name, want, lines[i+2])
		}
	}
	search := rows["r2r_search"]
	for _, want := range []string{"| read |", "`query` (required, ≤ 4000 chars)", "`limit` (integer 1–100, default 10)",
		"`search_mode` (basic/advanced/custom, default advanced)"} {
		if !strings.Contains(search, want) {
			t.Errorf("search row lacks %q: %s", want, search)
		}
	}
}

// outputSchemaJSON is a tool's output schema as clients receive it.
func outputSchemaJSON(t *testing.T, def mcp.Tool) json.RawMessage {
	t.Helper()
	if len(def.RawOutputSchema) > 0 {
		return def.RawOutputSchema
	}
	b, err := json.Marshal(def.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// names is the tools' names, in order, for messages and comparisons.
func names(ts []Tool) string {
	var b strings.Builder
	for i, tl := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tl.Def.Name)
	}
	return b.String()
}
