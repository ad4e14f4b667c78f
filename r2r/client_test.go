package r2r

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestNormalizeBaseURL(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "http://localhost:7272", want: "http://localhost:7272"},
		{in: "http://localhost:7272/", want: "http://localhost:7272"},
		{in: "http://localhost:7272/v3", want: "http://localhost:7272"},
		{in: "http://localhost:7272/v3/", want: "http://localhost:7272"},
		{in: " https://r2r.example.com//v3// ", want: "https://r2r.example.com"},
		{in: "https://example.com/r2r/v3", want: "https://example.com/r2r"},
		{in: "https://example.com/r2r/", want: "https://example.com/r2r"},
		{in: "http://[::1]:7272/v3", want: "http://[::1]:7272"},
		{in: "https://example.com/v3x", want: "https://example.com/v3x"},
		{in: "HTTPS://R2R.Example.COM:7272/Team/v3", want: "https://r2r.example.com:7272/Team"},
		{in: "", wantErr: true},
		{in: "localhost:7272", wantErr: true},
		{in: "ftp://host", wantErr: true},
		{in: "http://", wantErr: true},
		{in: "http://user:pw@host:7272", wantErr: true},
		{in: "http://host:7272/?x=1", wantErr: true},
		{in: "http://host:7272/#frag", wantErr: true},
		{in: "http://host:7272/%zz", wantErr: true},
	}
	for _, tt := range tests {
		got, err := NormalizeBaseURL(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("NormalizeBaseURL(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) || strings.Contains(err.Error(), "pw") {
				t.Errorf("NormalizeBaseURL(%q) error %q", tt.in, err)
			}
			if _, nerr := New(Options{BaseURL: tt.in}); nerr == nil {
				t.Errorf("New accepted %q", tt.in)
			}
		}
	}
}

func TestCredentials(t *testing.T) {
	const secret = "key_abc.def-very-secret"
	tests := []struct {
		cr         Credentials
		header     string
		value      string
		identityPx string
	}{
		{APIKey(secret), "X-Api-Key", secret, "apikey:"},
		{Bearer(secret), "Authorization", "Bearer " + secret, "bearer:"},
		{Anonymous(), "", "", "anonymous"},
	}
	for _, tt := range tests {
		h := http.Header{}
		if err := tt.cr.Apply(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		if tt.header == "" && len(h) != 0 {
			t.Errorf("%v set headers %v", tt.cr, h)
		}
		if tt.header != "" && h.Get(tt.header) != tt.value {
			t.Errorf("%v: %s = %q", tt.cr, tt.header, h.Get(tt.header))
		}
		id := tt.cr.Identity()
		if !strings.HasPrefix(id, tt.identityPx) || strings.Contains(id, secret) || id != tt.cr.Identity() {
			t.Errorf("Identity() = %q", id)
		}
		for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
			if s := fmt.Sprintf(f, tt.cr); strings.Contains(s, secret) {
				t.Errorf("%s leaks the secret: %q", f, s)
			}
		}
	}
	if APIKey("a").Identity() == APIKey("b").Identity() || APIKey("a").Identity() != "apikey:"+Fingerprint("a") {
		t.Error("identities of different keys must differ and be the fingerprint")
	}
	for _, cr := range []Credentials{APIKey(""), Bearer("")} {
		if err := cr.Apply(t.Context(), http.Header{}); err == nil {
			t.Errorf("%v: empty secret accepted", cr)
		}
	}
}

func TestEmptyCredentialFailsBeforeSending(t *testing.T) {
	var hits atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }, Options{Credentials: APIKey("")})
	_, err := c.Me(t.Context())
	if err == nil || !strings.Contains(err.Error(), "applying credentials") || !errors.Is(err, ErrCredentials) ||
		errors.Is(err, ErrUnavailable) || !errors.Is(err.(*Error).Err, errEmptySecret) {
		t.Fatalf("err = %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("request sent with unusable credentials")
	}
}

// recorded is what a test handler saw of one request.
type recorded struct {
	Method, Path, RawQuery, ContentType, UA, APIKey, Auth string
	Query                                                 map[string][]string
	Body                                                  []byte
}

