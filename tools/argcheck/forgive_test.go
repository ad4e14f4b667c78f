package argcheck

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func looseTool() mcp.Tool {
	return mcp.NewTool("t_loose",
		mcp.WithString("file_path", mcp.MinLength(1)),
		mcp.WithString("collection_id"),
		mcp.WithString("search_mode", mcp.Enum("basic", "advanced", "custom")),
		mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100)),
		mcp.WithNumber("temperature"),
		mcp.WithBoolean("run_async"),
		mcp.WithObject("filters"),
		mcp.WithArray("tags", mcp.WithStringItems()),
		mcp.WithInteger("max_tokens"),
		mcp.WithInteger("max_chars"),
		mcp.WithString("query"),
	)
}

var looseAliases = map[string]ValueAliases{"t_loose": {"search_mode": {"semantic": "basic", "hybrid": "advanced"}}}

func looseReq(raw string) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	if err := json.Unmarshal([]byte(`{"name":"t_loose","arguments":`+raw+`}`), &req.Params); err != nil {
		panic(err)
	}
	return req
}

// TestForgive: each loose form with exactly one strict reading is read as the schema says
// and reported; anything with two readings, or none, is left for Check to reject.
func TestForgive(t *testing.T) {
	v := New([]mcp.Tool{looseTool()}, looseAliases, slog.New(slog.DiscardHandler))
	tests := []struct {
		name string
		args string
		want string   // the arguments after Forgive, as JSON
		read []string // Mapping.String of each
		bad  string   // when set, Check must still reject, with this in the text
	}{
		{"strict stays", `{"file_path":"a.md","limit":10}`, `{"file_path":"a.md","limit":10}`, nil, ""},
		{"10.0 for an integer", `{"limit":10.0}`, `{"limit":10}`, nil, ""},
		{"stringified object", `{"filters":"{\"a\":{\"$eq\":1}}"}`, `{"filters":{"a":{"$eq":1}}}`, []string{`"filters" as an object`}, ""},
		{"stringified array", `{"tags":"[\"a\",\"b\"]"}`, `{"tags":["a","b"]}`, []string{`"tags" as an array`}, ""},
		{"stringified integer", `{"limit":" 7 "}`, `{"limit":7}`, []string{`"limit" as an integer`}, ""},
		{"stringified boolean", `{"run_async":"false"}`, `{"run_async":false}`, []string{`"run_async" as a boolean`}, ""},
		{"stringified number", `{"temperature":"0.5"}`, `{"temperature":0.5}`, []string{`"temperature" as a number`}, ""},
		{"string of the wrong type", `{"filters":"[1]"}`, `{"filters":"[1]"}`, nil, `argument "filters" must be object, got string`},
		{"not JSON", `{"filters":"status = open"}`, `{"filters":"status = open"}`, nil, `argument "filters" must be object`},
		{"a string stays a string", `{"query":"{\"a\":1}"}`, `{"query":"{\"a\":1}"}`, nil, ""},
		{"fraction as integer string", `{"limit":"2.5"}`, `{"limit":"2.5"}`, nil, `argument "limit" must be integer, got string`},
		{"alias hybrid", `{"search_mode":"hybrid"}`, `{"search_mode":"advanced"}`, []string{`"search_mode" "hybrid" as "advanced"`}, ""},
		{"alias semantic", `{"search_mode":"Semantic"}`, `{"search_mode":"basic"}`, []string{`"search_mode" "Semantic" as "basic"`}, ""},
		{"enum in another case", `{"search_mode":"ADVANCED"}`, `{"search_mode":"advanced"}`, []string{`"search_mode" "ADVANCED" as "advanced"`}, ""},
		{"unknown value", `{"search_mode":"fast"}`, `{"search_mode":"fast"}`, nil, `must be one of "basic", "advanced", "custom", got "fast"`},
		{"path is file_path", `{"path":"a.md"}`, `{"file_path":"a.md"}`, []string{`"path" as "file_path"`}, ""},
		{"camel case", `{"filePath":"a.md","runAsync":true}`, `{"file_path":"a.md","run_async":true}`,
			[]string{`"filePath" as "file_path"`, `"runAsync" as "run_async"`}, ""},
		{"typo", `{"qeury":"x"}`, `{"query":"x"}`, []string{`"qeury" as "query"`}, ""},
		{"name and value", `{"mode":"hybrid"}`, `{"search_mode":"advanced"}`,
			[]string{`"mode" as "search_mode"`, `"search_mode" "hybrid" as "advanced"`}, ""},
		{"ambiguous name", `{"max":5}`, `{"max":5}`, nil, `unknown argument "max" (did you mean "max_chars" or "max_tokens"?)`},
		{"two values for one argument", `{"path":"a.md","file_path":"b.md"}`, `{"path":"a.md","file_path":"b.md"}`, nil,
			`unknown argument "path" (did you mean "file_path"?)`},
		{"two names for one argument", `{"path":"a.md","filePath":"b.md"}`, `{"path":"a.md","filePath":"b.md"}`, nil, `unknown argument "filePath"`},
		{"too short to guess", `{"id":"x"}`, `{"id":"x"}`, nil, `unknown argument "id"`},
		{"nothing close", `{"zzz":1}`, `{"zzz":1}`, nil, `unknown argument "zzz"`},
		{"arguments as a JSON string", `"{\"path\":\"a.md\"}"`, `{"file_path":"a.md"}`,
			[]string{`the arguments string as an object`, `"path" as "file_path"`}, ""},
		{"more unknown names than near misses", `{"path":"a","qeury":"x","runAsync":true,"filePath":"b","zzz":1}`,
			`{"path":"a","qeury":"x","runAsync":true,"filePath":"b","zzz":1}`, nil, `unknown argument "zzz"`},
		{"arguments a JSON string of no object", `"[1]"`, `"[1]"`, nil, `the arguments must be object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, read := v.Forgive(looseReq(tt.args))
			var got, want any
			raw := req.Params.RawArguments
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("arguments %s: %v", raw, err)
			}
			_ = json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("arguments %s, want %s", raw, tt.want)
			}
			if m, ok := req.Params.Arguments.(map[string]any); ok && !reflect.DeepEqual(any(m), got) {
				t.Errorf("Arguments %v differ from RawArguments %s", m, raw)
			}
			var texts []string
			for _, m := range read {
				texts = append(texts, m.String())
			}
			if !reflect.DeepEqual(texts, tt.read) {
				t.Errorf("read %q, want %q", texts, tt.read)
			}
			err := v.Check(req)
			switch {
			case tt.bad == "" && err != nil:
				t.Errorf("rejected: %v", err)
			case tt.bad != "" && err == nil:
				t.Errorf("accepted, want a rejection with %q", tt.bad)
			case tt.bad != "" && !strings.Contains(err.Error(), tt.bad):
				t.Errorf("rejection %q lacks %q", err.Error(), tt.bad)
			}
		})
	}
}

// A rejection after Forgive read something says what it read, so the model knows which
// name its value went to.
func TestForgiveRejectionSaysWhatWasRead(t *testing.T) {
	v := New([]mcp.Tool{looseTool()}, looseAliases, slog.New(slog.DiscardHandler))
	req, read := v.Forgive(looseReq(`{"path":"","limit":"500"}`))
	err := v.Check(req)
	if err == nil {
		t.Fatal("accepted an empty file_path and a limit of 500")
	}
	err.Read = read
	for _, w := range []string{`argument "file_path" must be at least 1 characters long`, `argument "limit" must be at most 100`,
		`(Read "path" as "file_path", "limit" as an integer.)`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err.Error(), w)
		}
	}
}

func TestNearMisses(t *testing.T) {
	ls := parseLoose([]byte(`{"properties":{"file_path":{},"collection_id":{},"search_mode":{},"query":{},"status_filter":{},"model":{},"max_tokens":{}}}`))
	tests := map[string][]string{
		"file_path":              {"file_path"},
		"FilePath":               {"file_path"},
		"file-path":              {"file_path"},
		"path":                   {"file_path"},
		"collection":             {"collection_id"},
		"collectionId":           {"collection_id"},
		"mode":                   {"model", "search_mode"},
		"search_query":           {"query"},
		"status":                 {"status_filter"},
		"qeury":                  {"query"},
		"id":                     nil,
		"file":                   {"file_path"},
		"zzz":                    nil,
		strings.Repeat("q", 100): nil,
	}
	for got, want := range tests {
		if c, _, _ := ls.nearMisses(got); !reflect.DeepEqual(c, want) {
			t.Errorf("nearMisses(%q) = %q, want %q", got, c, want)
		}
	}
}
