package modeldouble

import (
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func TestEmbedIsDeterministicFiniteNormalisedNeverZero(t *testing.T) {
	texts := []string{
		"", " ", "!!! ... ???", "the", "the of and", "Hello, world.",
		"When the payout queue backs up, the worker sheds load.",
		"Ünïcödé wörds 日本語 テキスト", strings.Repeat("word ", 5000),
	}
	for _, dim := range []int{1, 2, 3, 512, 1536, 3072} {
		for _, text := range texts {
			v := Embed(text, dim)
			if len(v) != dim {
				t.Fatalf("Embed(%.20q, %d) has %d components", text, dim, len(v))
			}
			var norm float64
			for i, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("Embed(%.20q, %d)[%d] = %v", text, dim, i, x)
				}
				norm += float64(x) * float64(x)
			}
			if math.Abs(norm-1) > 1e-5 {
				t.Errorf("Embed(%.20q, %d) has squared norm %v, want 1", text, dim, norm)
			}
			if again := Embed(text, dim); !reflect.DeepEqual(v, again) {
				t.Errorf("Embed(%.20q, %d) differs between calls", text, dim)
			}
		}
	}
}

func TestEmbedRanksSimilarTextsCloser(t *testing.T) {
	tests := []struct{ query, near, far string }{
		{"payout queue backs up", "When the payout queue backs up, the worker sheds load and alerts on-call.", "The ledger is append-only and reconciled nightly."},
		{"How do I rotate API keys?", "API keys are rotated with the keys rotate command.", "Collections group documents for search."},
		{"documents", "A document is chunked before it is embedded.", "The weather was mild."},
	}
	for _, dim := range []int{256, 1536} {
		for _, tt := range tests {
			q := Embed(tt.query, dim)
			near, far := cosine(q, Embed(tt.near, dim)), cosine(q, Embed(tt.far, dim))
			if near <= far {
				t.Errorf("dim %d: cos(%q, near)=%.3f <= cos(far)=%.3f", dim, tt.query, near, far)
			}
		}
	}
}