// recorder answers every request with status/body and keeps what it received.
type recorder struct {
	mu     sync.Mutex
	reqs   []recorded
	status int
	header http.Header
	body   string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery,
		Query: r.URL.Query(), ContentType: r.Header.Get("Content-Type"), UA: r.Header.Get("User-Agent"),
		APIKey: r.Header.Get("X-API-Key"), Auth: r.Header.Get("Authorization"), Body: b})
	status, body := rec.status, rec.body
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	rec.mu.Unlock()
	if status == 0 {
		status = 200
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (rec *recorder) last(t *testing.T) recorded {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("no request recorded")
	}
	return rec.reqs[len(rec.reqs)-1]
}

// TestRequestEncoding checks what each method puts on the wire (method, path, query,
// content type, body) and that the user agent and credentials are always sent.
func TestRequestEncoding(t *testing.T) {
	ptrI := func(i int) *int { return &i }
	ptrB := func(b bool) *bool { return &b }
	ptrF := func(f float64) *float64 { return &f }
	tests := []struct {
		name      string
		call      func(ctx context.Context, c *Client) error
		method    string
		path      string
		query     string
		ctype     string
		body      string
		noCreds   bool
		respBody  string
		checkResp func(t *testing.T, c *Client)
	}{
		{name: "list documents all params", method: "GET", path: "/v3/documents", query: "ids=a&ids=b&limit=5&offset=10",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListDocuments(ctx, ListParams{IDs: []string{"a", "b"}, Offset: 10, Limit: 5})
				return err
			}},
		{name: "list documents no params", method: "GET", path: "/v3/documents", query: "",
			call: func(ctx context.Context, c *Client) error { _, err := c.ListDocuments(ctx, ListParams{}); return err }},
		{name: "chunks ignore ids", method: "GET", path: "/v3/documents/d%201/chunks", query: "limit=2",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListDocumentChunks(ctx, "d 1", ListParams{IDs: []string{"x"}, Limit: 2})
				return err
			}},
		{name: "collection by name escapes", method: "GET", path: "/v3/collections/name/claude-code-a%2Fb%20c",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.GetCollectionByName(ctx, "claude-code-a/b c")
				return err
			}},
		{name: "login form", method: "POST", path: "/v3/users/login", ctype: "application/x-www-form-urlencoded",
			body: "password=p%26w%3Dd&username=a%40example.com", noCreds: true,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Login(ctx, "a@example.com", "p&w=d")
				return err
			}},
		{name: "refresh token json string", method: "POST", path: "/v3/users/refresh-token", ctype: "application/json",
			body: `"eyJ.refresh"`, noCreds: true,
			call: func(ctx context.Context, c *Client) error { _, err := c.RefreshToken(ctx, "eyJ.refresh"); return err }},
		{name: "health", method: "GET", path: "/v3/health", noCreds: true,
			call: func(ctx context.Context, c *Client) error { return c.Health(ctx) }},
		{name: "create api key", method: "POST", path: "/v3/users/u1/api-keys", ctype: "application/json",
			body: `{"name":"laptop"}`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.CreateAPIKey(ctx, "u1", "laptop", "")
				return err
			}},
		{name: "delete api key", method: "DELETE", path: "/v3/users/u1/api-keys/k1",
			call: func(ctx context.Context, c *Client) error { return c.DeleteAPIKey(ctx, "u1", "k1") }},
		{name: "patch metadata array", method: "PATCH", path: "/v3/documents/d1/metadata", ctype: "application/json",
			body: `[{"a":1},{"b":"x"}]`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.PatchDocumentMetadata(ctx, "d1", []map[string]any{{"a": 1}, {"b": "x"}})
				return err
			}},
		{name: "patch metadata nil", method: "PATCH", path: "/v3/documents/d1/metadata", ctype: "application/json", body: `[]`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.PatchDocumentMetadata(ctx, "d1", nil)
				return err
			}},
		{name: "create collection", method: "POST", path: "/v3/collections", ctype: "application/json",
			body: `{"name":"n","description":"d"}`,
			call: func(ctx context.Context, c *Client) error { _, err := c.CreateCollection(ctx, "n", "d"); return err }},
		{name: "create collection no description", method: "POST", path: "/v3/collections", ctype: "application/json",
			body: `{"name":"n"}`,
			call: func(ctx context.Context, c *Client) error { _, err := c.CreateCollection(ctx, "n", ""); return err }},
		{name: "add document", method: "POST", path: "/v3/collections/c1/documents/d1",
			call: func(ctx context.Context, c *Client) error { return c.AddDocumentToCollection(ctx, "c1", "d1") }},
		{name: "remove document", method: "DELETE", path: "/v3/collections/c1/documents/d1",
			call: func(ctx context.Context, c *Client) error { return c.RemoveDocumentFromCollection(ctx, "c1", "d1") }},
		{name: "collection documents", method: "GET", path: "/v3/collections/c1/documents", query: "offset=3",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListCollectionDocuments(ctx, "c1", ListParams{Offset: 3})
				return err
			}},
		{name: "list collections", method: "GET", path: "/v3/collections", query: "ids=c1",
			call: func(ctx context.Context, c *Client) error {
				_, err := c.ListCollections(ctx, ListParams{IDs: []string{"c1"}})
				return err
			}},
		{name: "search sends only set fields", method: "POST", path: "/v3/retrieval/search", ctype: "application/json",
			body: `{"query":"q","search_mode":"custom","search_settings":{"use_semantic_search":true,"use_fulltext_search":false,` +
				`"filters":{"title":{"$ne":"x"}},"limit":3,"hybrid_settings":{"semantic_weight":5}}}`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Search(ctx, SearchRequest{Query: "q", SearchMode: SearchModeCustom, SearchSettings: &SearchSettings{
					UseSemanticSearch: ptrB(true), UseFulltextSearch: ptrB(false), Limit: ptrI(3),
					Filters:        map[string]any{"title": map[string]any{"$ne": "x"}},
					HybridSettings: &HybridSettings{SemanticWeight: ptrF(5)},
				}})
				return err
			}},
		{name: "search minimal", method: "POST", path: "/v3/retrieval/search", ctype: "application/json", body: `{"query":"q"}`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.Search(ctx, SearchRequest{Query: "q"})
				return err
			}},
		{name: "rag", method: "POST", path: "/v3/retrieval/rag", ctype: "application/json",
			body: `{"query":"why","rag_generation_config":{"temperature":0.7,"max_tokens_to_sample":500}}`,
			call: func(ctx context.Context, c *Client) error {
				_, err := c.RAG(ctx, RAGRequest{Query: "why", RAGGenerationConfig: &GenerationConfig{
					Temperature: ptrF(0.7), MaxTokensToSample: ptrI(500)}})
				return err
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{body: `{"results":{}}`}
			if strings.HasPrefix(tt.name, "list") || strings.HasPrefix(tt.name, "chunks") || strings.HasPrefix(tt.name, "collection documents") {
				rec.body = `{"results":[],"total_entries":0}`
			}
			c := newTestClient(t, rec.ServeHTTP, Options{Credentials: APIKey("k.secret"), UserAgent: "r2r-mcp/1.2.3"})
			if err := tt.call(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			got := rec.last(t)
			if got.Method != tt.method || got.Path != tt.path || got.RawQuery != tt.query || got.ContentType != tt.ctype {
				t.Fatalf("got %s %s ?%s (%s); want %s %s ?%s (%s)", got.Method, got.Path, got.RawQuery, got.ContentType,
					tt.method, tt.path, tt.query, tt.ctype)
			}
			if string(got.Body) != tt.body {
				t.Fatalf("body = %s\nwant   %s", got.Body, tt.body)
			}
			if got.UA != "r2r-mcp/1.2.3" {
				t.Fatalf("User-Agent = %q", got.UA)
			}
			wantKey := "k.secret"
			if tt.noCreds {
				wantKey = ""
			}
			if got.APIKey != wantKey || got.Auth != "" {
				t.Fatalf("X-API-Key = %q Authorization = %q; want key %q", got.APIKey, got.Auth, wantKey)
			}
		})
	}
}

