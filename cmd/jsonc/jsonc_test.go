package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"equal", "x\n", "x\n", ""},
		{"insert in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nnew\n5\n6\n7\n8\n",
			"--- a\n+++ b\n@@ -2,6 +2,7 @@\n 2\n 3\n 4\n+new\n 5\n 6\n 7\n"},
		{"replace first line", "old\nb\n", "new\nb\n", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-old\n+new\n b\n"},
		{"from nothing", "", "a\n", "--- a\n+++ b\n@@ -0,0 +1,1 @@\n+a\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff("a", "b", []byte(tc.a), []byte(tc.b)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// FuzzMerge checks the editor against encoding/json: it accepts exactly the JSON objects
// encoding/json accepts, and its output is valid JSON holding the entry with every other
// top-level value unchanged. `go test` runs the seeds; `go test -fuzz FuzzMerge ./cmd/jsonc` explores.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{
		"", "{}", `{"mcpServers":{}}`, `{"a":1,"mcpServers":{"x":{"command":"x"}}}`,
		"{\n  \"mcpServers\": {\n    \"r2r\": {\"command\": \"old\", \"env\": {}}\n  }\n}\n",
		`{"mcpServers":[]}`, `{"a":"\u00e9\"","b":[1,2.5e-3,true,null]}`, "\ufeff{\"x\": {}}", `{"a":1}{`,
		"{\r\n\t\"mcpServers\": {\r\n\t}\r\n}", `{"mcpServers":{"r2r":"x"}}`, `{"a":01}`, `{"a":"\x"}`,
	} {
		f.Add(s)
	}
	entry := Obj{{"command", "/bin/r2r-mcp"}, {"args", []string{"serve"}}}
	f.Fuzz(func(t *testing.T, in string) {
		out, _, err := Merge([]byte(in), false, []string{"mcpServers", "r2r"}, entry)
		trimmed := strings.TrimSpace(strings.TrimPrefix(in, "\ufeff"))
		var old map[string]any
		stdErr := json.Unmarshal([]byte(strings.TrimPrefix(in, "\ufeff")), &old)
		if err != nil {
			var syn *SyntaxError
			if errors.As(err, &syn) && stdErr == nil && old != nil {
				t.Fatalf("rejected valid JSON object %q: %v", in, err)
			}
			return
		}
		if trimmed != "" && (stdErr != nil || old == nil) {
			t.Fatalf("accepted %q, which encoding/json rejects (%v)", in, stdErr)
		}
		var doc map[string]any
		if err := json.Unmarshal(bytes.TrimPrefix(out, []byte("\ufeff")), &doc); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		servers, _ := doc["mcpServers"].(map[string]any)
		e, _ := servers["r2r"].(map[string]any)
		if e["command"] != "/bin/r2r-mcp" || !reflect.DeepEqual(e["args"], []any{"serve"}) {
			t.Fatalf("entry missing in %s", out)
		}
		for k, v := range old {
			if k != "mcpServers" && !reflect.DeepEqual(doc[k], v) {
				t.Fatalf("key %q changed: %v -> %v", k, v, doc[k])
			}
		}
	})
}
