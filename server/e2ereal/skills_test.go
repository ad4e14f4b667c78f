package e2ereal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestRealTeamSkills is team skills on the real R2R through the built binary, two users of
// one collection (named by id in bob's .r2r-mcp.json): ann adds a SKILL.md with `skill add` (creating the project's collection),
// bob, once a member, sees it as a prompt of his fresh serve beside the built-in ones and
// gets its body; ann's changed SKILL.md is v2 in bob's next serve; r2r_troubleshoot in
// bob's session finds ann's fix for a variant of its error first.
func TestRealTeamSkills(t *testing.T) {
	r := liveR2R(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	name := "skills-" + unique(t)
	skill := "---\nname: deploy-staging\ndescription: Deploy the service to staging\n---\n\nRun make deploy ENV=staging for $ARGUMENTS.\n"
	annDir := servertest.GitProject(t, name, map[string]string{".claude/skills/deploy/SKILL.md": skill})
	bobDir := servertest.GitProject(t, name, map[string]string{"README.md": "# bob's clone\n"})
	admin := adminClient(ctx, t, r)
	login, err := admin.Login(ctx, r.Email, r.Password)
	if err != nil {
		t.Fatal(err)
	}
	tok := login.AccessToken.Token
	ann := newTeamUser(t, r, tok, "ann-"+unique(t)+"@example.com")
	bob := newTeamUser(t, r, tok, "bob-"+unique(t)+"@example.com")
	env := func(key string) []string {
		return servertest.Env(t, r.URL, "R2R_API_KEY="+key, "XDG_CACHE_HOME="+t.TempDir(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	}
	run := func(dir string, e []string, args ...string) servertest.Result {
		t.Helper()
		res := servertest.Run(t, dir, e, "", args...)
		if res.Code != 0 {
			t.Fatalf("%v exited %d:\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
		return res
	}
	skillFile := filepath.Join(annDir, ".claude", "skills", "deploy", "SKILL.md")
	if res := run(annDir, env(ann.key), "skill", "add", skillFile); !strings.Contains(res.Stdout, "Added skill deploy-staging v1") {
		t.Fatalf("skill add: %s", res.Stdout)
	}
	annSession := servertest.Serve(ctx, t, annDir, env(ann.key))
	fix, err := annSession.Call(ctx, "r2r_remember", map[string]any{"kind": "fix", "title": "Raise the open-file limit",
		"body": "ulimit -n 65536 before starting the cache.", "error": "open /tmp/build-4412/cache.db: too many open files (pid 4242)"})
	if err != nil || fix.IsError {
		t.Fatalf("remember the fix: %v %s", err, fix.Text)
	}
	coll, _ := fix.Structured["collection_id"].(string)
	me, err := admin.WithCredentials(r2r.APIKey(bob.key)).Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.AddUserToCollection(ctx, coll, me.ID); err != nil {
		t.Fatal(err)
	}
	annSession.Close()
	// A team shares the collection by naming it in the project (R2R finds a collection by
	// name among the caller's own only).
	if err := os.WriteFile(filepath.Join(bobDir, ".r2r-mcp.json"), []byte(`{"collection": "`+coll+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	bobSession := servertest.Serve(ctx, t, bobDir, env(bob.key))
	titles, err := bobSession.ListPrompts(ctx)
	if err != nil || titles["ask"] == "" || !strings.Contains(titles["deploy-staging"], "v1") {
		t.Fatalf("bob's prompts: %v %v\n%s", titles, err, bobSession.Stderr())
	}
	body, err := bobSession.GetPrompt(ctx, "deploy-staging", map[string]string{"arguments": "billing"})
	if err != nil || !strings.Contains(body, "Run make deploy ENV=staging for billing.") {
		t.Fatalf("bob's prompts/get: %q %v", body, err)
	}
	ts, err := bobSession.Call(ctx, "r2r_troubleshoot", map[string]any{"error": "goroutine 1 [running]:\nopen /tmp/build-9/cache.db: too many open files (pid 77)\n\tmain.go:12 +0x1d"})
	if fixes, _ := ts.Structured["fixes"].([]any); err != nil || len(fixes) == 0 || fixes[0].(map[string]any)["match"] != "same_error" {
		t.Fatalf("bob's troubleshoot: %v %s", err, ts.Text)
	}
	bobSession.Close()

	if err := os.WriteFile(skillFile, []byte(strings.Replace(skill, "ENV=staging", "ENV=staging SMOKE=1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run(annDir, env(ann.key), "skill", "add", skillFile); !strings.Contains(res.Stdout, "Updated skill deploy-staging to v2") {
		t.Fatalf("skill add of the change: %s", res.Stdout)
	}
	again := servertest.Serve(ctx, t, bobDir, env(bob.key))
	if titles, err := again.ListPrompts(ctx); err != nil || !strings.Contains(titles["deploy-staging"], "v2") {
		t.Fatalf("bob's prompts after the update: %v %v", titles, err)
	}
}