func TestInvalidInputsSendNothing(t *testing.T) {
	var hits atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }, Options{})
	ctx := t.Context()
	streamOn := true
	calls := map[string]func() error{
		"empty doc id":    func() error { _, err := c.GetDocument(ctx, " "); return err },
		"empty user id":   func() error { _, err := c.ListAPIKeys(ctx, ""); return err },
		"empty key id":    func() error { return c.DeleteAPIKey(ctx, "u", "") },
		"empty query":     func() error { _, err := c.Search(ctx, SearchRequest{}); return err },
		"empty rag query": func() error { _, err := c.RAG(ctx, RAGRequest{Query: " "}); return err },
		"rag stream": func() error {
			_, err := c.RAG(ctx, RAGRequest{Query: "q", RAGGenerationConfig: &GenerationConfig{Stream: &streamOn}})
			return err
		},
		"no doc input": func() error { _, err := c.CreateDocument(ctx, DocumentCreate{}); return err },
		"both doc inputs": func() error {
			_, err := c.CreateDocument(ctx, DocumentCreate{FileName: "a.txt", File: []byte("x"), RawText: "y"})
			return err
		},
		"file without name": func() error { _, err := c.CreateDocument(ctx, DocumentCreate{File: []byte("x")}); return err },
		"bad metadata": func() error {
			_, err := c.CreateDocument(ctx, DocumentCreate{RawText: "x", Metadata: map[string]any{"f": func() {}}})
			return err
		},
		"empty coll name":   func() error { _, err := c.CreateCollection(ctx, "", ""); return err },
		"empty coll id":     func() error { return c.AddDocumentToCollection(ctx, "", "d") },
		"empty doc in coll": func() error { return c.RemoveDocumentFromCollection(ctx, "c", "") },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", name, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests sent for invalid input", hits.Load())
	}
}

