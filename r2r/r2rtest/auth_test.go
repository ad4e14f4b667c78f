package r2rtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestLogin(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	s.CreateUser("Dev@Example.com", "secret", false)
	c := newTC(t, s)
	cases := []struct {
		name   string
		form   url.Values
		status int
		msg    string
	}{
		{"unknown email is 404", url.Values{"username": {"nobody@example.com"}, "password": {"x"}}, 404, "User not found"},
		{"wrong password", url.Values{"username": {"dev@example.com"}, "password": {"nope"}}, 401, "Incorrect email or password"},
		{"email is case-insensitive", url.Values{"username": {"DEV@example.com"}, "password": {"secret"}}, 200, ""},
		{"grant_type password accepted", url.Values{"username": {"dev@example.com"}, "password": {"secret"}, "grant_type": {"password"}}, 200, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := c.form("/v3/users/login", tt.form)
			if tt.status != 200 {
				wantR2RError(t, r, tt.status, tt.msg)
				return
			}
			wantStatus(t, r, 200)
			res := r.results()
			for _, k := range []string{"access_token", "refresh_token"} {
				tok := res[k].(map[string]any)
				if tok["token_type"] != strings.TrimSuffix(k, "_token") {
					t.Fatalf("%s token_type = %v", k, tok["token_type"])
				}
			}
		})
	}
	t.Run("missing password is a 422 list", func(t *testing.T) {
		wantValidation(t, c.form("/v3/users/login", url.Values{"username": {"dev@example.com"}}), "body", "password")
	})
	t.Run("bad grant_type", func(t *testing.T) {
		wantValidation(t, c.form("/v3/users/login", url.Values{"username": {"a"}, "password": {"b"}, "grant_type": {"x"}}), "body", "grant_type")
	})
	t.Run("multipart form", func(t *testing.T) {
		r := c.do("POST", "/v3/users/login", "multipart/form-data; boundary=XX", strings.NewReader(
			"--XX\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\ndev@example.com\r\n"+
				"--XX\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nsecret\r\n--XX--\r\n"))
		wantStatus(t, r, 200)
	})
}

func decodeClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	head, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if !strings.Contains(string(head), `"HS256"`) {
		t.Fatalf("header %s", head)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var cl map[string]any
	if err := json.Unmarshal(raw, &cl); err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestTokens(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true, TokenTTL: time.Hour})
	s.CreateUser("dev@example.com", "pw", false)
	c := newTC(t, s)
	access, refresh := c.login("dev@example.com", "pw")

	t.Run("claims", func(t *testing.T) {
		cl := decodeClaims(t, access)
		for _, k := range []string{"sub", "token_type", "exp", "iat", "nbf", "jti", "nonce"} {
			if _, ok := cl[k]; !ok {
				t.Fatalf("claim %s missing: %v", k, cl)
			}
		}
		if cl["sub"] != "dev@example.com" || cl["token_type"] != "access" {
			t.Fatalf("claims %v", cl)
		}
		if ttl := cl["exp"].(float64) - cl["iat"].(float64); ttl < 3599 || ttl > 3601 {
			t.Fatalf("access lifetime %vs", ttl)
		}
		if decodeClaims(t, refresh)["token_type"] != "refresh" {
			t.Fatal("refresh token_type")
		}
	})

	t.Run("refresh rotates; reuse is rejected", func(t *testing.T) {
		_, r1 := c.login("dev@example.com", "pw")
		r := c.do("POST", "/v3/users/refresh-token", "application/json", strings.NewReader(`"`+r1+`"`))
		wantStatus(t, r, 200)
		newRefresh := r.results()["refresh_token"].(map[string]any)["token"].(string)
		newAccess := r.results()["access_token"].(map[string]any)["token"].(string)
		if newRefresh == r1 {
			t.Fatal("refresh token not rotated")
		}
		wantStatus(t, c.with(newAccess).get("/v3/users/me"), 200)
		wantR2RError(t, c.do("POST", "/v3/users/refresh-token", "application/json", strings.NewReader(`"`+r1+`"`)),
			401, "Token has been invalidated")
		// Raw text with a non-JSON content type, as the JS SDK sends it.
		wantStatus(t, c.do("POST", "/v3/users/refresh-token", "application/x-www-form-urlencoded", strings.NewReader(newRefresh)), 200)
	})

	t.Run("refresh errors", func(t *testing.T) {
		wantR2RError(t, c.do("POST", "/v3/users/refresh-token", "application/json", strings.NewReader(`"`+access+`"`)),
			401, "Invalid refresh token")
		wantR2RError(t, c.do("POST", "/v3/users/refresh-token", "text/plain", strings.NewReader("garbage")),
			401, "Invalid or expired token")
		wantValidation(t, c.do("POST", "/v3/users/refresh-token", "application/json", strings.NewReader(`{"refresh_token":"x"}`)), "body")
		wantValidation(t, c.do("POST", "/v3/users/refresh-token", "text/plain", nil), "body")
	})

	t.Run("expired refresh token", func(t *testing.T) {
		defer s.Configure(func(o *Options) { o.RefreshTTL, o.Clock = 0, nil })
		issued := time.Now()
		s.Configure(func(o *Options) { o.RefreshTTL, o.Clock = time.Minute, at(issued) })
		_, short := c.login("dev@example.com", "pw")
		s.Configure(func(o *Options) { o.Clock = at(issued.Add(time.Minute + time.Second)) })
		wantR2RError(t, c.do("POST", "/v3/users/refresh-token", "text/plain", strings.NewReader(short)), 401, "Token has expired")
	})

	t.Run("bad and tampered tokens", func(t *testing.T) {
		wantR2RError(t, c.with("garbage").get("/v3/users/me"), 401, "Invalid token or API key")
		parts := strings.Split(access, ".")
		forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin@example.com","token_type":"access","exp":9999999999}`)) + "." + parts[2]
		wantR2RError(t, c.with(forged).get("/v3/users/me"), 401, "Invalid token or API key")
	})

	t.Run("ExpireTokens expires access tokens only", func(t *testing.T) {
		a, r := c.login("dev@example.com", "pw")
		wantStatus(t, c.with(a).get("/v3/users/me"), 200)
		s.ExpireTokens()
		wantR2RError(t, c.with(a).get("/v3/users/me"), 401, "Invalid token or API key")
		res := c.do("POST", "/v3/users/refresh-token", "text/plain", strings.NewReader(r))
		wantStatus(t, res, 200)
		fresh := res.results()["access_token"].(map[string]any)["token"].(string)
		wantStatus(t, c.with(fresh).get("/v3/users/me"), 200)
	})

	t.Run("short TTL", func(t *testing.T) {
		defer s.Configure(func(o *Options) { o.TokenTTL, o.Clock = time.Hour, nil })
		issued := time.Now()
		s.Configure(func(o *Options) { o.TokenTTL, o.Clock = time.Minute, at(issued) })
		a, _ := c.login("dev@example.com", "pw")
		s.Configure(func(o *Options) { o.Clock = at(issued.Add(time.Minute - time.Second)) })
		wantStatus(t, c.with(a).get("/v3/users/me"), 200)
		s.Configure(func(o *Options) { o.Clock = at(issued.Add(time.Minute + time.Second)) })
		wantR2RError(t, c.with(a).get("/v3/users/me"), 401, "Invalid token or API key")
	})

	t.Run("logout blacklists the access token", func(t *testing.T) {
		a, _ := c.login("dev@example.com", "pw")
		r := c.with(a).do("POST", "/v3/users/logout", "", nil)
		wantStatus(t, r, 200)
		if r.results()["message"] != "Logged out successfully" {
			t.Fatalf("%s", r.raw)
		}
		wantR2RError(t, c.with(a).get("/v3/users/me"), 401, "Invalid token or API key")
		nb := c.do("POST", "/v3/users/logout", "", nil)
		wantMessage(t, nb, 401, "Not authenticated")
		if nb.header.Get("WWW-Authenticate") != "Bearer" {
			t.Fatal("WWW-Authenticate missing")
		}
	})
}

func TestAuthModes(t *testing.T) {
	t.Run("auth off: no credentials act as the default superuser", func(t *testing.T) {
		s := NewServer(t, Options{})
		r := newTC(t, s).get("/v3/users/me")
		wantStatus(t, r, 200)
		u := r.results()
		if u["email"] != AdminEmail || u["is_superuser"] != true || u["id"] != uuid5(AdminEmail) {
			t.Fatalf("me = %v", u)
		}
		for _, k := range []string{"hashed_password", "name", "limits_overrides", "google_id"} {
			if v, ok := u[k]; !ok || v != nil {
				t.Fatalf("%s should be present and null: %v", k, u)
			}
		}
		if cols := u["collection_ids"].([]any); len(cols) != 1 || cols[0] != uuid5(uuid5(AdminEmail)) {
			t.Fatalf("collection_ids %v", cols)
		}
		// A bad token is still rejected.
		wantR2RError(t, newTC(t, s).with("bad").get("/v3/users/me"), 401, "Invalid token or API key")
	})
	t.Run("auth required", func(t *testing.T) {
		s := NewServer(t, Options{RequireAuth: true})
		r := newTC(t, s).get("/v3/documents")
		wantStatus(t, r, 401)
		if !strings.HasPrefix(r.message(), "No credentials provided. Create an account at https://app.sciphi.ai") ||
			!strings.Contains(r.message(), "r2r configure key") {
			t.Fatalf("message %q", r.message())
		}
		wantStatus(t, newTC(t, s).get("/v3/health"), 200)
	})
	t.Run("both headers", func(t *testing.T) {
		s := NewServer(t, Options{})
		c := newTC(t, s).with("x")
		c.key = "y"
		wantR2RError(t, c.get("/v3/users/me"), 400, "Cannot have both Bearer token and API key")
	})
}

