package modeldouble

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultChatModel      = "gpt-4o-mini"
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultDimensions     = 1536
	DefaultMaxBodyBytes   = 32 << 20
	// maxModels bounds how many distinct model names GET /models remembers.
	maxModels = 64
)

// Options configures a Double. The zero value is usable.
type Options struct {
	// ChatModel and EmbeddingModel are listed by GET /models from the start
	// (default DefaultChatModel and DefaultEmbeddingModel).
	ChatModel      string
	EmbeddingModel string
	// Dimensions is the embedding size when a request does not ask for one
	// (default DefaultDimensions).
	Dimensions int
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes); a larger one is
	// answered 413.
	MaxBodyBytes int64
	// Logger receives one line per request (method, path, status, duration); nil discards.
	Logger io.Writer
	// Now is the clock for the "created" field (default time.Now).
	Now func() time.Time
	// EmbeddingsUpstream, when set, is the base URL (http://HOST:PORT/v1) of another
	// OpenAI-compatible server that answers every embeddings request instead of the hashed
	// bag of words; chat stays with the Double. New panics on a value that is not an http(s)
	// URL; Main checks it first.
	EmbeddingsUpstream string
}

// Double is the OpenAI-compatible model server; it is an http.Handler, safe for concurrent
// use.
type Double struct {
	opts Options
	mux  *http.ServeMux

	mu     sync.Mutex
	models map[string]bool
	logMu  sync.Mutex
}

// New returns a Double configured by opts.
func New(opts Options) *Double {
	if opts.ChatModel == "" {
		opts.ChatModel = DefaultChatModel
	}
	if opts.EmbeddingModel == "" {
		opts.EmbeddingModel = DefaultEmbeddingModel
	}
	if opts.Dimensions <= 0 {
		opts.Dimensions = DefaultDimensions
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Double{opts: opts, mux: http.NewServeMux(), models: map[string]bool{}}
	d.models[opts.ChatModel] = true
	d.models[opts.EmbeddingModel] = true
	embeddings := d.handleEmbeddings
	if opts.EmbeddingsUpstream != "" {
		u, err := parseUpstream(opts.EmbeddingsUpstream)
		if err != nil {
			panic("modeldouble.New: " + err.Error())
		}
		embeddings = d.forwardEmbeddings(u)
	}
	for _, prefix := range []string{"/v1", ""} {
		d.mux.HandleFunc("POST "+prefix+"/embeddings", embeddings)
		d.mux.HandleFunc("POST "+prefix+"/chat/completions", d.handleChat)
		d.mux.HandleFunc("GET "+prefix+"/models", d.handleModels)
	}
	return d
}

// NewServer starts a Double on a loopback httptest.Server; its base URL for OpenAI clients
// is srv.URL + "/v1". The caller closes the server.
func NewServer(opts Options) (*Double, *httptest.Server) {
	d := New(opts)
	return d, httptest.NewServer(d)
}

// ServeHTTP serves the OpenAI routes; any other path or method gets an OpenAI error body.
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	_, pattern := d.mux.Handler(r)
	switch {
	case pattern != "":
		d.mux.ServeHTTP(rec, r)
	case d.knownPath(r.URL.Path):
		writeError(rec, http.StatusMethodNotAllowed, fmt.Sprintf("Method %s is not allowed on %s", r.Method, r.URL.Path), "")
	default:
		writeError(rec, http.StatusNotFound, fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path), "")
	}
	if d.opts.Logger != nil {
		d.logMu.Lock()
		fmt.Fprintf(d.opts.Logger, "model-double: %s %s %d %s\n", r.Method, r.URL.Path, rec.status, time.Since(start).Round(time.Microsecond))
		d.logMu.Unlock()
	}
}

func (d *Double) knownPath(p string) bool {
	p = strings.TrimPrefix(p, "/v1")
	return p == "/embeddings" || p == "/chat/completions" || p == "/models"
}

// Models returns the model names GET /models lists, sorted: the configured ones and those
// requests used.
func (d *Double) Models() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.models))
	for m := range d.models {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func (d *Double) sawModel(m string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.models) < maxModels {
		d.models[m] = true
	}
}

type modelEntry struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (d *Double) handleModels(w http.ResponseWriter, _ *http.Request) {
	names := d.Models()
	data := make([]modelEntry, len(names))
	for i, n := range names {
		data[i] = modelEntry{ID: n, Object: "model", Created: 0, OwnedBy: "r2r-mcp-model-double"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// decode reads the JSON body into v, answering 400 or 413 (and returning false) when it
// cannot. Unknown keys are accepted, as OpenAI does.
func (d *Double) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body := http.MaxBytesReader(w, r.Body, d.opts.MaxBodyBytes)
	err := json.NewDecoder(body).Decode(v)
	var tooBig *http.MaxBytesError
	var wrongType *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than this server's limit of %d bytes", tooBig.Limit), "")
		return false
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "request body is empty; send a JSON object", "")
		return false
	case errors.As(err, &wrongType) && wrongType.Field != "":
		writeError(w, http.StatusBadRequest, fmt.Sprintf("'%s' has the wrong type: got a JSON %s", wrongType.Field, wrongType.Value), wrongType.Field)
		return false
	case errors.As(err, &wrongType):
		writeError(w, http.StatusBadRequest, "request body must be a JSON object, got a JSON "+wrongType.Value, "")
		return false
	case err != nil:
		writeError(w, http.StatusBadRequest, "request body is not valid JSON: "+err.Error(), "")
		return false
	}
	return true
}

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// writeError writes OpenAI's error body; param names the offending request field ("" for
// none).
func writeError(w http.ResponseWriter, status int, msg, param string) {
	e := apiError{Message: msg, Type: "invalid_request_error"}
	if param != "" {
		e.Param = &param
	}
	if status == http.StatusNotFound {
		code := "unknown_url"
		e.Code = &code
	}
	writeJSON(w, status, map[string]apiError{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusRecorder remembers the status for the log line; it passes Flush through for
// streaming.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
