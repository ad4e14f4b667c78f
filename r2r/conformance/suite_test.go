package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// target is one R2R the suite runs against.
type target struct {
	url      string
	hc       *http.Client // nil = the client's default
	email    string       // a superuser's
	password string
	ragModel string
	// ingestWait bounds the wait for one document's ingestion.
	ingestWait time.Duration
}

// TestEmulator runs the suite against the in-process emulator with authentication on.
func TestEmulator(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	run(t, &target{url: srv.URL, hc: srv.HTTPClient(), email: r2rtest.AdminEmail,
		password: r2rtest.AdminPassword, ragModel: "openai/fixture-chat", ingestWait: 10 * time.Second})
}

// TestLive runs the suite against the R2R at R2R_CONFORMANCE_URL (authentication on; the
// credentials are its superuser's).
func TestLive(t *testing.T) {
	url := os.Getenv("R2R_CONFORMANCE_URL")
	if url == "" {
		// Not a failure under CI=true either: make test runs without a real R2R, and
		// make test-real, which CI runs too, brings one up (and fails when it cannot).
		t.Skip("R2R_CONFORMANCE_URL is not set; set it with R2R_CONFORMANCE_EMAIL and R2R_CONFORMANCE_PASSWORD to run against a real R2R")
	}
	tg := &target{url: url, email: os.Getenv("R2R_CONFORMANCE_EMAIL"),
		password: os.Getenv("R2R_CONFORMANCE_PASSWORD"), ragModel: os.Getenv("R2R_CONFORMANCE_RAG_MODEL"),
		ingestWait: 2 * time.Minute}
	if tg.email == "" || tg.password == "" {
		t.Fatal("R2R_CONFORMANCE_EMAIL and R2R_CONFORMANCE_PASSWORD must name the superuser of the R2R at R2R_CONFORMANCE_URL")
	}
	if tg.ragModel == "" {
		tg.ragModel = "openai/fixture-chat"
	}
	run(t, tg)
}

// suite is the state shared by the checks of one run: clients, and what the run created.
type suite struct {
	tg  *target
	sfx string // makes this run's names unique on a shared server
	// top is the test of the whole run: what a check creates is removed when the run ends,
	// not when the check does.
	top *testing.T

	anon    *r2r.Client
	admin   *r2r.Client // the superuser, with a JWT from a password login
	adminID string
	user    *r2r.Client // a fresh non-superuser
	userID  string

	collA, collB, collAName string

	// Documents: docText and docFile are in collA, docOther and docDerived are not.
	docText, docFile, docOther, docDerived string
	textBody, fileName, derivedName        string
	fileBody                               []byte
}

func run(t *testing.T, tg *target) {
	s := setup(t, tg)
	t.Run("health", s.health)
	t.Run("system_status", s.systemStatus)
	t.Run("auth", s.auth)
	t.Run("api_keys", s.apiKeys)
	t.Run("collections", s.collections)
	t.Run("documents", s.documents)
	t.Run("ingestion_outcomes", s.ingestionOutcomes)
	t.Run("collection_documents", s.collectionDocuments)
	t.Run("search", s.search)
	t.Run("regular_user_scope", s.regularUserScope)
	t.Run("rag", s.rag)
	t.Run("shapes", s.shapes)
	t.Run("errors", s.errorBodies)
	t.Run("indices", s.indices)
	t.Run("memories", s.memories)
	t.Run("team", s.team)
	t.Run("delete", s.deletes)
}

