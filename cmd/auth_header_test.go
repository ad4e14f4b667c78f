package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
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

	key := f.seedAPIKey().Secret
	_, raw, _ := strings.Cut(key, ".")
	f.env["R2R_API_KEY"] = key
	k := f.authHeader()
	if k.err != nil || !strings.Contains(k.stdout, `"Bearer `+key+`"`) || !strings.Contains(k.stderr, "bcrypt") ||
		strings.Contains(k.stderr, raw) || !strings.Contains(k.stderr, auth.SourceEnvAPIKey) {
		t.Errorf("with an API key: %v %q %q", k.err, k.stdout, k.stderr)
	}
}

// auth header never prints a credential R2R refuses: a stored access token R2R blacklisted
// before its exp (a logout with it elsewhere) is renewed and the new one printed, every run
// after that prints the new one without renewing again, and a session or key R2R refuses
// altogether prints nothing and says what to do.
func TestAuthHeaderNeverPrintsARefusedToken(t *testing.T) {
	f := newAuthFixture(t)
	if r := f.loginWithPassword(); r.err != nil {
		t.Fatal(r.err)
	}
	sec, _, _ := f.keyringSecret()
	logout := func(token string) {
		c, err := r2r.New(r2r.Options{BaseURL: f.srv.URL, Credentials: r2r.Bearer(token)})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Logout(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	logout(sec.AccessToken)
	var printed []string
	for run := range 2 {
		r := f.authHeader("--format", "line")
		renewed, _, _ := f.keyringSecret()
		if r.err != nil || r.stdout != "Authorization: Bearer "+renewed.AccessToken+"\n" || renewed.AccessToken == sec.AccessToken ||
			!f.sessionWorks(renewed) {
			t.Fatalf("run %d: %v %q", run, r.err, r.stdout)
		}
		printed = append(printed, r.stdout)
	}
	if printed[0] != printed[1] || f.srv.Count("POST /v3/users/refresh-token") != 1 {
		t.Errorf("printed %q, %d renewals; want one renewal", printed, f.srv.Count("POST /v3/users/refresh-token"))
	}

	tests := []struct {
		name  string
		setup func()
		want  string
	}{
		{"session ended at R2R", func() {
			s, _, _ := f.keyringSecret()
			logout(s.AccessToken)
			anon, _ := r2r.New(r2r.Options{BaseURL: f.srv.URL})
			if _, err := anon.RefreshToken(context.Background(), s.Secret); err != nil { // used up elsewhere
				t.Fatal(err)
			}
		}, "Run `r2r-mcp login` in a terminal"},
		{"API key R2R does not know", func() { f.env["R2R_API_KEY"] = "key_gone.secretpart" }, "Fix R2R_API_KEY where it is set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			r := f.authHeader()
			if r.err == nil || r.stdout != "" || !strings.Contains(r.err.Error(), tt.want) || strings.Contains(r.err.Error(), "secretpart") {
				t.Fatalf("%v %q", r.err, r.stdout)
			}
		})
	}
}
