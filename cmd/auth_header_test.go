package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

func (f *authFixture) authHeader(args ...string) cmdResult {
	return f.run(func(d Deps) *cobra.Command {
		return newAuthCmd(d, func(o *authHeaderOptions) error { o.Env = f.authEnv(); return runAuthHeader(o) })
	}, strings.NewReader(""), append([]string{"header"}, args...)...)
}

func TestAuthHeaderPrintsTheSessionsToken(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.authHeader("--url", f.srv.URL); r.err == nil || !strings.Contains(r.err.Error(), "run r2r-mcp login") || r.stdout != "" {
		t.Fatalf("not logged in: %v %q", r.err, r.stdout)
	}
	if r := f.loginWithPassword(); r.err != nil {
		t.Fatal(r.err)
	}
	sec, _, _ := f.keyringSecret()
	r := f.authHeader() // the URL login saved
	if r.err != nil || r.stderr != "" {
		t.Fatalf("auth header: %v %q", r.err, r.stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 1 || got["Authorization"] != "Bearer "+sec.AccessToken {
		t.Fatalf("stdout %q (%v), want the stored access token as headersHelper JSON", r.stdout, err)
	}
	if !f.sessionWorks(sec) {
		t.Error("the printed token does not work")
	}
	if n := f.srv.Count("POST /v3/users/refresh-token"); n != 0 {
		t.Errorf("a fresh session was renewed %d times", n)
	}
	line := f.authHeader("--format", "line")
	if line.err != nil || line.stdout != "Authorization: Bearer "+sec.AccessToken+"\n" {
		t.Errorf("--format line: %v %q", line.err, line.stdout)
	}

	f.env["R2R_API_KEY"] = "key_env.secretpart"
	k := f.authHeader()
	if k.err != nil || !strings.Contains(k.stdout, `"Bearer key_env.secretpart"`) || !strings.Contains(k.stderr, "bcrypt") ||
		strings.Contains(k.stderr, "secretpart") || !strings.Contains(k.stderr, auth.SourceEnvAPIKey) {
		t.Errorf("with an API key: %v %q %q", k.err, k.stdout, k.stderr)
	}
}
