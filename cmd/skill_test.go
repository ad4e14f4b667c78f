package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// skill runs `r2r-mcp skill <args>` on the fixture's project.
func (f *syncFixture) skill(args ...string) cmdResult {
	f.t.Helper()
	var out, errOut bytes.Buffer
	deps := Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: BuildInfo{Version: "test"},
		Getenv: func(string) string { return "" }}
	c := newSkillCmd(deps, func(verb string, o *skillOptions, a []string) error {
		o.Env = authEnv{ConfigDir: f.config}
		return runSkill(verb, o, a)
	})
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(append(args, "--url", f.srv.URL, "--dir", f.root))
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.ExecuteContext(context.Background())
	return cmdResult{out.String(), errOut.String(), err}
}

// TestSkillCommands: skill add saves a SKILL.md (and a directory of them), again unchanged
// is the same version, changed the next; list, show and export give it back; a built-in
// prompt's name and a secret are refused; remove deletes it.
func TestSkillCommands(t *testing.T) {
	f := newSyncFixture(t)
	f.write(".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy to staging\n---\n\nRun make deploy.\n")
	f.write("skills/notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes\n---\nList merged changes.\n")
	f.write("bad/ask/SKILL.md", "---\nname: ask\ndescription: shadows a built-in prompt\n---\nx\n")
	f.write("bad/leak/SKILL.md", "---\nname: leak\ndescription: a token\n---\nUse ghp_"+strings.Repeat("a1B2", 9)+"\n")
	skillFile := filepath.Join(f.root, ".claude/skills/deploy/SKILL.md")
	if r := f.skill("add", skillFile); r.err != nil || !strings.Contains(r.stdout, "Added skill deploy v1") {
		t.Fatalf("add: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	if r := f.skill("add", skillFile); r.err != nil || !strings.Contains(r.stdout, "unchanged") {
		t.Fatalf("add again: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	if r := f.skill("add", filepath.Join(f.root, "skills")); r.err != nil || !strings.Contains(r.stdout, "Added skill release-notes v1") {
		t.Fatalf("add dir: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	f.write(".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy to staging\n---\n\nRun make deploy, then make smoke.\n")
	if r := f.skill("add", skillFile); r.err != nil || !strings.Contains(r.stdout, "Updated skill deploy to v2") {
		t.Fatalf("update: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	r := f.skill("add", filepath.Join(f.root, "bad"))
	if r.err == nil || !strings.Contains(r.stderr, "built-in prompt") || !strings.Contains(r.stderr, "secret") {
		t.Fatalf("bad skills: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	list := f.skill("list")
	if list.err != nil || strings.Count(list.stdout, "\n") != 2 || !strings.Contains(list.stdout, "v2") || strings.Contains(list.stdout, "leak") {
		t.Fatalf("list: %v\n%s", list.err, list.stdout)
	}
	if show := f.skill("show", "deploy"); show.err != nil || !strings.Contains(show.stdout, "then make smoke") {
		t.Fatalf("show: %v\n%s", show.err, show.stdout)
	}
	f.write(".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: local edit\n---\nmine\n")
	exp := f.skill("export")
	if exp.err == nil || !strings.Contains(exp.stderr, "Kept") {
		t.Fatalf("export over a local edit: %v\n%s%s", exp.err, exp.stdout, exp.stderr)
	}
	got, err := os.ReadFile(filepath.Join(f.root, ".claude/skills/release-notes/SKILL.md"))
	if err != nil || !strings.Contains(string(got), "List merged changes.") {
		t.Fatalf("exported release-notes: %q %v", got, err)
	}
	if exp := f.skill("export", "--force"); exp.err != nil {
		t.Fatalf("export --force: %v\n%s", exp.err, exp.stderr)
	}
	if got, _ := os.ReadFile(skillFile); !strings.Contains(string(got), "then make smoke") {
		t.Fatalf("export --force kept %q", got)
	}
	if rm := f.skill("remove", "deploy"); rm.err != nil || !strings.Contains(rm.stdout, "Removed skill deploy (v2") {
		t.Fatalf("remove: %v\n%s", rm.err, rm.stdout)
	}
	if show := f.skill("show", "deploy"); show.err == nil {
		t.Fatal("a removed skill is still shown")
	}
}

// TestMemoryPatterns: fixes of one error in several variants are one signature with its
// count and newest fix, listed before a signature with one fix.
func TestMemoryPatterns(t *testing.T) {
	f := newSyncFixture(t)
	f.write("a.md", "x")
	if _, r := f.sync(f.root); r.err != nil {
		t.Fatal(r.err)
	}
	f.remember(memory.Draft{Kind: "fix", Title: "Old pool fix", Body: "b", Error: "dial tcp 10.0.0.3:5432: connect: connection refused (pid 12)"})
	f.remember(memory.Draft{Kind: "fix", Title: "Perm fix", Body: "b", Error: "open /etc/app.conf: permission denied"})
	f.remember(memory.Draft{Kind: "fix", Title: "New pool fix", Body: "b", Error: "dial tcp 10.0.0.9:6432: connect: connection refused (pid 98)"})
	r := f.memory("patterns")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.err != nil || len(lines) != 4 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "2×") || !strings.Contains(lines[1], "New pool fix") ||
		!strings.HasPrefix(strings.TrimSpace(lines[2]), "1×") {
		t.Fatalf("patterns: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
}