// embeddingsReply decodes an embeddings reply, decoding base64 vectors too.
func embeddingsReply(t *testing.T, body []byte) (model string, vecs [][]float32, promptTokens int) {
	t.Helper()
	var resp struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []struct {
			Object    string          `json:"object"`
			Index     int             `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("reply is not JSON: %v: %s", err, body)
	}
	if resp.Object != "list" || resp.Usage.TotalTokens != resp.Usage.PromptTokens {
		t.Fatalf("bad envelope: %s", body)
	}
	for i, d := range resp.Data {
		if d.Object != "embedding" || d.Index != i {
			t.Fatalf("data[%d] has object %q index %d", i, d.Object, d.Index)
		}
		var v []float32
		var s string
		if json.Unmarshal(d.Embedding, &s) == nil {
			var err error
			if v, err = DecodeBase64(s); err != nil {
				t.Fatalf("data[%d]: %v", i, err)
			}
		} else if err := json.Unmarshal(d.Embedding, &v); err != nil {
			t.Fatalf("data[%d].embedding: %v", i, err)
		}
		vecs = append(vecs, v)
	}
	return resp.Model, vecs, resp.Usage.PromptTokens
}

func TestEmbeddingsEndpoint(t *testing.T) {
	srv := newTestServer(t, Options{Dimensions: 64})
	tests := []struct {
		name       string
		path       string
		req        map[string]any
		wantN      int
		wantDim    int
		wantTokens int
		want       []string // the texts whose Embed the vectors must equal ("" entries skipped)
	}{
		{"string", "/v1/embeddings", map[string]any{"model": "text-embedding-3-small", "input": "hello world", "dimensions": 512}, 1, 512, 2, []string{"hello world"}},
		{"list at root path", "/embeddings", map[string]any{"model": "text-embedding-3-small", "input": []string{"a b", "c"}, "dimensions": 3}, 2, 3, 3, []string{"a b", "c"}},
		{"default dimensions", "/v1/embeddings", map[string]any{"model": "m", "input": []string{"x"}}, 1, 64, 1, []string{"x"}},
		{"float format", "/v1/embeddings", map[string]any{"model": "m", "input": "x", "encoding_format": "float", "dimensions": 7}, 1, 7, 1, []string{"x"}},
		{"base64", "/v1/embeddings", map[string]any{"model": "m", "input": []string{"payout queue", ""}, "encoding_format": "base64", "dimensions": 1536}, 2, 1536, 2, []string{"payout queue", ""}},
		{"token array", "/v1/embeddings", map[string]any{"model": "m", "input": []int{15339, 1917}, "dimensions": 8}, 1, 8, 2, nil},
		{"token arrays", "/v1/embeddings", map[string]any{"model": "m", "input": [][]int{{1, 2}, {}}, "dimensions": 8}, 2, 8, 2, nil},
		{"mixed", "/v1/embeddings", map[string]any{"model": "m", "input": []any{"text", []int{3}}, "dimensions": 8}, 2, 8, 2, []string{"text", ""}},
		{"unknown keys", "/v1/embeddings", map[string]any{"model": "m", "input": "x", "user": "u", "extra_body": map[string]any{}}, 1, 64, 1, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL+tt.path, tt.req)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			model, vecs, tokens := embeddingsReply(t, body)
			if model != tt.req["model"] {
				t.Errorf("model = %q, want %q", model, tt.req["model"])
			}
			if len(vecs) != tt.wantN || tokens != tt.wantTokens {
				t.Fatalf("got %d vectors and %d tokens, want %d and %d", len(vecs), tokens, tt.wantN, tt.wantTokens)
			}
			for i, v := range vecs {
				if len(v) != tt.wantDim {
					t.Fatalf("vector %d has %d dimensions, want %d", i, len(v), tt.wantDim)
				}
				var norm float64
				for _, x := range v {
					norm += float64(x) * float64(x)
				}
				if math.Abs(norm-1) > 1e-5 {
					t.Errorf("vector %d has squared norm %v", i, norm)
				}
				if i < len(tt.want) && tt.want[i] != "" && !reflect.DeepEqual(v, Embed(tt.want[i], tt.wantDim)) {
					t.Errorf("vector %d is not Embed(%q)", i, tt.want[i])
				}
			}
		})
	}
}

func TestEmbeddingsBase64MatchesFloat(t *testing.T) {
	srv := newTestServer(t, Options{})
	for _, dim := range []int{1, 5, 1536} {
		req := map[string]any{"model": "text-embedding-3-small", "input": []string{"The ledger is append-only.", "?!"}, "dimensions": dim}
		_, fb := post(t, srv.URL+"/v1/embeddings", req)
		req["encoding_format"] = "base64"
		_, bb := post(t, srv.URL+"/v1/embeddings", req)
		_, floats, _ := embeddingsReply(t, fb)
		_, decoded, _ := embeddingsReply(t, bb)
		if !reflect.DeepEqual(floats, decoded) {
			t.Errorf("dim %d: base64 vectors differ from float vectors", dim)
		}
	}
}

func TestDecodeBase64Errors(t *testing.T) {
	for _, s := range []string{"***", "AAA="} {
		if _, err := DecodeBase64(s); err == nil {
			t.Errorf("DecodeBase64(%q) succeeded", s)
		}
	}
}

// checkError asserts an OpenAI error body.
func checkError(t *testing.T, status, wantStatus int, body []byte, wantMsg string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, body)
	}
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, wantMsg) {
		t.Errorf("error = %+v, want type invalid_request_error and a message containing %q", e.Error, wantMsg)
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	srv := newTestServer(t, Options{MaxBodyBytes: 4096})
	tests := []struct {
		name    string
		body    any
		status  int
		wantMsg string
	}{
		{"not JSON", "{", 400, "not valid JSON"},
		{"empty body", "", 400, "empty"},
		{"no model", map[string]any{"input": "x"}, 400, "'model'"},
		{"no input", map[string]any{"model": "m"}, 400, "'input'"},
		{"null input", map[string]any{"model": "m", "input": nil}, 400, "'input'"},
		{"empty list", map[string]any{"model": "m", "input": []string{}}, 400, "empty"},
		{"object input", map[string]any{"model": "m", "input": map[string]any{"a": 1}}, 400, "'input'"},
		{"number input", map[string]any{"model": "m", "input": 3}, 400, "'input'"},
		{"float tokens", map[string]any{"model": "m", "input": []any{1.5}}, 400, "'input[0]'"},
		{"object in list", map[string]any{"model": "m", "input": []any{"a", map[string]any{}}}, 400, "'input[1]'"},
		{"zero dimensions", map[string]any{"model": "m", "input": "x", "dimensions": 0}, 400, "'dimensions'"},
		{"negative dimensions", map[string]any{"model": "m", "input": "x", "dimensions": -3}, 400, "'dimensions'"},
		{"too many dimensions", map[string]any{"model": "m", "input": "x", "dimensions": MaxDimensions + 1}, 400, "'dimensions'"},
		{"too many floats", map[string]any{"model": "m", "input": make([]string, 300), "dimensions": MaxDimensions}, 400, "limit"},
		{"bad encoding", map[string]any{"model": "m", "input": "x", "encoding_format": "hex"}, 400, "'encoding_format'"},
		{"too large", map[string]any{"model": "m", "input": strings.Repeat("x", 5000)}, 413, "limit of 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := post(t, srv.URL+"/v1/embeddings", tt.body)
			checkError(t, status, tt.status, body, tt.wantMsg)
		})
	}
}
