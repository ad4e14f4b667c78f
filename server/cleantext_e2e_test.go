package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirty carries ESC, NUL, a C1 control, BiDi override and isolate, a zero-width space and
// a tag character.
const dirty = "evil\x1b[2J\x00\u009b\u202Egnp.exe\u2066\u200B\U000E0041"

// badRune is what must never reach the model.
func badRune(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || (r >= 0x7f && r <= 0x9f) ||
		(r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0xFEFF || (r >= 0xE0000 && r <= 0xE007F)
}

// badString returns the first string in a decoded JSON message holding a bad rune.
func badString(v any) string {
	switch x := v.(type) {
	case string:
		if strings.IndexFunc(x, badRune) >= 0 {
			return x
		}
	case map[string]any:
		for k, e := range x {
			if s := badString(k); s != "" {
				return s
			}
			if s := badString(e); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := badString(e); s != "" {
				return s
			}
		}
	}
	return ""
}

func checkClean(t *testing.T, what, raw string) {
	t.Helper()
	var m any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if s := badString(m); s != "" {
		t.Errorf("%s: the answer carries a control character in %.300q", what, s)
	}
}

// TestNoControlCharactersReachTheModel: R2R error bodies, R2R data and a .r2r-mcp.json
// collection name full of control, invisible and BiDi characters come out clean, and
// R2R's error text is clipped.
func TestNoControlCharactersReachTheModel(t *testing.T) {
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v3/health":
			fmt.Fprint(w, `{"results":{"message":"ok"}}`)
		case r.URL.Path == "/v3/users/me":
			fmt.Fprint(w, `{"results":{"id":"9a0c1f52-0000-4000-8000-000000000001","email":"a@b","is_superuser":false}}`)
		case r.URL.Path == "/v3/collections" && r.Method == http.MethodGet:
			fmt.Fprintf(w, `{"results":[{"id":"9a0c1f52-0000-4000-8000-000000000002","name":%s,"description":%s,"document_count":1}],"total_entries":1}`,
				jsonString(dirty), jsonString(dirty))
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"detail":{"message":%s,"error_type":"bad"}}`, jsonString(dirty+strings.Repeat("x", 5000)))
		}
	}))
	defer hostile.Close()
	proj := t.TempDir()
	if err := os.WriteFile(filepath.Join(proj, ".r2r-mcp.json"), []byte(`{"collection": `+jsonString(dirty)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := overloadConfig(t, hostile.URL)
	cfg.WorkDir, cfg.Options.Tools.CallTimeout, cfg.Options.Tools.SearchTimeout = proj, DefaultOptions().Tools.CallTimeout, DefaultOptions().Tools.SearchTimeout
	c, done := runInProcess(context.Background(), cfg)
	defer func() { c.in.Close(); <-done }()
	c.send(t, initLine)
	c.recv(t)
	calls := []string{
		`"r2r_list_collections","arguments":{}`,
		`"r2r_search","arguments":{"query":"x"}`,
		`"r2r_rag_query","arguments":{"query":"x"}`,
		`"r2r_list_documents","arguments":{}`,
		`"r2r_status","arguments":{}`,
		`"r2r_get_document","arguments":{"document_id":"9a0c1f52-0000-4000-8000-000000000003"}`,
	}
	for i, call := range calls {
		c.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%s}}`, 10+i, call))
		raw := c.recvRaw(t)
		checkClean(t, call, raw)
		if strings.Contains(raw, strings.Repeat("x", 1024)) {
			t.Errorf("%s: R2R's error text is echoed unclipped", call)
		}
	}
	c.send(t, `{"jsonrpc":"2.0","id":99,"method":"resources/read","params":{"uri":"r2r://current-project/context"}}`)
	checkClean(t, "resources/read", c.recvRaw(t))
}
