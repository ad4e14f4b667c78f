package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewArgsRejectsUnknownAndNonObjects(t *testing.T) {
	valid := []string{"limit", "query"}
	tests := []struct {
		name    string
		raw     any
		wantErr string
	}{
		{"nil is empty", nil, ""},
		{"known keys", map[string]any{"query": "x", "limit": 3.0}, ""},
		{"raw json", json.RawMessage(`{"query":"x"}`), ""},
		{"raw null is empty", json.RawMessage(`null`), ""},
		{"unknown key", map[string]any{"query": "x", "top_k": 5.0}, `unknown argument "top_k"; valid arguments: limit, query`},
		{"two unknown keys", map[string]any{"b": 1.0, "a": 1.0}, `unknown arguments "a", "b"`},
		{"array", []any{1.0}, "arguments must be a JSON object, got an array"},
		{"raw array", json.RawMessage(`[1]`), "arguments must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newArgs(tt.raw, valid)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestArgsInt(t *testing.T) {
	tests := []struct {
		name    string
		args    Args
		want    int
		wantErr string
	}{
		{"absent gives default", Args{}, 10, ""},
		{"null gives default", Args{"limit": nil}, 10, ""},
		{"float64 integer", Args{"limit": 3.0}, 3, ""},
		{"zero is a value", Args{"limit": 0.0}, 0, ""},
		{"upper bound", Args{"limit": 100.0}, 100, ""},
		{"fraction rejected", Args{"limit": 3.7}, 0, "must be an integer, got 3.7"},
		{"below range", Args{"limit": -1.0}, 0, "must be between 0 and 100, got -1"},
		{"above range", Args{"limit": 101.0}, 0, "must be between 0 and 100, got 101"},
		{"string rejected", Args{"limit": "10"}, 0, "must be an integer, got a string"},
		{"bool rejected", Args{"limit": true}, 0, "must be an integer, got a boolean"},
		{"json.Number", Args{"limit": json.Number("7")}, 7, ""},
		{"json.Number fraction", Args{"limit": json.Number("7.5")}, 0, "must be an integer"},
		{"go int (direct call)", Args{"limit": 42}, 42, ""},
		{"huge", Args{"limit": 1e300}, 0, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.args.Int("limit", 0, 100, 10)
			checkArg(t, err, tt.wantErr)
			if err == nil && got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestArgsStrings(t *testing.T) {
	long := strings.Repeat("é", 11) // 11 characters, 22 bytes
	tests := []struct {
		name    string
		args    Args
		req     bool
		want    string
		wantOK  bool
		wantErr string
	}{
		{"required present", Args{"q": "hello"}, true, "hello", true, ""},
		{"required missing", Args{}, true, "", false, `argument "q" is required`},
		{"required null", Args{"q": nil}, true, "", false, "is required"},
		{"required blank", Args{"q": "   "}, true, "", false, "must not be empty"},
		{"required too long counts characters", Args{"q": long}, true, "", false, "is 11 characters long; the limit is 10"},
		{"exactly at limit", Args{"q": strings.Repeat("é", 10)}, true, strings.Repeat("é", 10), true, ""},
		{"wrong type", Args{"q": 5.0}, true, "", false, "must be a string, got a number"},
		{"optional absent", Args{}, false, "", false, ""},
		{"optional empty is absent", Args{"q": ""}, false, "", false, ""},
		{"optional present", Args{"q": "x"}, false, "x", true, ""},
		{"optional too long", Args{"q": long}, false, "", false, "the limit is 10"},
		{"invalid utf8", Args{"q": "a\xffb"}, false, "", false, "valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			var ok bool
			var err error
			if tt.req {
				got, err = tt.args.ReqString("q", 10)
				ok = err == nil
			} else {
				got, ok, err = tt.args.OptString("q", 10)
			}
			checkArg(t, err, tt.wantErr)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("got (%q, %v), want (%q, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestArgsBoolNumberEnumObjectUUID(t *testing.T) {
	t.Run("false is a value", func(t *testing.T) {
		b, err := Args{"x": false}.Bool("x", true)
		if err != nil || b {
			t.Fatalf("got %v, %v", b, err)
		}
	})
	t.Run("bool default", func(t *testing.T) {
		b, err := Args{}.Bool("x", true)
		if err != nil || !b {
			t.Fatalf("got %v, %v", b, err)
		}
	})
	t.Run("string is not a bool", func(t *testing.T) {
		_, err := Args{"x": "true"}.Bool("x", true)
		checkArg(t, err, "must be a boolean, got a string")
	})
	t.Run("number zero is a value", func(t *testing.T) {
		f, err := Args{"t": 0.0}.Number("t", 0, 2, 0.7)
		if err != nil || f != 0 {
			t.Fatalf("got %v, %v", f, err)
		}
	})
	t.Run("number out of range", func(t *testing.T) {
		_, err := Args{"t": 2.5}.Number("t", 0, 2, 0.7)
		checkArg(t, err, "must be between 0 and 2, got 2.5")
	})
	t.Run("number wrong type", func(t *testing.T) {
		_, err := Args{"t": "1"}.Number("t", 0, 2, 0.7)
		checkArg(t, err, "must be a number, got a string")
	})
	t.Run("enum", func(t *testing.T) {
		_, err := Args{"m": "turbo"}.Enum("m", []string{"basic", "advanced"}, "advanced")
		checkArg(t, err, `must be one of basic, advanced, got "turbo"`)
	})
	t.Run("object size limit", func(t *testing.T) {
		_, _, err := Args{"o": map[string]any{"k": strings.Repeat("x", 100)}}.Object("o", 50)
		checkArg(t, err, "bytes when serialized; the limit is 50 bytes")
	})
	t.Run("object wrong type", func(t *testing.T) {
		_, _, err := Args{"o": []any{}}.Object("o", 50)
		checkArg(t, err, "must be an object, got an array")
	})
	t.Run("uuid normalised", func(t *testing.T) {
		id, err := Args{"id": "9FBE403B-C11C-5AAE-8ADE-EF22980C3AD1"}.UUID("id", "")
		if err != nil || id != "9fbe403b-c11c-5aae-8ade-ef22980c3ad1" {
			t.Fatalf("got %q, %v", id, err)
		}
	})
	t.Run("uuid rejected with hint", func(t *testing.T) {
		_, err := Args{"id": "1a2b3c4d"}.UUID("id", "run r2r_list_documents")
		checkArg(t, err, "must be a UUID")
		checkArg(t, err, "run r2r_list_documents")
	})
	t.Run("uuid without hyphens rejected", func(t *testing.T) {
		_, err := Args{"id": "9fbe403bc11c5aae8adeef22980c3ad1"}.UUID("id", "")
		checkArg(t, err, "must be a UUID")
	})
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