func TestEncodeDocumentCreate(t *testing.T) {
	f := false
	tests := []struct {
		name     string
		in       DocumentCreate
		wantFile string // file name; "" = raw_text
		want     map[string]string
	}{
		{name: "file with everything", in: DocumentCreate{
			FileName: `docs/naïve "q".md`, File: []byte("# Title\n\x00binary"), ID: "7f0c", Metadata: map[string]any{"path": "docs/a.md", "n": 2},
			CollectionIDs: []string{"c1", "c2"}, IngestionMode: "fast", IngestionConfig: map[string]any{"chunk_size": 512},
			RunWithOrchestration: &f,
		}, wantFile: `docs/naïve "q".md`, want: map[string]string{
			"id": "7f0c", "metadata": `{"n":2,"path":"docs/a.md"}`, "collection_ids": `["c1","c2"]`,
			"ingestion_mode": "fast", "ingestion_config": `{"chunk_size":512}`, "run_with_orchestration": "false",
		}},
		{name: "raw text only", in: DocumentCreate{RawText: "hello\nworld"},
			want: map[string]string{"raw_text": "hello\nworld"}},
		{name: "empty file", in: DocumentCreate{FileName: "empty.txt"}, wantFile: "empty.txt", want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ctype, err := encodeDocumentCreate(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			mt, params, err := mime.ParseMediaType(ctype)
			if err != nil || mt != "multipart/form-data" {
				t.Fatalf("content type %q: %v", ctype, err)
			}
			r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
			fields := map[string]string{}
			var gotFile string
			var gotBytes []byte
			for {
				p, err := r.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(p)
				if p.FormName() == "file" {
					gotFile, gotBytes = p.FileName(), b
					if ct := p.Header.Get("Content-Type"); ct != "application/octet-stream" {
						t.Errorf("file part Content-Type = %q", ct)
					}
					continue
				}
				if _, dup := fields[p.FormName()]; dup {
					t.Errorf("field %s sent twice", p.FormName())
				}
				fields[p.FormName()] = string(b)
			}
			// multipart.Part.FileName applies filepath.Base; compare the raw header instead.
			if tt.wantFile != "" {
				_, dp, _ := mime.ParseMediaType(partDisposition(t, body, params["boundary"]))
				if dp["filename"] != tt.wantFile || gotFile == "" {
					t.Errorf("filename = %q (base %q), want %q", dp["filename"], gotFile, tt.wantFile)
				}
				if !bytes.Equal(gotBytes, tt.in.File) {
					t.Errorf("file bytes = %q", gotBytes)
				}
			} else if gotFile != "" {
				t.Errorf("unexpected file part %q", gotFile)
			}
			if fmt.Sprint(fields) != fmt.Sprint(tt.want) {
				t.Errorf("fields = %v\nwant     %v", fields, tt.want)
			}
		})
	}
}

