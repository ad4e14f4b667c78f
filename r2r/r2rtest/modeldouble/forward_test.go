package modeldouble

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestEmbeddingsUpstreamForwards(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"upstream":true}`)
	}))
	defer up.Close()
	srv := newTestServer(t, Options{EmbeddingsUpstream: up.URL + "/v1/"})
	for _, path := range []string{"/v1/embeddings", "/embeddings"} {
		status, body := post(t, srv.URL+path, map[string]any{"model": "m", "input": "hi"})
		if status != http.StatusTeapot || string(body) != `{"upstream":true}` {
			t.Errorf("POST %s: status %d body %s, want the upstream's 418 reply", path, status, body)
		}
	}
	want := `POST /v1/embeddings {"input":"hi","model":"m"}`
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Errorf("upstream saw %q, want twice %q", seen, want)
	}
	status, body := post(t, srv.URL+"/v1/chat/completions", map[string]any{"model": "c", "messages": []map[string]string{{"role": "user", "content": "hello"}}})
	if status != http.StatusOK || !strings.Contains(string(body), "chat.completion") {
		t.Errorf("chat: status %d body %s, want the double's own answer", status, body)
	}
	if len(seen) != 2 {
		t.Errorf("chat reached the upstream: %q", seen)
	}
}

func TestEmbeddingsUpstreamDown(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	base := up.URL
	up.Close()
	srv := newTestServer(t, Options{EmbeddingsUpstream: base + "/v1"})
	status, body := post(t, srv.URL+"/v1/embeddings", map[string]any{"model": "m", "input": "hi"})
	var e struct {
		Error apiError `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusBadGateway || !strings.Contains(e.Error.Message, "embeddings upstream did not answer") {
		t.Errorf("status %d body %s, want 502 with an OpenAI error body", status, body)
	}
}

func TestParseUpstream(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"http://127.0.0.1:8080/v1", true},
		{"https://h/v1/", true},
		{"ftp://h/v1", false},
		{"127.0.0.1:8080", false},
		{"http:///v1", false},
		{"http://h/v1?x=1", false},
	}
	for _, tt := range tests {
		if _, err := parseUpstream(tt.in); (err == nil) != tt.ok {
			t.Errorf("parseUpstream(%q) error %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}
