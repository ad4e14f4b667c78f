package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// status and doctor time one authenticated request and, with an API key that costs R2R
// more than slowAPIKey, say what it costs and how to switch; a session gets no such note.
func TestStatusAndDoctorSayWhatAnAPIKeyCosts(t *testing.T) {
	for _, tt := range []struct {
		name     string
		setup    func(f *authFixture)
		wantNote bool
	}{
		{"stored API key", func(f *authFixture) { f.seedAPIKey() }, true},
		{"session", func(f *authFixture) {
			if r := f.loginWithPassword(); r.err != nil {
				t.Fatal(r.err)
			}
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t)
			tt.setup(f)
			// R2R takes as long for every request as R2R 3.6.6's bcrypt check of an API key
			// (about 0.5 s; 150 ms is enough here): slow for a session too, which still gets
			// no note.
			f.srv.Configure(func(o *r2rtest.Options) { o.Latency = 150 * time.Millisecond })
			proj := statusProject(t, "proj", "")
			rep := decodeReport(t, f.status("--url", f.srv.URL, "--project-dir", proj, "--json"))
			note := strings.Join(rep.Warnings, "\n")
			if tt.wantNote != strings.Contains(note, "run r2r-mcp login") || (tt.wantNote && rep.Credential.CheckMS < 150) {
				t.Errorf("check %d ms, warnings %q", rep.Credential.CheckMS, rep.Warnings)
			}
			if tt.wantNote && !strings.Contains(note, "bcrypt") {
				t.Errorf("warnings %q do not say why", rep.Warnings)
			}

			res, client, err := resolveR2R(t.Context(), f.deps(nil, nil, nil), f.authEnv(), f.dir, f.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			d := &doctor{res: res, client: client, reachable: true}
			c := d.checkCredentials(t.Context())
			if want := map[bool]string{true: statusWarn, false: statusOK}[tt.wantNote]; c.Status != want ||
				!strings.Contains(c.Detail, "GET /v3/users/me took") || tt.wantNote != strings.Contains(c.Fix, "run r2r-mcp login") {
				t.Errorf("doctor: %+v", c)
			}
		})
	}
}

func TestAPIKeyCost(t *testing.T) {
	tests := []struct {
		kind string
		took time.Duration
		want string
	}{
		{"api_key", 480 * time.Millisecond, "took 480 ms on this R2R"},
		{"api_key", 20 * time.Millisecond, ""},
		{"refresh_token", 480 * time.Millisecond, ""},
		{"password", time.Second, ""},
	}
	for _, tt := range tests {
		if got := apiKeyCost(tt.kind, tt.took); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("apiKeyCost(%s, %v) = %q", tt.kind, tt.took, got)
		}
	}
}
