package cmd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func (f *authFixture) indexCreate(args ...string) cmdResult {
	f.t.Helper()
	return f.run(func(d Deps) *cobra.Command {
		c := newIndexCmd(d, func(o *indexOptions) error { o.Env = f.authEnv(); return runIndexCreate(o) })
		return c
	}, strings.NewReader(""), append([]string{"create"}, args...)...)
}

// indexAdminEmail is the R2R superuser the index tests log in as.
const indexAdminEmail = "root@example.com"

func TestIndexCreate(t *testing.T) {
	tests := []struct {
		name      string
		user      bool // log in as a user who is not a superuser
		setup     func(f *authFixture)
		wantPosts int    // POST /v3/indices requests
		created   bool   // --json's created
		errLike   string // substring of the error; "" = success
	}{
		{name: "no index: builds one", wantPosts: 1, created: true},
		{name: "an index exists: nothing to do", wantPosts: 1,
			setup: func(f *authFixture) { f.indexCreate() }},
		{name: "403 on the list: ask a superuser", errLike: "refused its index routes to this account",
			setup: func(f *authFixture) { f.srv.ForceStatus("GET /v3/indices", http.StatusForbidden, 1) }},
		{name: "403 on the build", wantPosts: 1, errLike: "ask an R2R superuser",
			setup: func(f *authFixture) { f.srv.ForceStatus("POST /v3/indices", http.StatusForbidden, 1) }},
		{name: "500 on the build: see R2R's log", wantPosts: 1, errLike: "R2R could not build the index",
			setup: func(f *authFixture) { f.srv.ForceStatus("POST /v3/indices", http.StatusInternalServerError, 1) }},
		// R2R lets any user build an index, and it covers every user's chunks.
		{name: "not a superuser: nothing built", user: true, errLike: testEmail + " is not an R2R superuser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t)
			f.env["R2R_API_URL"] = f.srv.URL
			f.env["R2R_EMAIL"], f.env["R2R_PASSWORD"] = testEmail, testPassword
			if !tt.user {
				f.srv.CreateUser(indexAdminEmail, testPassword, true)
				f.env["R2R_EMAIL"] = indexAdminEmail
			}
			if tt.setup != nil {
				tt.setup(f)
			}
			r := f.indexCreate("--json")
			if got := f.srv.Count("POST /v3/indices"); got != tt.wantPosts {
				t.Errorf("POST /v3/indices sent %d times, want %d", got, tt.wantPosts)
			}
			if tt.errLike != "" {
				if r.err == nil || !strings.Contains(r.err.Error(), tt.errLike) {
					t.Fatalf("err = %v, want it to contain %q", r.err, tt.errLike)
				}
				if r.stdout != "" {
					t.Errorf("stdout %q on failure", r.stdout)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("index create: %v\nstderr: %s", r.err, r.stderr)
			}
			var rep indexReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("stdout %q: %v", r.stdout, err)
			}
			if rep.Created != tt.created || !strings.HasPrefix(rep.Index, "ix_vector_cosine_ops_hnsw__vec_") {
				t.Errorf("report %+v, want created=%v and R2R's index name", rep, tt.created)
			}
		})
	}
}
