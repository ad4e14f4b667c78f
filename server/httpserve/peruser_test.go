package httpserve_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// tokens logs m in n times and returns the n access tokens.
func tokens(t testing.TB, tm *team, email, password string, n int) []string {
	t.Helper()
	c, err := r2r.New(r2r.Options{BaseURL: tm.Emu.URL})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, n)
	for i := range out {
		pair, err := c.Login(context.Background(), email, password)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = pair.AccessToken.Token
	}
	return out
}

// One user's calls share the user's state whichever of the user's credentials they carry
// (search history here), and each R2R request carries the credential of its own call.
func TestCredentialsOfOneUserShareTheUser(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) {})
	toks := tokens(t, tm, tm.Alice.Email, "pw-"+tm.Alice.Email, 2)
	for i, cred := range []string{toks[0], tm.Alice.Key, toks[1]} {
		c := mcpClient(t, rep.URL, bearer(cred))
		q := fmt.Sprintf("payout question %d", i)
		if text, res := callText(t, c, "r2r_search", map[string]any{"query": q}); res.IsError {
			t.Fatalf("search %d: %s", i, text)
		}
		last := tm.Emu.LastRequest(searchRoute)
		sent := last.Header.Get("X-API-Key")
		if a := last.Header.Get("Authorization"); a != "" {
			sent = strings.TrimPrefix(a, "Bearer ")
		}
		if sent != cred {
			t.Errorf("search %d reached R2R with another credential of the user", i)
		}
		h := history(t, c)
		for j := range i + 1 {
			if !strings.Contains(h, fmt.Sprintf("payout question %d", j)) {
				t.Errorf("history with credential %d lacks the search made with credential %d:\n%s", i, j, h)
			}
		}
	}
}
