package r2rtest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// tc is a tiny HTTP client for exercising the emulator over the wire.
type tc struct {
	t     *testing.T
	base  string
	token string // Bearer
	key   string // X-API-Key
}

func newTC(t *testing.T, s *Server) *tc { return &tc{t: t, base: s.URL} }

func (c *tc) with(token string) *tc {
	cp := *c
	cp.token = token
	cp.key = ""
	return &cp
}

func (c *tc) withKey(key string) *tc {
	cp := *c
	cp.key = key
	cp.token = ""
	return &cp
}

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (r *resp) results() map[string]any {
	m, _ := r.body["results"].(map[string]any)
	return m
}

func (r *resp) list() []any {
	l, _ := r.body["results"].([]any)
	return l
}

func (r *resp) message() string {
	if m, ok := r.body["message"].(string); ok {
		return m
	}
	switch d := r.body["detail"].(type) {
	case string:
		return d
	case map[string]any:
		s, _ := d["message"].(string)
		return s
	}
	return string(r.raw)
}

func (c *tc) do(method, path, contentType string, body io.Reader) *resp {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := &resp{status: res.StatusCode, header: res.Header, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			c.t.Fatalf("%s %s: bad JSON %q: %v", method, path, raw, err)
		}
	}
	return r
}

func (c *tc) get(path string) *resp { return c.do("GET", path, "", nil) }

func (c *tc) del(path string) *resp { return c.do("DELETE", path, "", nil) }

func (c *tc) postJSON(path string, v any) *resp {
	c.t.Helper()
	b, _ := json.Marshal(v)
	return c.do("POST", path, "application/json", bytes.NewReader(b))
}

func (c *tc) form(path string, v url.Values) *resp {
	return c.do("POST", path, "application/x-www-form-urlencoded", strings.NewReader(v.Encode()))
}

// upload posts a multipart document with a file part and extra fields.
func (c *tc) upload(name string, content []byte, fields map[string]string) *resp {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if name != "-" {
		fw, err := mw.CreateFormFile("file", name)
		if err != nil {
			c.t.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	_ = mw.Close()
	return c.do("POST", "/v3/documents", mw.FormDataContentType(), &buf)
}

// rawText ingests raw text with optional metadata and returns the document id.
func (c *tc) rawText(text string, meta map[string]any, extra ...string) string {
	c.t.Helper()
	v := url.Values{"raw_text": {text}}
	if meta != nil {
		b, _ := json.Marshal(meta)
		v.Set("metadata", string(b))
	}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	r := c.form("/v3/documents", v)
	if r.status != http.StatusAccepted {
		c.t.Fatalf("ingest: %d %s", r.status, r.raw)
	}
	return r.results()["document_id"].(string)
}

func (c *tc) login(email, password string) (access, refresh string) {
	c.t.Helper()
	r := c.form("/v3/users/login", url.Values{"username": {email}, "password": {password}})
	if r.status != 200 {
		c.t.Fatalf("login %s: %d %s", email, r.status, r.raw)
	}
	res := r.results()
	return res["access_token"].(map[string]any)["token"].(string), res["refresh_token"].(map[string]any)["token"].(string)
}

// userClient creates a user and returns a client logged in as that user, plus the user id.
func userClient(t *testing.T, s *Server, email string) (*tc, string) {
	t.Helper()
	id := s.CreateUser(email, "pw-"+email, false)
	access, _ := newTC(t, s).login(email, "pw-"+email)
	return newTC(t, s).with(access), id
}

func wantStatus(t *testing.T, r *resp, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.raw)
	}
}

func wantMessage(t *testing.T, r *resp, status int, msg string) {
	t.Helper()
	wantStatus(t, r, status)
	if got := r.message(); got != msg {
		t.Fatalf("message = %q, want %q", got, msg)
	}
}

// wantR2RError checks R2R's business error shape.
func wantR2RError(t *testing.T, r *resp, status int, msg string) {
	t.Helper()
	wantMessage(t, r, status, msg)
	if r.body["error_type"] != "R2RException" || len(r.body) != 2 {
		t.Fatalf("not an R2RException body: %s", r.raw)
	}
}

// wantValidation checks FastAPI's 422 list shape and the loc of the first entry.
func wantValidation(t *testing.T, r *resp, loc ...any) {
	t.Helper()
	wantStatus(t, r, http.StatusUnprocessableEntity)
	list, ok := r.body["detail"].([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("not a validation body: %s", r.raw)
	}
	first := list[0].(map[string]any)
	for _, k := range []string{"type", "loc", "msg"} {
		if _, ok := first[k]; !ok {
			t.Fatalf("validation entry lacks %q: %s", k, r.raw)
		}
	}
	gotLoc, _ := json.Marshal(first["loc"])
	wantLoc, _ := json.Marshal(loc)
	if string(gotLoc) != string(wantLoc) {
		t.Fatalf("loc = %s, want %s", gotLoc, wantLoc)
	}
}

// wantInternal checks the 500 {"detail":{message,error,error_type}} shape.
func wantInternal(t *testing.T, r *resp, errType, errContains string) {
	t.Helper()
	wantStatus(t, r, http.StatusInternalServerError)
	d, ok := r.body["detail"].(map[string]any)
	if !ok {
		t.Fatalf("not a detail object: %s", r.raw)
	}
	if d["error_type"] != errType {
		t.Fatalf("error_type = %v, want %s (%s)", d["error_type"], errType, r.raw)
	}
	if e, _ := d["error"].(string); !strings.Contains(e, errContains) {
		t.Fatalf("error = %q, want it to contain %q", e, errContains)
	}
	if m, _ := d["message"].(string); !strings.HasPrefix(m, "An error '") {
		t.Fatalf("message = %q", m)
	}
}
