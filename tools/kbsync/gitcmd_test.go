package kbsync

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// hostileRepo makes f.root a git repository whose config (and an included one) and
// environment name a command for every config key and variable through which git can
// run one, each writing its own marker file into markers. It returns markers.
func hostileRepo(t *testing.T, f *fixture, env bool) string {
	t.Helper()
	f.git("init", "-q")
	f.write(".gitattributes", "* filter=evil\n")
	f.write(".gitignore", "*.log\n")
	f.write("README.md", "tracked\n")
	f.write("docs/guide.md", "guide\n")
	f.write("debug.log", "ignored\n")
	f.git("add", "README.md", ".gitignore")
	f.write("notes.md", "untracked\n")
	markers := t.TempDir()
	script := func(name string) string {
		p := filepath.Join(markers, "bin", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("#!/bin/sh\ntouch %q\ncat >/dev/null 2>&1 </dev/null\nexit 0\n", filepath.Join(markers, "ran-"+name))
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := filepath.Join(markers, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-index-change", "pre-commit", "post-checkout", "reference-transaction", "fsmonitor-watchman"} {
		if err := os.Symlink(script("hook-"+h), filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
	}
	included := filepath.Join(markers, "included.config")
	if err := os.WriteFile(included, []byte("[core]\n\tfsmonitor = "+script("included-fsmonitor")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{
		"core.fsmonitor":      script("core.fsmonitor"),
		"core.hooksPath":      hooks,
		"core.pager":          script("core.pager"),
		"pager.ls-files":      script("pager.ls-files"),
		"pager.rev-parse":     script("pager.rev-parse"),
		"core.sshCommand":     script("core.sshCommand"),
		"core.askPass":        script("core.askPass"),
		"core.editor":         script("core.editor"),
		"diff.external":       script("diff.external"),
		"filter.evil.clean":   script("filter.clean"),
		"filter.evil.smudge":  script("filter.smudge"),
		"filter.evil.process": script("filter.process"),
		"credential.helper":   "!" + script("credential.helper"),
		"core.untrackedCache": "true",
		"include.path":        included,
	}
	for k, v := range cfg {
		f.git("config", k, v)
	}
	f.git("config", "includeIf.gitdir:"+f.root+"/.git.path", included)
	if !env {
		return markers
	}
	// The caller's environment: variables that would point git at another repository or
	// config, or name commands.
	other := filepath.Join(markers, "other.git")
	f.git("init", "-q", "--bare", other)
	f.git("--git-dir", other, "config", "core.fsmonitor", script("GIT_DIR-fsmonitor"))
	t.Setenv("GIT_EXTERNAL_DIFF", script("GIT_EXTERNAL_DIFF"))
	t.Setenv("GIT_PAGER", script("GIT_PAGER"))
	t.Setenv("PAGER", script("PAGER"))
	t.Setenv("GIT_SSH_COMMAND", script("GIT_SSH_COMMAND"))
	t.Setenv("GIT_ASKPASS", script("GIT_ASKPASS"))
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", script("GIT_CONFIG_COUNT"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='"+script("GIT_CONFIG_PARAMETERS")+"'")
	t.Setenv("GIT_TRACE", filepath.Join(markers, "ran-GIT_TRACE"))
	t.Setenv("GIT_TRACE2_EVENT", filepath.Join(markers, "ran-GIT_TRACE2"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(markers, "index"))
	t.Setenv("GIT_DIR", other)
	t.Setenv("GIT_WORK_TREE", f.root)
	return markers
}

func ranMarkers(t *testing.T, markers string) []string {
	t.Helper()
	entries, err := os.ReadDir(markers)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "ran-") {
			ran = append(ran, strings.TrimPrefix(e.Name(), "ran-"))
		}
	}
	return ran
}

// TestGitRunsNoCommandOfTheRepository: a repository whose config and the caller's
// environment name commands for every key git could run one through is listed exactly
// as git lists it, and none of the commands runs, in a dry run and a real sync.
func TestGitRunsNoCommandOfTheRepository(t *testing.T) {
	for _, env := range []bool{false, true} {
		t.Run(fmt.Sprintf("env=%v", env), func(t *testing.T) { testGitRunsNoCommand(t, env) })
	}
}

func testGitRunsNoCommand(t *testing.T, env bool) {
	f := newFixture(t, r2rtest.Options{})
	markers := hostileRepo(t, f, env)
	ctx := context.Background()
	got, err := ListFiles(ctx, f.root, f.root)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{".gitattributes", ".gitignore", "README.md", "docs/guide.md", "notes.md"}
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	s := f.syncer(true)
	plan, err := s.Plan(ctx) // what a dry run does
	if err != nil {
		t.Fatal(err)
	}
	if sum := s.Run(ctx, plan, nil); !sum.OK() || len(sum.Uploaded) != len(want) {
		t.Errorf("sync %+v", sum)
	}
	if ran := ranMarkers(t, markers); len(ran) > 0 {
		t.Fatalf("git ran commands of the repository or the caller's environment: %v", ran)
	}
}
