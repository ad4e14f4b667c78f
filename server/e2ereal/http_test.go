package e2ereal_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// realHTTP is serve --http in-process against the real R2R r.
func realHTTP(t *testing.T, r realR2R) *httpserve.Handler {
	t.Helper()
	opts := server.DefaultOptions()
	base, err := server.New(server.Config{R2RURL: r.URL, Remote: true, ConfigDir: t.TempDir(), WorkDir: t.TempDir(), Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(base.Close)
	h, err := httpserve.New(base, httpserve.Options{HTTPOptions: opts.HTTP})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// invokeHTTP calls tool through h's REST gateway with cred as the Bearer credential.
func invokeHTTP(t *testing.T, h http.Handler, cred, tool string, args map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"tool": tool, "arguments": args})
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+cred)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Body)
	return rec.Code, string(out)
}

// TestRealHTTPRefusesRefreshToken: the real R2R answers users/me with a refresh token (the
// conformance suite's auth/me_with_refresh_token_accepted), and serve --http refuses it as
// a credential while the access token of the same session works.
func TestRealHTTPRefusesRefreshToken(t *testing.T) {
	r := liveR2R(t)
	c, err := r2r.New(r2r.Options{BaseURL: r.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(t.Context(), r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WithCredentials(r2r.Bearer(pair.RefreshToken.Token)).Me(t.Context()); err != nil {
		t.Fatalf("the real R2R no longer takes a refresh token on users/me (%v): the premise of this test is gone", err)
	}
	h := realHTTP(t, r)
	status, out := invokeHTTP(t, h, pair.RefreshToken.Token, "r2r_list_collections", nil)
	if status != http.StatusUnauthorized || !strings.Contains(out, "refresh token") || strings.Contains(out, pair.RefreshToken.Token) {
		t.Errorf("the refresh token over HTTP: %d %s", status, out)
	}
	if status, out := invokeHTTP(t, h, pair.AccessToken.Token, "r2r_list_collections", nil); status != http.StatusOK {
		t.Errorf("the access token over HTTP: %d %s", status, out)
	}
}