func setup(t *testing.T, tg *target) *suite {
	t.Helper()
	s := &suite{tg: tg, sfx: randomSuffix(), top: t}
	s.anon = s.client(t, nil)
	ctx := t.Context()
	pair, err := s.anon.Login(ctx, tg.email, tg.password)
	if err != nil {
		t.Fatalf("superuser login: %v", err)
	}
	s.admin = s.client(t, r2r.Bearer(pair.AccessToken.Token))
	me, err := s.admin.Me(ctx)
	if err != nil {
		t.Fatalf("superuser me: %v", err)
	}
	s.adminID = me.ID

	email, password := "conf-"+s.sfx+"@example.com", "Conf-"+s.sfx+"-pw1"
	st, _, body := s.raw(t, http.MethodPost, "/v3/users", s.admin.Credentials(), "application/json",
		mustJSON(t, map[string]any{"email": email, "password": password, "is_verified": true}))
	if st != http.StatusOK {
		t.Fatalf("register a second user: %d %s", st, body)
	}
	var reg struct {
		Results struct {
			ID string `json:"id"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &reg); err != nil || reg.Results.ID == "" {
		t.Fatalf("register a second user: %v %s", err, body)
	}
	s.userID = reg.Results.ID
	t.Cleanup(func() {
		st, _, body, err := s.send(http.MethodDelete, "/v3/users/"+s.userID, s.admin.Credentials(), "application/json",
			mustJSON(t, map[string]any{"password": password, "delete_vector_data": true}))
		if err != nil || st != http.StatusOK {
			t.Logf("removing the second user %s: %d %v %.200s", email, st, err, body)
		}
	})
	upair, err := s.anon.Login(ctx, email, password)
	if err != nil {
		t.Fatalf("second user login: %v", err)
	}
	s.user = s.client(t, r2r.Bearer(upair.AccessToken.Token))
	return s
}

// randomSuffix makes names unique, so that runs against one server do not collide.
func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *suite) client(t *testing.T, cr r2r.Credentials) *r2r.Client {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: s.tg.url, Credentials: cr, HTTPClient: s.tg.hc, UserAgent: "r2r-mcp/conformance"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// raw sends one request outside the typed client, for checks of the wire itself.
func (s *suite) raw(t *testing.T, method, path string, cr r2r.Credentials, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	st, h, b, err := s.send(method, path, cr, contentType, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return st, h, b
}

func (s *suite) send(method, path string, cr r2r.Credentials, contentType string, body []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.tg.url+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if cr != nil {
		if err := cr.Apply(ctx, req.Header); err != nil {
			return 0, nil, nil, err
		}
	}
	hc := s.tg.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// cleanupCtx is for t.Cleanup functions, which run after t.Context() is cancelled.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Minute)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// object decodes a JSON object body.
func object(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %.300s", err, b)
	}
	return m
}

// wantStatus asserts err is an *r2r.Error with the status code and sentinel (nil = none to
// check) and with a message parsed from R2R's body.
func wantStatus(t *testing.T, err error, status int, sentinel error) *r2r.Error {
	t.Helper()
	var e *r2r.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *r2r.Error with status %d, got %v", status, err)
	}
	if e.StatusCode != status {
		t.Fatalf("status = %d (%s), want %d", e.StatusCode, e.Message, status)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
	}
	if e.Message == "" {
		t.Errorf("no message parsed from the %d body", status)
	}
	return e
}

func wantMessage(t *testing.T, e *r2r.Error, msg string) {
	t.Helper()
	if e.Message != msg {
		t.Errorf("message = %q, want %q", e.Message, msg)
	}
}

func isUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

func need(t *testing.T, vals ...string) {
	t.Helper()
	if slices.Contains(vals, "") {
		t.Skip("an earlier check that creates what this one needs failed")
	}
}

func (s *suite) health(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		if err := s.anon.Health(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("envelope", func(t *testing.T) {
		st, _, body := s.raw(t, http.MethodGet, "/v3/health", nil, "", nil)
		if st != http.StatusOK {
			t.Fatalf("status %d", st)
		}
		var env struct {
			Results struct {
				Message string `json:"message"`
			} `json:"results"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Results.Message != "ok" {
			t.Fatalf("body %s (%v), want {\"results\":{\"message\":\"ok\"}}", body, err)
		}
	})
}

// systemStatus: GET /v3/system/status tells a superuser when R2R started (by the clock its
// documents are stamped with: no later than a document created now) and refuses a regular
// user; r2r-mcp compares an unfinished ingestion's updated_at with it to find ingestions a
// restart ended (TestRealIngestionCrash restarts R2R).
func (s *suite) systemStatus(t *testing.T) {
	ctx := t.Context()
	t.Run("superuser", func(t *testing.T) {
		st, err := s.admin.SystemStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		coll, err := s.admin.CreateCollection(ctx, "conformance-status-"+s.sfx, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.admin.DeleteCollection(context.Background(), coll.ID) })
		if st.StartTime.IsZero() || st.UptimeSeconds < 0 || st.StartTime.After(coll.CreatedAt.Time) {
			t.Fatalf("status %+v; a collection created now: %s", st, coll.CreatedAt)
		}
	})
	t.Run("regular_user_403", func(t *testing.T) {
		_, err := s.user.SystemStatus(ctx)
		e := wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden)
		wantMessage(t, e, "Only an authorized user can call the `system/status` endpoint.")
	})
}

