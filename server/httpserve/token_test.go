package httpserve_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// accessToken logs m in and returns the access token of the session (what
// `r2r-mcp auth header` prints).
func accessToken(t *testing.T, tm *team, m member) string {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: tm.Emu.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(context.Background(), m.Email, "pw-"+m.Email)
	if err != nil {
		t.Fatal(err)
	}
	return pair.AccessToken.Token
}

// A user's R2R access token is a credential like an API key: checked once, remembered by
// hash, and sent to R2R as Authorization: Bearer (R2R checks a JWT in milliseconds, an API
// key with bcrypt on every request).
func TestAccessTokenIsACredential(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	tok := accessToken(t, tm, tm.Alice)
	for range 3 {
		status, out, _ := invoke(t, rep.URL, tok, "r2r_search", map[string]any{"query": "payout queue worker"})
		if status != http.StatusOK || out.Error != nil || !strings.Contains(out.Text, "marigold") || strings.Contains(out.Text, "tamarind") {
			t.Fatalf("search with alice's access token: %d %+v", status, out)
		}
	}
	if n := tm.Emu.Count("GET /v3/users/me"); n != 1 {
		t.Errorf("the token was checked %d times, want once", n)
	}
	last := tm.Emu.LastRequest(searchRoute)
	if last == nil || last.Header.Get("Authorization") != "Bearer "+tok || last.Header.Get("X-API-Key") != "" {
		t.Errorf("search did not reach R2R with the access token: %+v", last)
	}
}

// A credential that cannot be sent as a header (a line break, 60 KiB) is the caller's
// problem: 401 naming it, R2R is not asked, and nothing reads as an outage (503). R2R's
// own 400/413/431 for a header it will not read is a refusal too.
func TestUnusableCredentialsAre401NotOutages(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	for _, tc := range []struct {
		name, cred, want string
	}{
		{"inner control character (a tab: HTTP cannot carry a line break)", "key_abc\tx.def", "control character"},
		{"60 KiB", "key_" + strings.Repeat("a", 60<<10), "bytes long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, rep.URL+"/mcp/invoke", strings.NewReader(`{"tool":"r2r_status","arguments":{}}`))
			req.Header.Set("X-R2R-API-Key", tc.cred)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			body := string(b)
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, tc.want) {
				t.Errorf("status %d body %s", resp.StatusCode, body)
			}
		})
	}
	if n := tm.Emu.Count("GET /v3/users/me"); n != 0 {
		t.Errorf("R2R was asked about unusable credentials %d times", n)
	}
	for _, status := range []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge} {
		tm.Emu.ForceStatus("GET /v3/users/me", status, 1)
		got, out, _ := invoke(t, rep.URL, "key_"+strings.Repeat("b", 4000), "r2r_status", nil)
		if got != http.StatusUnauthorized {
			t.Errorf("R2R answered the check %d: got %d %+v, want 401", status, got, out)
		}
	}
}

// An accepted access token is remembered no longer than its exp claim allows, however long
// --key-ttl is; an API key for --key-ttl.
func TestAccessTokenCheckEndsAtItsExpiry(t *testing.T) {
	tm := newTeam(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) { o.KeyTTL, o.Now = 24*time.Hour, clock })
	tok := accessToken(t, tm, tm.Alice)
	for _, cred := range []string{tok, tm.Bob.Key} {
		if status, out, _ := invoke(t, rep.URL, cred, "r2r_list_collections", nil); status != http.StatusOK {
			t.Fatalf("%d %+v", status, out)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Hour) // past the emulator's one-hour access tokens
	mu.Unlock()
	tm.Emu.ResetCounts()
	status, _, _ := invoke(t, rep.URL, tok, "r2r_list_collections", nil)
	if n := tm.Emu.Count("GET /v3/users/me"); n != 1 {
		t.Errorf("an access token past its exp was not checked again (checks %d, status %d)", n, status)
	}
	tm.Emu.ResetCounts()
	if status, _, _ := invoke(t, rep.URL, tm.Bob.Key, "r2r_list_collections", nil); status != http.StatusOK || tm.Emu.Count("GET /v3/users/me") != 0 {
		t.Errorf("the API key was checked again within --key-ttl (status %d)", status)
	}
}

// A refresh token is not a credential for tools, though R2R answers users/me with it: a
// JWT whose token_type claim is not "access" is refused with 401 before R2R is asked, and
// the token reaches neither the response nor the log.
func TestRefreshTokenIsRefused(t *testing.T) {
	tm := newTeam(t)
	logs := &syncBuffer{}
	rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	c, err := r2r.New(r2r.Options{BaseURL: tm.Emu.URL})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.Login(context.Background(), tm.Alice.Email, "pw-"+tm.Alice.Email)
	if err != nil {
		t.Fatal(err)
	}
	refresh := pair.RefreshToken.Token
	typeless := unsignedJWT(t, map[string]any{"sub": tm.Alice.Email, "exp": time.Now().Add(time.Hour).Unix()})
	odd := unsignedJWT(t, map[string]any{"sub": tm.Alice.Email, "token_type": "Access\u202e", "exp": time.Now().Add(time.Hour).Unix()})
	tm.Emu.ResetCounts()
	for _, tc := range []struct {
		name, header, cred, want string
	}{
		{"refresh token as Bearer", "Authorization", "Bearer " + refresh, "a refresh token"},
		{"refresh token as X-R2R-API-Key", "X-R2R-API-Key", refresh, "a refresh token"},
		{"JWT without token_type", "Authorization", "Bearer " + typeless, "not an access token"},
		{"JWT of another token_type", "Authorization", "Bearer " + odd, "not an access token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/mcp", "/mcp/invoke"} {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`
				if path == "/mcp/invoke" {
					body = `{"tool":"r2r_list_collections","arguments":{}}`
				}
				req, _ := http.NewRequest(http.MethodPost, rep.URL+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set(tc.header, tc.cred)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				out := string(b)
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) ||
					!strings.Contains(out, tc.want) || !strings.Contains(out, "r2r-mcp auth header") {
					t.Errorf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out)
				}
				if strings.Contains(out, refresh) || strings.Contains(out, "\u202e") {
					t.Errorf("%s: the response echoes the token or its claim: %s", path, out)
				}
			}
		})
	}
	if n := tm.Emu.Count("GET /v3/users/me"); n != 0 {
		t.Errorf("R2R was asked about tokens that are not access tokens %d times", n)
	}
	if n := tm.Emu.Count("GET /v3/collections"); n != 0 {
		t.Errorf("a tool ran %d times with a token that is not an access token", n)
	}
	if status, out, _ := invoke(t, rep.URL, pair.AccessToken.Token, "r2r_list_collections", nil); status != http.StatusOK {
		t.Errorf("the access token of the same session: %d %+v", status, out)
	}
	if strings.Contains(logs.String(), refresh) || strings.Contains(logs.String(), strings.Split(refresh, ".")[1]) {
		t.Error("the refresh token reached the log")
	}
}

// unsignedJWT is a JWT-shaped credential with claims and a bogus signature.
func unsignedJWT(t *testing.T, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(b) + "." + enc.EncodeToString([]byte("not-a-signature"))
}