func TestRegister(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	admin := newTC(t, s)
	a, _ := admin.login(AdminEmail, AdminPassword)
	admin = admin.with(a)

	r := admin.postJSON("/v3/users", map[string]any{"email": "New@Example.com", "password": "pw", "name": "New"})
	wantStatus(t, r, 200)
	u := r.results()
	if u["email"] != "new@example.com" || u["is_superuser"] != false || u["name"] != "New" || u["id"] != uuid5("new@example.com") {
		t.Fatalf("user %v", u)
	}
	wantR2RError(t, admin.postJSON("/v3/users", map[string]any{"email": "new@example.com", "password": "pw"}), 400, "User with this email already exists")
	wantValidation(t, admin.postJSON("/v3/users", map[string]any{"email": "not-an-email", "password": "pw"}), "body", "email")
	wantValidation(t, admin.postJSON("/v3/users", map[string]any{"password": "pw"}), "body", "email")
	wantValidation(t, admin.postJSON("/v3/users", map[string]any{"email": "x@example.com"}), "body", "password")
	wantValidation(t, admin.do("POST", "/v3/users", "application/json", strings.NewReader("{")), "body", 0)

	user := newTC(t, s)
	ua, _ := user.login("new@example.com", "pw")
	user = user.with(ua)
	wantR2RError(t, user.postJSON("/v3/users", map[string]any{"email": "v@example.com", "password": "pw", "is_verified": true}),
		403, "Non-superuser cannot verify users during registration.")
	wantStatus(t, newTC(t, s).postJSON("/v3/users", map[string]any{"email": "z@example.com", "password": "pw"}), 401)
}

func TestAPIKeys(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	dev, devID := userClient(t, s, "dev@example.com")
	_, otherID := userClient(t, s, "other@example.com")

	r := dev.postJSON("/v3/users/"+devID+"/api-keys", map[string]any{"name": "ci", "description": "for CI"})
	wantStatus(t, r, 200)
	created := r.results()
	key := created["api_key"].(string)
	pub, raw, ok := strings.Cut(key, ".")
	if !ok || !strings.HasPrefix(pub, "key_") || raw == "" || created["public_key"] != pub || created["name"] != "ci" {
		t.Fatalf("created %v", created)
	}
	keyID := created["key_id"].(string)

	t.Run("key works via X-API-Key and Bearer", func(t *testing.T) {
		for _, c := range []*tc{newTC(t, s).withKey(key), newTC(t, s).with(key)} {
			r := c.get("/v3/users/me")
			wantStatus(t, r, 200)
			if r.results()["id"] != devID {
				t.Fatalf("me %v", r.results())
			}
		}
		wantR2RError(t, newTC(t, s).withKey(pub+".wrong").get("/v3/users/me"), 401, "Invalid token or API key")
		wantR2RError(t, newTC(t, s).withKey("nodot").get("/v3/users/me"), 401, "Invalid token or API key")
	})
	t.Run("list", func(t *testing.T) {
		// An empty body is fine too.
		wantStatus(t, dev.do("POST", "/v3/users/"+devID+"/api-keys", "application/json", nil), 200)
		r := dev.get("/v3/users/" + devID + "/api-keys")
		wantStatus(t, r, 200)
		if r.body["total_entries"] != float64(2) {
			t.Fatalf("%s", r.raw)
		}
		found := false
		for _, it := range r.list() {
			k := it.(map[string]any)
			if _, secret := k["api_key"]; secret {
				t.Fatal("list must not return secrets")
			}
			if k["key_id"] == keyID && k["description"] == "for CI" && k["public_key"] == pub {
				found = true
			}
		}
		if !found {
			t.Fatalf("key missing from %s", r.raw)
		}
	})
	t.Run("permissions", func(t *testing.T) {
		wantR2RError(t, dev.postJSON("/v3/users/"+otherID+"/api-keys", map[string]any{}), 403,
			"Only the user themselves or a superuser can create API keys for this user.")
		wantR2RError(t, dev.get("/v3/users/"+otherID+"/api-keys"), 403,
			"Only the user themselves or a superuser can list API keys for this user.")
		wantR2RError(t, dev.del("/v3/users/"+otherID+"/api-keys/"+keyID), 403,
			"Only the user themselves or a superuser can delete this API key.")
		wantValidation(t, dev.get("/v3/users/not-a-uuid/api-keys"), "path", "id")
	})
	t.Run("delete", func(t *testing.T) {
		r := dev.del("/v3/users/" + devID + "/api-keys/" + keyID)
		wantStatus(t, r, 200)
		if r.results()["success"] != true {
			t.Fatalf("%s", r.raw)
		}
		wantR2RError(t, dev.del("/v3/users/"+devID+"/api-keys/"+keyID), 404, "API key not found")
		wantR2RError(t, newTC(t, s).withKey(key).get("/v3/users/me"), 401, "Invalid token or API key")
	})
	t.Run("superuser manages any user's keys", func(t *testing.T) {
		a, _ := newTC(t, s).login(AdminEmail, AdminPassword)
		wantStatus(t, newTC(t, s).with(a).postJSON("/v3/users/"+otherID+"/api-keys", map[string]any{"name": "x"}), http.StatusOK)
	})
}

// at is a clock stopped at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }
