package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// status of a team project names the team collection, its owner and what the caller is in
// it; a non-member is told whom to ask and what to run (team.JoinAdvice).
func TestStatusTeam(t *testing.T) {
	f := newAuthFixture(t)
	statusLogin(t, f)
	ctx := context.Background()
	f.srv.CreateUser("owner@example.com", "pw-owner", false)
	anon, err := r2r.New(r2r.Options{BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := anon.Login(ctx, "owner@example.com", "pw-owner")
	if err != nil {
		t.Fatal(err)
	}
	owner := anon.WithCredentials(r2r.Bearer(tp.AccessToken.Token))
	col, err := owner.CreateCollection(ctx, "claude-code-proj", "the team's")
	if err != nil {
		t.Fatal(err)
	}
	proj := statusProject(t, "proj", `{"collection": "`+col.ID+`", "owner": "owner@example.com"}`)

	rep := decodeReport(t, f.status("--url", f.srv.URL, "--project-dir", proj, "--json"))
	if tm := rep.Project.Team; tm == nil || tm.Access != team.AccessNone || rep.Usable ||
		!strings.Contains(strings.Join(rep.Problems, "\n"), "owner@example.com to run, in the repository:\n  r2r-mcp team add "+f.uid) {
		t.Fatalf("status as a non-member: team %+v, problems %q", tm, rep.Problems)
	}
	if err := owner.AddUserToCollection(ctx, col.ID, f.uid); err != nil {
		t.Fatal(err)
	}
	r := f.status("--url", f.srv.URL, "--project-dir", proj)
	if !strings.Contains(r.stdout, "owner owner@example.com; you ("+testEmail+") are a member") {
		t.Fatalf("status as a member:\n%s%s", r.stdout, r.stderr)
	}
}
