package httpserve_test

import (
	"context"
	"io"
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
