package modeldouble

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
)

// Bounds of one embeddings request.
const (
	// MaxDimensions is the largest dimensions value accepted (pgvector's vector type holds
	// at most 16,000).
	MaxDimensions = 16000
	// MaxEmbeddingFloats bounds inputs × dimensions in one reply, so that a reply's memory
	// stays bounded whatever a request asks.
	MaxEmbeddingFloats = 1 << 22
)

// Weights of the features of an embedding: a word, and a pair of neighbouring words (which
// tells "New York" from "York new" without outweighing the words themselves).
const (
	unigramWeight = 1.0
	bigramWeight  = 0.5
)

// Embed returns the embedding of text with dim dimensions (dim >= 1): a signed hashed bag of
// its terms and their bigrams with weights 1+ln(tf), L2-normalised. It is deterministic,
// every component is finite, and it is never all zero: a text with no terms (or whose
// features cancel out) gets a unit vector on a dimension chosen by hashing the raw text.
func Embed(text string, dim int) []float32 {
	return embedFeatures(terms(text), "text:"+text, dim)
}

// embedTokens embeds a token array (an input already tokenised by the client): each token
// id is a term.
func embedTokens(tokens []int64, dim int) []float32 {
	ts := make([]string, len(tokens))
	for i, t := range tokens {
		ts[i] = "#" + strconv.FormatInt(t, 10)
	}
	return embedFeatures(ts, fmt.Sprint("tokens:", tokens), dim)
}

func embedFeatures(ts []string, raw string, dim int) []float32 {
	counts := map[string]float64{}
	for i, t := range ts {
		counts["w:"+t] += unigramWeight
		if i > 0 {
			counts["b:"+ts[i-1]+" "+t] += bigramWeight
		}
	}
	v := make([]float64, dim)
	for f, c := range counts {
		idx, sign := hashFeature(f, dim)
		// Sublinear term frequency: a word repeated ten times is not ten times as important.
		v[idx] += sign * (1 + math.Log(c))
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm == 0 {
		idx, _ := hashFeature("raw:"+raw, dim)
		v[idx], norm = 1, 1
	}
	norm = math.Sqrt(norm)
	out := make([]float32, dim)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// hashFeature maps a feature to a dimension and a sign (+1 or -1); the sign keeps colliding
// features from adding up into a shared bias.
func hashFeature(f string, dim int) (int, float64) {
	h := fnv.New64a()
	h.Write([]byte(f))
	s := h.Sum64()
	sign := 1.0
	if s>>63 == 1 {
		sign = -1
	}
	return int((s & (1<<63 - 1)) % uint64(dim)), sign
}

// encodeBase64 is the "base64" encoding_format: the little-endian float32 bytes of v.
func encodeBase64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeBase64 decodes a "base64" embedding (little-endian float32), as OpenAI clients do.
func DecodeBase64(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("base64 embedding has %d bytes, not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// embeddingsRequest is the body of POST /embeddings; other keys (user, …) are ignored.
type embeddingsRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     *int            `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// embeddingInput is one input: a text, or a token array.
type embeddingInput struct {
	text   string
	tokens []int64
	isTok  bool
}

// parseInput accepts OpenAI's four input forms: "text", ["text", …], [1, 2, …] and
// [[1, 2], …]. It never guesses: anything else is an error.
func parseInput(raw json.RawMessage) ([]embeddingInput, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, fmt.Errorf("'input' is a required property")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []embeddingInput{{text: s}}, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("'input' must be a string, an array of strings, or an array of token arrays")
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("'input' must not be an empty array")
	}
	var toks []int64
	if json.Unmarshal(raw, &toks) == nil {
		return []embeddingInput{{tokens: toks, isTok: true}}, nil
	}
	out := make([]embeddingInput, len(items))
	for i, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			out[i] = embeddingInput{text: s}
			continue
		}
		var t []int64
		if err := json.Unmarshal(it, &t); err != nil || t == nil {
			return nil, fmt.Errorf("'input[%d]' must be a string or an array of integer tokens", i)
		}
		out[i] = embeddingInput{tokens: t, isTok: true}
	}
	return out, nil
}

type embeddingData struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

type embeddingsResponse struct {
	Object string          `json:"object"`
	Model  string          `json:"model"`
	Data   []embeddingData `json:"data"`
	Usage  usage           `json:"usage"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens"`
}

func (d *Double) handleEmbeddings(w http.ResponseWriter, r *http.Request) {
	var req embeddingsRequest
	if !d.decode(w, r, &req) {
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "'model' is a required property", "model")
		return
	}
	inputs, err := parseInput(req.Input)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "input")
		return
	}
	dim := d.opts.Dimensions
	if req.Dimensions != nil {
		dim = *req.Dimensions
	}
	if dim < 1 || dim > MaxDimensions {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("'dimensions' must be between 1 and %d, got %d", MaxDimensions, dim), "dimensions")
		return
	}
	if len(inputs)*dim > MaxEmbeddingFloats {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%d inputs of %d dimensions exceed this server's limit of %d floats per request; send fewer inputs", len(inputs), dim, MaxEmbeddingFloats), "input")
		return
	}
	b64 := false
	switch req.EncodingFormat {
	case "", "float":
	case "base64":
		b64 = true
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("'encoding_format' must be 'float' or 'base64', got %q", req.EncodingFormat), "encoding_format")
		return
	}
	d.sawModel(req.Model)
	resp := embeddingsResponse{Object: "list", Model: req.Model, Data: make([]embeddingData, len(inputs))}
	for i, in := range inputs {
		var v []float32
		if in.isTok {
			v = embedTokens(in.tokens, dim)
			resp.Usage.PromptTokens += len(in.tokens)
		} else {
			v = Embed(in.text, dim)
			resp.Usage.PromptTokens += len(words(in.text))
		}
		var e any = v
		if b64 {
			e = encodeBase64(v)
		}
		resp.Data[i] = embeddingData{Object: "embedding", Index: i, Embedding: e}
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	writeJSON(w, http.StatusOK, resp)
}