func partDisposition(t *testing.T, body []byte, boundary string) string {
	t.Helper()
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	p, err := r.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	return p.Header.Get("Content-Disposition")
}

// refreshingCreds is a Refresher whose token changes on every Refresh.
type refreshingCreds struct {
	mu       sync.Mutex
	token    string
	n        int
	failWith error
}

func (r *refreshingCreds) Apply(_ context.Context, h http.Header) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	h.Set("Authorization", "Bearer "+r.token)
	return nil
}
func (r *refreshingCreds) Identity() string { return "test" }
func (r *refreshingCreds) Refresh(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.failWith != nil {
		return r.failWith
	}
	r.token = fmt.Sprintf("tok-%d", r.n)
	return nil
}

func TestRefreshOn401(t *testing.T) {
	// The server accepts only "tok-1"; "expired" gets a 401 once, then the refreshed token works.
	var bodies []string
	var mu sync.Mutex
	handler := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			w.WriteHeader(401)
			io.WriteString(w, `{"message":"Invalid token or API key","error_type":"R2RException"}`)
			return
		}
		io.WriteString(w, `{"results":{"chunk_search_results":[],"graph_search_results":[]}}`)
	}
	reset := func() { mu.Lock(); bodies = nil; mu.Unlock() }
	t.Run("refresh then replay", func(t *testing.T) {
		reset()
		cr := &refreshingCreds{token: "expired"}
		c := newTestClient(t, handler, Options{Credentials: cr})
		if _, err := c.Search(t.Context(), SearchRequest{Query: "replay me"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if cr.n != 1 || len(bodies) != 2 || bodies[0] != bodies[1] || bodies[1] != `{"query":"replay me"}` {
			t.Fatalf("refreshes=%d bodies=%q", cr.n, bodies)
		}
	})
	t.Run("still 401 after refresh", func(t *testing.T) {
		reset()
		cr := &refreshingCreds{token: "expired", n: 5} // refresh yields tok-6, still rejected
		c := newTestClient(t, handler, Options{Credentials: cr})
		_, err := c.Search(t.Context(), SearchRequest{Query: "q"})
		mu.Lock()
		defer mu.Unlock()
		if !errors.Is(err, ErrUnauthorized) || cr.n != 6 || len(bodies) != 2 {
			t.Fatalf("err=%v refreshes=%d requests=%d", err, cr.n-5, len(bodies))
		}
	})
	t.Run("refresh fails", func(t *testing.T) {
		reset()
		cr := &refreshingCreds{token: "expired", failWith: errors.New("refresh token invalidated")}
		c := newTestClient(t, handler, Options{Credentials: cr})
		_, err := c.Me(t.Context())
		mu.Lock()
		defer mu.Unlock()
		if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != 401 || e.Message != "Invalid token or API key" || len(bodies) != 1 {
			t.Fatalf("err=%v requests=%d", err, len(bodies))
		}
	})
	t.Run("refresh cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cr := &refreshingCreds{token: "expired", failWith: context.Canceled}
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			cancel()
			w.WriteHeader(401)
		}, Options{Credentials: cr})
		if _, err := c.Me(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no refresh for login or non-401", func(t *testing.T) {
		cr := &refreshingCreds{token: "expired"}
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v3/users/login" {
				w.WriteHeader(401)
				io.WriteString(w, `{"message":"Incorrect email or password"}`)
				return
			}
			w.WriteHeader(403)
		}, Options{Credentials: cr})
		if _, err := c.Login(t.Context(), "a@b.c", "wrong"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("login err = %v", err)
		}
		if _, err := c.Me(t.Context()); !errors.Is(err, ErrForbidden) {
			t.Fatalf("me err = %v", err)
		}
		if cr.n != 0 {
			t.Fatalf("refreshed %d times", cr.n)
		}
	})
}