func (s *suite) auth(t *testing.T) {
	ctx := t.Context()
	t.Run("login_token_pair", func(t *testing.T) {
		pair, err := s.anon.Login(ctx, s.tg.email, s.tg.password)
		if err != nil {
			t.Fatal(err)
		}
		if pair.AccessToken.TokenType != "access" || pair.RefreshToken.TokenType != "refresh" {
			t.Errorf("token types %q/%q, want access/refresh", pair.AccessToken.TokenType, pair.RefreshToken.TokenType)
		}
		for _, tok := range []string{pair.AccessToken.Token, pair.RefreshToken.Token} {
			if strings.Count(tok, ".") != 2 {
				t.Errorf("token %.12s… is not a JWT", tok)
			}
		}
	})
	t.Run("login_wrong_password_401", func(t *testing.T) {
		_, err := s.anon.Login(ctx, s.tg.email, s.tg.password+"-wrong")
		e := wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
		wantMessage(t, e, "Incorrect email or password")
	})
	t.Run("login_unknown_email_404", func(t *testing.T) {
		_, err := s.anon.Login(ctx, "nobody-"+s.sfx+"@example.com", "x")
		e := wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		wantMessage(t, e, "User not found")
	})
	t.Run("me_superuser", func(t *testing.T) {
		me, err := s.admin.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(me.Email, s.tg.email) || !me.IsSuperuser || !me.IsActive || !me.IsVerified || !isUUID(me.ID) {
			t.Errorf("me = %+v", me)
		}
		if me.CreatedAt.IsZero() || me.UpdatedAt.IsZero() {
			t.Errorf("timestamps not decoded: %v %v", me.CreatedAt, me.UpdatedAt)
		}
		if len(me.CollectionIDs) == 0 {
			t.Error("a user is always in at least its default collection")
		}
	})
	t.Run("me_regular_user", func(t *testing.T) {
		me, err := s.user.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if me.ID != s.userID || me.IsSuperuser {
			t.Errorf("me = %+v, want the non-superuser %s", me, s.userID)
		}
	})
	t.Run("me_anonymous_401", func(t *testing.T) {
		_, err := s.anon.Me(ctx)
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	t.Run("me_bad_token_401", func(t *testing.T) {
		_, err := s.client(t, r2r.Bearer("not-a-token")).Me(ctx)
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	// R2R does not look at token_type on users/me: a refresh token passes there as a
	// credential, so serve --http refuses a JWT that is not an access token itself.
	t.Run("me_with_refresh_token_accepted", func(t *testing.T) {
		pair, err := s.anon.Login(ctx, s.tg.email, s.tg.password)
		if err != nil {
			t.Fatal(err)
		}
		me, err := s.client(t, r2r.Bearer(pair.RefreshToken.Token)).Me(ctx)
		if err != nil || me.ID != s.adminID {
			t.Fatalf("users/me with a refresh token: %+v, %v; want the superuser", me, err)
		}
	})
	t.Run("refresh_rotates", func(t *testing.T) {
		pair, err := s.anon.Login(ctx, s.tg.email, s.tg.password)
		if err != nil {
			t.Fatal(err)
		}
		next, err := s.anon.RefreshToken(ctx, pair.RefreshToken.Token)
		if err != nil {
			t.Fatal(err)
		}
		if next.AccessToken.TokenType != "access" || next.RefreshToken.TokenType != "refresh" {
			t.Errorf("token types %q/%q", next.AccessToken.TokenType, next.RefreshToken.TokenType)
		}
		if next.RefreshToken.Token == pair.RefreshToken.Token {
			t.Error("the refresh token did not rotate")
		}
		me, err := s.client(t, r2r.Bearer(next.AccessToken.Token)).Me(ctx)
		if err != nil || me.ID != s.adminID {
			t.Fatalf("the refreshed access token does not act as the superuser: %v", err)
		}
		t.Run("reused_refresh_token_401", func(t *testing.T) {
			_, err := s.anon.RefreshToken(ctx, pair.RefreshToken.Token)
			wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
		})
	})
	t.Run("refresh_garbage_401", func(t *testing.T) {
		_, err := s.anon.RefreshToken(ctx, "not-a-token")
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	t.Run("refresh_with_access_token_401", func(t *testing.T) {
		pair, err := s.anon.Login(ctx, s.tg.email, s.tg.password)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.anon.RefreshToken(ctx, pair.AccessToken.Token)
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	t.Run("logout_revokes_access_token", func(t *testing.T) {
		pair, err := s.anon.Login(ctx, s.tg.email, s.tg.password)
		if err != nil {
			t.Fatal(err)
		}
		c := s.client(t, r2r.Bearer(pair.AccessToken.Token))
		if err := c.Logout(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = c.Me(ctx)
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
		// Logout blacklists the access token only: the session's refresh token still renews
		// it (what auth header relies on to replace a token R2R refuses before its exp).
		next, err := s.anon.RefreshToken(ctx, pair.RefreshToken.Token)
		if err != nil {
			t.Fatalf("the refresh token no longer renews after a logout with the access token: %v", err)
		}
		if _, err := s.client(t, r2r.Bearer(next.AccessToken.Token)).Me(ctx); err != nil {
			t.Fatalf("the renewed access token is refused: %v", err)
		}
	})
}

func (s *suite) apiKeys(t *testing.T) {
	ctx := t.Context()
	name := "conf-" + s.sfx
	var key *r2r.CreatedAPIKey
	t.Run("create", func(t *testing.T) {
		k, err := s.admin.CreateAPIKey(ctx, s.adminID, name, "conformance "+s.sfx)
		if err != nil {
			t.Fatal(err)
		}
		key = k
		s.top.Cleanup(func() {
			ctx, cancel := cleanupCtx()
			defer cancel()
			_ = s.admin.DeleteAPIKey(ctx, s.adminID, k.KeyID)
		})
		// key_ + 16 random bytes, a dot, 32 random bytes: URL-safe base64 with padding.
		shape := regexp.MustCompile(`^key_[A-Za-z0-9_-]{22}==\.[A-Za-z0-9_-]{43}=$`)
		pub, _, _ := strings.Cut(k.APIKey, ".")
		if !shape.MatchString(k.APIKey) || pub != k.PublicKey {
			t.Errorf("api_key %.8s… / public_key %q: want key_<22>==.<43>= with the public key before the dot", k.APIKey, k.PublicKey)
		}
		if !isUUID(k.KeyID) || k.Name != name {
			t.Errorf("key_id %q name %q", k.KeyID, k.Name)
		}
	})
	if key == nil {
		return
	}
	t.Run("list", func(t *testing.T) {
		keys, err := s.admin.ListAPIKeys(ctx, s.adminID)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(keys, func(k r2r.APIKeyInfo) bool { return k.KeyID == key.KeyID })
		if i < 0 {
			t.Fatalf("key %s not listed in %+v", key.KeyID, keys)
		}
		k := keys[i]
		if k.Name != name || k.Description != "conformance "+s.sfx || k.PublicKey != key.PublicKey || k.UpdatedAt.IsZero() {
			t.Errorf("listed %+v", k)
		}
	})
	t.Run("list_envelope_has_no_secret", func(t *testing.T) {
		st, _, body := s.raw(t, http.MethodGet, "/v3/users/"+s.adminID+"/api-keys", s.admin.Credentials(), "", nil)
		if st != http.StatusOK {
			t.Fatalf("status %d", st)
		}
		env := object(t, body)
		if _, ok := env["total_entries"].(float64); !ok {
			t.Errorf("no total_entries in %s", body)
		}
		if bytes.Contains(body, []byte(key.APIKey)) || bytes.Contains(body, []byte(`"api_key"`)) {
			t.Error("the key list shows a secret")
		}
	})
	t.Run("x_api_key_authenticates", func(t *testing.T) {
		me, err := s.client(t, r2r.APIKey(key.APIKey)).Me(ctx)
		if err != nil || me.ID != s.adminID {
			t.Fatalf("me with X-API-Key: %v", err)
		}
	})
	t.Run("bearer_api_key_authenticates", func(t *testing.T) {
		me, err := s.client(t, r2r.Bearer(key.APIKey)).Me(ctx)
		if err != nil || me.ID != s.adminID {
			t.Fatalf("me with the key as a Bearer token: %v", err)
		}
	})
	t.Run("other_users_keys_403", func(t *testing.T) {
		_, err := s.user.ListAPIKeys(ctx, s.adminID)
		wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden)
	})
	t.Run("revoke", func(t *testing.T) {
		if err := s.admin.DeleteAPIKey(ctx, s.adminID, key.KeyID); err != nil {
			t.Fatal(err)
		}
		keys, err := s.admin.ListAPIKeys(ctx, s.adminID)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(keys, func(k r2r.APIKeyInfo) bool { return k.KeyID == key.KeyID }) {
			t.Error("a revoked key is still listed")
		}
		_, err = s.client(t, r2r.APIKey(key.APIKey)).Me(ctx)
		wantStatus(t, err, http.StatusUnauthorized, r2r.ErrUnauthorized)
	})
	t.Run("revoke_unknown_404", func(t *testing.T) {
		err := s.admin.DeleteAPIKey(ctx, s.adminID, uuid.NewString())
		e := wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		wantMessage(t, e, "API key not found")
	})
}
