package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// viewEnv is an env whose project's .r2r-mcp.json names ann's team collection by id; the
// tools act as bob (who is not a member yet) unless as switches them.
type viewEnv struct {
	*env
	ann, bob     *r2r.Client
	annID, bobID string
	teamID       string
}

func newViewEnv(t *testing.T) *viewEnv {
	t.Helper()
	e := newEnv(t, withEmulator(r2rtest.Options{RequireAuth: true}))
	te := &viewEnv{env: e}
	te.annID = e.r2r.CreateUser("ann@example.com", "pw-ann", false)
	te.bobID = e.r2r.CreateUser("bob@example.com", "pw-bob", false)
	te.ann, te.bob = loginAs(t, e.r2r.URL, "ann@example.com", "pw-ann"), loginAs(t, e.r2r.URL, "bob@example.com", "pw-bob")
	col, err := te.ann.CreateCollection(context.Background(), "claude-code-demo-app", "the team's")
	if err != nil {
		t.Fatal(err)
	}
	te.teamID = col.ID
	cfg := `{"collection": "` + col.ID + `", "owner": "ann@example.com"}`
	if err := os.WriteFile(filepath.Join(e.project, ".r2r-mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	te.as(te.bob)
	return te
}

func loginAs(t *testing.T, url, email, pw string) *r2r.Client {
	t.Helper()
	anon, err := r2r.New(r2r.Options{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := anon.Login(context.Background(), email, pw)
	if err != nil {
		t.Fatal(err)
	}
	return anon.WithCredentials(r2r.Bearer(tp.AccessToken.Token))
}

// as makes the tools act as c (before the first call, or between calls).
func (te *viewEnv) as(c *r2r.Client) { te.deps.Client, te.client = c, c }

// A non-member of a team project's collection is told, by whichever tool met R2R's 403, whom
// to ask and what to run; r2r_status names the collection, its owner and what the caller is
// in it, and warns of another collection of the same name (bob's own, which ann sees as a member of it).
func TestTeamStandingAndJoinAdvice(t *testing.T) {
	te := newViewEnv(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"r2r_search", map[string]any{"query": "drain workers"}},
		{"r2r_list_documents", map[string]any{}},
		{"r2r_recall", map[string]any{}},
	} {
		_, info := te.fail(tc.tool, tc.args)
		if !strings.Contains(info.Message, "r2r-mcp team add "+te.bobID) || !strings.Contains(info.Message, "ann@example.com") {
			t.Errorf("%s as a non-member: %s", tc.tool, info.Message)
		}
	}
	var st StatusOutput
	structured(t, te.ok("r2r_status", nil), &st)
	if tm := st.Project.Team; tm == nil || tm.Access != "none" || !strings.Contains(st.Project.Error, "r2r-mcp team add "+te.bobID) {
		t.Fatalf("r2r_status as a non-member: %+v, error %q", tm, st.Project.Error)
	}

	ctx := context.Background()
	if err := te.ann.AddUserToCollection(ctx, te.teamID, te.bobID); err != nil {
		t.Fatal(err)
	}
	// Bob's own collection of the same name, which ann can see as a member of it.
	own, err := te.bob.CreateCollection(ctx, "claude-code-demo-app", "bob's")
	if err != nil {
		t.Fatal(err)
	}
	if err := te.bob.AddUserToCollection(ctx, own.ID, te.annID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		who    *r2r.Client
		access string
		warn   bool
	}{{te.bob, "member", true}, {te.ann, "owner", true}} {
		te.as(tc.who)
		st = StatusOutput{}
		res := te.ok("r2r_status", nil)
		structured(t, res, &st)
		tm := st.Project.Team
		if tm == nil || tm.Access != tc.access || !strings.Contains(tm.Summary, "ann@example.com") || st.Project.Error != "" {
			t.Fatalf("r2r_status as %s: %+v, error %q", tc.access, tm, st.Project.Error)
		}
		if warned := len(tm.Warnings) == 1 && strings.Contains(tm.Warnings[0], own.ID); warned != tc.warn || !strings.Contains(text(res), tm.Summary) {
			t.Errorf("r2r_status as %s: warnings %q; text:\n%s", tc.access, tm.Warnings, text(res))
		}
	}
}