func TestMiddlewareChain(t *testing.T) {
	var order []string
	var mu sync.Mutex
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, call *Call) (*Response, error) {
				mu.Lock()
				order = append(order, fmt.Sprintf("%s>%s idem=%v", name, call.Op, call.Idempotent))
				mu.Unlock()
				return next(ctx, call)
			}
		}
	}
	// A retry-like middleware: replays once on a retryable *Error.
	retryOnce := func(next Handler) Handler {
		return func(ctx context.Context, call *Call) (*Response, error) {
			resp, err := next(ctx, call)
			if e, ok := errors.AsType[*Error](err); ok && e.Retryable() && call.Idempotent {
				return next(ctx, call)
			}
			return resp, err
		}
	}
	var n atomic.Int32
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(503)
			return
		}
		io.WriteString(w, `{"results":{"id":"u1","email":"a@b.c"}}`)
	}, Options{Middleware: []Middleware{mw("outer"), nil, mw("inner"), retryOnce}})
	u, err := c.Me(t.Context())
	if err != nil || u.ID != "u1" {
		t.Fatalf("Me = %+v, %v", u, err)
	}
	want := []string{"outer>get current user idem=true", "inner>get current user idem=true"}
	if fmt.Sprint(order) != fmt.Sprint(want) || n.Load() != 2 {
		t.Fatalf("order = %v, requests = %d", order, n.Load())
	}
	// WithCredentials shares the chain.
	order = nil
	if _, err := c.WithCredentials(APIKey("k")).Me(t.Context()); err != nil || len(order) != 2 {
		t.Fatalf("copy: order=%v err=%v", order, err)
	}
}

func TestWithCredentials(t *testing.T) {
	rec := &recorder{body: `{"results":{"id":"u"}}`}
	c := newTestClient(t, rec.ServeHTTP, Options{})
	if c.Identity() != "anonymous" || c.Credentials().Identity() != "anonymous" {
		t.Fatalf("default identity %q", c.Identity())
	}
	k := c.WithCredentials(APIKey("key-1"))
	b := k.WithCredentials(nil)
	for _, tc := range []struct {
		c      *Client
		apiKey string
	}{{k, "key-1"}, {c, ""}, {b, ""}} {
		if _, err := tc.c.Me(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := rec.last(t).APIKey; got != tc.apiKey {
			t.Fatalf("X-API-Key = %q, want %q", got, tc.apiKey)
		}
	}
	if k.BaseURL() != c.BaseURL() || k.Identity() != APIKey("key-1").Identity() || b.Identity() != "anonymous" {
		t.Fatal("copy must keep the base URL and report its own identity")
	}
}

func TestRedirectPolicy(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("X-API-Key"))
		io.WriteString(w, `{"results":{"id":"evil"}}`)
	}))
	defer other.Close()
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/users/me":
			http.Redirect(w, r, other.URL+"/v3/users/me", http.StatusTemporaryRedirect)
		case "/v3/collections/":
			http.Redirect(w, r, "/v3/collections", http.StatusTemporaryRedirect)
		default:
			io.WriteString(w, `{"results":{"id":"c1","name":"n"}}`)
		}
	}, Options{Credentials: APIKey("secret-key")})
	_, err := c.Me(t.Context())
	if e, ok := errors.AsType[*Error](err); !ok || e.StatusCode != 307 {
		t.Fatalf("cross-host redirect: err = %v", err)
	}
	if leaked.Load() != nil {
		t.Fatal("credentials were sent to another host")
	}
	// Same-host redirects are followed.
	if err := c.results(t.Context(), &Call{Op: "x", Method: "GET", Path: "/v3/collections/"}, nil); err != nil {
		t.Fatalf("same-host redirect: %v", err)
	}
}

func TestDownloadDocument(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789"), 100)
	tests := []struct {
		disposition string
		wantName    string
	}{
		{`inline; filename*=UTF-8''na%C3%AFve%20notes.md`, "naïve notes.md"},
		{`attachment; filename="plain.txt"`, "plain.txt"},
		{`inline; filename*=UTF-8''a%20b.txt; size=x y`, "a b.txt"},
		{`inline; filename=un quoted.txt`, "un quoted.txt"},
		{``, ""},
	}
	for _, tt := range tests {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
			if tt.disposition != "" {
				w.Header().Set("Content-Disposition", tt.disposition)
			}
			w.Header().Set("Content-Type", "text/markdown")
			w.Write(content)
		}, Options{})
		d, err := c.DownloadDocument(t.Context(), "d1")
		if err != nil {
			t.Fatal(err)
		}
		if d.FileName != tt.wantName || d.ContentType != "text/markdown" || !bytes.Equal(d.Body, content) {
			t.Errorf("%q: got name %q type %q len %d", tt.disposition, d.FileName, d.ContentType, len(d.Body))
		}
	}
	t.Run("size cap", func(t *testing.T) {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { w.Write(content) },
			Options{MaxResponseBytes: int64(len(content) - 1)})
		_, err := c.DownloadDocument(t.Context(), "d1")
		if !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), "exceeds the limit of 999 bytes") {
			t.Fatalf("err = %v", err)
		}
		if e, _ := errors.AsType[*Error](err); e == nil || e.Retryable() || errors.Is(err, ErrUnavailable) {
			t.Fatalf("too large must be a non-retryable *Error: %v", err)
		}
		c = newTestClient(t, func(w http.ResponseWriter, r *http.Request) { w.Write(content) },
			Options{MaxResponseBytes: int64(len(content))})
		if d, err := c.DownloadDocument(t.Context(), "d1"); err != nil || len(d.Body) != len(content) {
			t.Fatalf("exactly at the cap: %v", err)
		}
	})
}

func TestUndecodableSuccessBody(t *testing.T) {
	for _, body := range []string{`<html>captive portal</html>`, `{"results":[1,2]}`} {
		c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }, Options{})
		_, err := c.GetDocument(t.Context(), "d1")
		e, ok := errors.AsType[*Error](err)
		if !ok || e.StatusCode != 200 || e.Err == nil || e.Retryable() {
			t.Fatalf("%s: err = %#v", body, err)
		}
		_, err = c.ListDocuments(t.Context(), ListParams{})
		if e, ok := errors.AsType[*Error](err); !ok || e.Err == nil {
			t.Fatalf("%s list: err = %v", body, err)
		}
	}
}

