package cmd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// TestTeamSkills: a SKILL.md ann adds is a prompt of bob's fresh serve, and a slash command
// in his Claude Code; when ann changes it, bob's running session is told
// notifications/prompts/list_changed and serves the new version.
func TestTeamSkills(t *testing.T) {
	servertest.Build(t)
	teamSkills(t, emulatorBackend(t))
}

// TestTeamSkillsReal is TestTeamSkills on the real R2R (make test-real).
func TestTeamSkillsReal(t *testing.T) {
	servertest.Build(t)
	teamSkills(t, realBackend(t))
}

const (
	skillName = "deploy-staging"
	skillV1   = "---\nname: " + skillName + "\ndescription: Deploy the service to staging\n---\n\nRun make deploy ENV=staging for $ARGUMENTS.\n"
	listed    = "notifications/prompts/list_changed"
)

func teamSkills(t *testing.T, be teamBackend) {
	w := newTeamWorld(t, be)
	w.clone("ann")
	ann := w.mates["ann"]
	w.run("ann", "team", "init")
	git(t, ann.clone, "add", ".r2r-mcp.json")
	git(t, ann.clone, "commit", "-q", "-m", "share the knowledge base")
	git(t, ann.clone, "push", "-q", "origin", "main")
	w.run("ann", "team", "add", w.mates["bob"].id)
	w.clone("bob")
	bob := w.mates["bob"]

	skillFile := filepath.Join(ann.clone, ".claude", "skills", "deploy", "SKILL.md")
	writeRepoFile(t, ann.clone, ".claude/skills/deploy/SKILL.md", skillV1)
	if out := w.run("ann", "skill", "add", skillFile).Stdout; !strings.Contains(out, "Added skill "+skillName+" v1") {
		t.Fatalf("ann's skill add: %s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The shortest poll, so ann's change reaches bob's running session in seconds.
	session := servertest.Serve(ctx, t, bob.clone, append(bob.env, "R2R_MCP_SKILL_POLL=5s"))
	wantSkill(ctx, t, session, "v1", "Run make deploy ENV=staging for billing.")

	t.Run("claude code", func(t *testing.T) {
		env := servertest.ClaudeEnv(bob.env)
		claude := servertest.ClaudeCLI(t)
		runClaude(t, bob.clone, env, claude, "mcp", "add", "r2r", "--", servertest.Build(t), "serve")
		servertest.WantSlashCommands(t, bob.clone, env, "mcp__r2r__"+skillName, "mcp__r2r__ask")
	})

	before := session.Notifications(listed)
	if err := os.WriteFile(skillFile, []byte(strings.Replace(skillV1, "ENV=staging", "ENV=staging SMOKE=1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := w.run("ann", "skill", "add", skillFile).Stdout; !strings.Contains(out, "Updated skill "+skillName+" to v2") {
		t.Fatalf("ann's skill add of the change: %s", out)
	}
	if err := session.WaitNotifications(ctx, listed, before+1); err != nil {
		t.Fatalf("bob's running session: %v\n%s", err, session.Stderr())
	}
	wantSkill(ctx, t, session, "v2", "Run make deploy ENV=staging SMOKE=1 for billing.")
}

// wantSkill checks the session lists the skill at version and its body, given "billing",
// is body.
func wantSkill(ctx context.Context, t *testing.T, s *servertest.Session, version, body string) {
	t.Helper()
	titles, err := s.ListPrompts(ctx)
	if err != nil || titles["ask"] == "" || !strings.Contains(titles[skillName], version) {
		t.Fatalf("bob's prompts, want %s %s: %v %v\n%s", skillName, version, titles, err, s.Stderr())
	}
	got, err := s.GetPrompt(ctx, skillName, map[string]string{"arguments": "billing"})
	if err != nil || !strings.Contains(got, body) {
		t.Fatalf("bob's prompts/get %s: %q %v", skillName, got, err)
	}
}

// runClaude runs the Claude Code CLI, bounded, and fails the test when it fails.
func runClaude(t *testing.T, dir string, env []string, claude string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
