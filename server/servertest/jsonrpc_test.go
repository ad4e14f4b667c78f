package servertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestValidateJSONRPC(t *testing.T) {
	tests := []struct {
		line    string
		wantErr string // "" = valid
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, ""},
		{`not json`, "not a JSON object"},
		{`{"jsonrpc":"2.0","id":1,"result":{}} {}`, "more than one JSON value"},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, `jsonrpc is "1.0"`},
		{`{"id":1,"result":{}}`, "jsonrpc is"},
		{`{"jsonrpc":"2.0","id":{},"result":{}}`, "neither a string, a number nor null"},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, "method is not a non-empty string"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, "a request carries a result"},
		{`{"jsonrpc":"2.0","result":{}}`, "neither a method nor an id"},
		{`{"jsonrpc":"2.0","id":1}`, "exactly one of result and error"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, "exactly one of result and error"},
		{`{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`, "lacks an integer code or a message"},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, "is not an integer"},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, "successful response with a null id"},
	}
	for _, tt := range tests {
		err := ValidateJSONRPC(tt.line)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want valid", tt.line, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want an error with %q", tt.line, err, tt.wantErr)
		}
	}
}

// failures is a testing.TB that collects Errorf messages instead of failing.
type failures struct {
	testing.TB
	msgs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func TestCheckJSONRPCLines(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"result":{}}`
	tests := []struct {
		name  string
		out   string
		lines []string
		fails []string // one substring per expected failure
	}{
		{"clean", ok + "\n" + ok + "\r\n", []string{ok, ok}, nil},
		{"nothing", "", nil, nil},
		{"a log line", ok + "\nlevel=INFO msg=hello\n", []string{ok, "level=INFO msg=hello"}, []string{"stdout line 2 is not JSON-RPC 2.0"}},
		{"unterminated", ok + "\n" + ok, []string{ok}, []string{"unterminated line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if lines, _ := splitLines(tt.out); !slices.Equal(lines, tt.lines) {
				t.Errorf("lines = %q, want %q", lines, tt.lines)
			}
			f := &failures{TB: t}
			checkJSONRPCLines(f, tt.out)
			if len(f.msgs) != len(tt.fails) {
				t.Fatalf("failures %q, want %d", f.msgs, len(tt.fails))
			}
			for i, want := range tt.fails {
				if !strings.Contains(f.msgs[i], want) {
					t.Errorf("failure %q lacks %q", f.msgs[i], want)
				}
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 301)
	if got := Truncate(long); got != long[:300]+"…" {
		t.Errorf("Truncate(301 bytes) = %d bytes", len(got))
	}
	if got := Truncate(long[:300]); got != long[:300] {
		t.Errorf("Truncate(300 bytes) changed the text")
	}
}