func TestDecodesResponses(t *testing.T) {
	const searchBody = `{"results":{"chunk_search_results":[{"id":"c1","document_id":"d1","owner_id":"u","collection_ids":["k"],` +
		`"score":0.9,"text":"t","metadata":{"title":"a.md"}}],"graph_search_results":[],"web_search_results":null}}`
	c := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/retrieval/search":
			io.WriteString(w, searchBody)
		case "/v3/documents":
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"results":{"message":"Document created and ingested successfully.","task_id":null,"document_id":"d1"}}`)
		case "/v3/users/u/api-keys":
			io.WriteString(w, `{"results":[{"public_key":"key_A","key_id":"k1","name":"n","description":"","updated_at":"2025-11-06T12:34:56.123456Z"}],"total_entries":1}`)
		case "/v3/documents/d1/chunks":
			io.WriteString(w, `{"results":null,"total_entries":0}`)
		}
	}, Options{})
	res, err := c.Search(t.Context(), SearchRequest{Query: "q"})
	if err != nil || len(res.ChunkSearchResults) != 1 || res.ChunkSearchResults[0].Score != 0.9 || res.ChunkSearchResults[0].Metadata["title"] != "a.md" {
		t.Fatalf("search = %+v, %v", res, err)
	}
	ing, err := c.CreateDocument(t.Context(), DocumentCreate{RawText: "x"})
	if err != nil || ing.DocumentID != "d1" || ing.TaskID != nil {
		t.Fatalf("create = %+v, %v", ing, err)
	}
	keys, err := c.ListAPIKeys(t.Context(), "u")
	if err != nil || len(keys) != 1 || keys[0].KeyID != "k1" || keys[0].UpdatedAt.Year() != 2025 {
		t.Fatalf("keys = %+v, %v", keys, err)
	}
	chunks, err := c.ListDocumentChunks(t.Context(), "d1", ListParams{})
	if err != nil || chunks.Items == nil || len(chunks.Items) != 0 {
		t.Fatalf("null results must decode to an empty page: %+v, %v", chunks, err)
	}
}

// tenHitBody is a realistic search answer: 10 chunk hits of about 800 bytes each.
func tenHitBody() []byte {
	hits := make([]map[string]any, 10)
	for i := range hits {
		hits[i] = map[string]any{
			"id": fmt.Sprintf("3f5a0c2e-0000-5000-8000-%012d", i), "document_id": "9b1d7a3c-1111-5111-8111-000000000001",
			"owner_id": "2acbd2a1-2222-5222-8222-000000000002", "collection_ids": []string{"122fdf6a-e116-546b-a8f6-e4cb2e2c0a09"},
			"score": 0.9 - float64(i)/100, "text": strings.Repeat("lorem ipsum dolor sit amet ", 30),
			"metadata": map[string]any{"title": "notes.md", "chunk_order": i, "document_type": "md", "version": "v0", "associated_query": "q"},
		}
	}
	body, _ := json.Marshal(map[string]any{"results": map[string]any{"chunk_search_results": hits, "graph_search_results": []any{}}})
	return body
}

// BenchmarkSearch measures the client's encode/send/decode overhead for one search with a
// canned 10-hit answer from a local server.
func BenchmarkSearch(b *testing.B) {
	body := tenHitBody()
	c := newTestClient(b, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}, Options{Credentials: APIKey("key")})
	limit, semantic := 10, true
	req := SearchRequest{Query: "how do I configure retries", SearchMode: SearchModeCustom,
		SearchSettings: &SearchSettings{Limit: &limit, UseSemanticSearch: &semantic, Filters: map[string]any{"collection_ids": map[string]any{"$overlap": []string{"c"}}}}}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		res, err := c.Search(ctx, req)
		if err != nil || len(res.ChunkSearchResults) != 10 {
			b.Fatal(err)
		}
	}
}

// TestConnectionReuse checks that bodies are drained and closed on every path (success,
// error, download), so sequential calls share one keep-alive connection.
func TestConnectionReuse(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v3/documents/missing":
			w.WriteHeader(404)
			io.WriteString(w, `{"message":"Document not found."}`+strings.Repeat(" ", 100<<10))
		case "/v3/documents/d1/download":
			w.Write(bytes.Repeat([]byte("x"), 200<<10))
		default:
			io.WriteString(w, `{"results":{"message":"ok"}}`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL + "/v3/"})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := c.Health(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetDocument(t.Context(), "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if _, err := c.DownloadDocument(t.Context(), "d1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for 15 sequential requests, want 1", n)
	}
}

// BenchmarkSearchCodec measures only the client's request encoding and response decoding
// for a 10-hit search, without the network round trip BenchmarkSearch includes.
func BenchmarkSearchCodec(b *testing.B) {
	body := tenHitBody()
	limit, semantic := 10, true
	req := SearchRequest{Query: "how do I configure retries", SearchMode: SearchModeCustom,
		SearchSettings: &SearchSettings{Limit: &limit, UseSemanticSearch: &semantic}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := jsonBody("search", req); err != nil {
			b.Fatal(err)
		}
		var out SearchResult
		env := struct {
			Results any `json:"results"`
		}{Results: &out}
		if err := json.Unmarshal(body, &env); err != nil || len(out.ChunkSearchResults) != 10 {
			b.Fatal(err)
		}
	}
}
