package r2rtest

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestHTTPConventions(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	c := newTC(t, s)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	t.Run("trailing slash redirects", func(t *testing.T) {
		resp, err := noRedirect.Get(s.URL + "/v3/documents/?limit=5")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/v3/documents?limit=5" {
			t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("unknown routes need no credentials", func(t *testing.T) {
		wantMessage(t, c.get("/v3/unknown/route"), 404, "Not Found")
		wantMessage(t, c.get("/v4/health"), 404, "Not Found")
	})
	t.Run("x-project-name", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.URL+"/v3/health", nil)
		req.Header.Set("X-Project-Name", "bad name!")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		req.Header.Set("X-Project-Name", "good_name")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("JSON bodies need a JSON content type", func(t *testing.T) {
		a, _ := c.login(AdminEmail, AdminPassword)
		admin := c.with(a)
		wantValidation(t, admin.do("POST", "/v3/retrieval/search", "text/plain", strings.NewReader(`{"query":"x"}`)), "body")
		wantValidation(t, admin.do("POST", "/v3/collections", "application/x-www-form-urlencoded", strings.NewReader(`name=x`)), "body")
		wantStatus(t, admin.do("POST", "/v3/retrieval/search", "", strings.NewReader(`{"query":"x"}`)), 200)
	})
}

func TestDeleteByFilter(t *testing.T) {
	s := NewServer(t, Options{ChunkSize: 40})
	admin := newTC(t, s)
	alice, _ := userClient(t, s, "alice@example.com")
	keep := alice.rawText("Keep this document around.", map[string]any{"kind": "keep"})
	drop := alice.rawText("Drop this document please.", map[string]any{"kind": "drop"})
	partial := alice.rawText("First paragraph stays here.\n\nSecond paragraph goes away.", map[string]any{"kind": "partial"})
	adminDoc := admin.rawText("Admin also has a drop document.", map[string]any{"kind": "drop"})

	del := func(c *tc, ct, body string) *resp {
		return c.do("DELETE", "/v3/documents/by-filter", ct, strings.NewReader(body))
	}
	wantStatus(t, del(alice, "application/json", `{"kind":{"$eq":"drop"}}`), 200)
	wantStatus(t, alice.get("/v3/documents/"+keep), 200)
	wantStatus(t, alice.get("/v3/documents/"+drop), 404)
	wantStatus(t, admin.get("/v3/documents/"+adminDoc), 200) // only the caller's own documents

	// A JSON string holding the filter, and raw filter text, work too.
	wantStatus(t, del(alice, "application/json", `"{\"text\":{\"$like\":\"Second%\"}}"`), 200)
	chunks := alice.get("/v3/documents/" + partial + "/chunks")
	if chunks.body["total_entries"] != float64(1) || !strings.HasPrefix(chunks.list()[0].(map[string]any)["text"].(string), "First") {
		t.Fatalf("%s", chunks.raw)
	}
	wantStatus(t, del(alice, "text/plain", `{"kind":"partial"}`), 200)
	wantStatus(t, alice.get("/v3/documents/"+partial), 404)

	wantValidation(t, del(alice, "text/plain", `not json`), "body")
	wantValidation(t, del(alice, "application/json", `"not json"`), "body")
	wantValidation(t, del(alice, "application/json", `[1]`), "body")
	wantInternal(t, del(alice, "application/json", `{"id":{"$neq":"x"}}`), "FilterError", "$neq")
}

func TestTimeFormats(t *testing.T) {
	tests := []struct {
		format string
		re     string
	}{
		{"", `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`},
		{TimeFormatZ, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`},
		{TimeFormatOffset, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$`},
		{TimeFormatNaive, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$`},
	}
	for _, tt := range tests {
		t.Run("format="+tt.format, func(t *testing.T) {
			s := NewServer(t, Options{TimeFormat: tt.format})
			c := newTC(t, s)
			id := c.rawText("timestamps", nil)
			doc := c.get("/v3/documents/" + id).results()
			me := c.get("/v3/users/me").results()
			col := c.postJSON("/v3/collections", map[string]any{"name": "times"}).results()
			re := regexp.MustCompile(tt.re)
			for what, v := range map[string]any{"document created_at": doc["created_at"], "document updated_at": doc["updated_at"],
				"user created_at": me["created_at"], "collection updated_at": col["updated_at"]} {
				if s, _ := v.(string); !re.MatchString(s) {
					t.Errorf("%s = %v, want %s", what, v, tt.re)
				}
			}
		})
	}
}
