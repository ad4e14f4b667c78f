package argcheck

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func testTool() mcp.Tool {
	def := mcp.NewTool("t_search",
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(10)),
		mcp.WithString("mode", mcp.Enum("basic", "advanced")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100)),
		mcp.WithNumber("temperature", mcp.Min(0), mcp.Max(2)),
		mcp.WithObject("filters"),
	)
	return def
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
	v := New([]mcp.Tool{testTool()}, nil, slog.New(slog.DiscardHandler))
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

func TestErrorText(t *testing.T) {
	v := New([]mcp.Tool{testTool()}, nil, slog.New(slog.DiscardHandler))
	err := v.Check(callReq(`{"qeury":"x"}`))
	if err == nil {
		t.Fatal("accepted a misspelled argument")
	}
	want := `Invalid arguments for t_search: missing required argument "query"; unknown argument "qeury" (did you mean "query"?). ` +
		"Valid arguments: query, filters, limit, mode, temperature. Fix the arguments and call again."
	if err.Error() != want {
		t.Errorf("text\n%s\nwant\n%s", err.Error(), want)
	}
	if v.Check(callReq(`{"query":"x"}`)) != nil {
		t.Error("rejected valid arguments")
	}
	other := callReq(`{"anything":1}`)
	other.Params.Name = "not_ours"
	if v.Check(other) != nil {
		t.Error("checked a tool it does not know")
	}
}

// TestArgValidatorBoundsEcho: argument names and values are untrusted and unbounded; a
// rejection quotes at most maxQuoted characters of each, lists at most maxProblems
// problems, and does not compute edit distances for names no property could be a typo of.
func TestArgValidatorBoundsEcho(t *testing.T) {
	v := New([]mcp.Tool{testTool()}, nil, slog.New(slog.DiscardHandler))
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
			text := v.Check(callReq(tt.args)).Error()
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

// Validators of the same tools (serve --http keeps one per user) share each compiled
// schema, and the shared one rejects and accepts as a validator's own would.
func TestValidatorsShareCompiledSchemas(t *testing.T) {
	a, b := New([]mcp.Tool{testTool()}, nil, slog.New(slog.DiscardHandler)), New([]mcp.Tool{testTool()}, nil, slog.New(slog.DiscardHandler))
	sa, _, errA := a.tools["t_search"].compiled()
	sb, _, errB := b.tools["t_search"].compiled()
	if errA != nil || errB != nil || sa == nil || sa != sb {
		t.Fatalf("schemas %p and %p (errors %v, %v), want one shared schema", sa, sb, errA, errB)
	}
	if b.Check(callReq(`{"query":"x"}`)) != nil || b.Check(callReq(`{"qeury":"x"}`)) == nil {
		t.Error("the shared schema does not check as its own would")
	}
}
