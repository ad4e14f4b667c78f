package kbsync

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// gitOverrides are set on git's command line, which outranks every config file (the
// repository's, and any it includes): the keys through which the read-only commands r2r-mcp
// runs (rev-parse, ls-files, diff-tree) could start a program. core.fsmonitor is the one git really
// runs while reading the index; hooks (post-index-change), pagers, ssh, askpass, editors,
// credential helpers and external diff are never reached by these commands but are
// switched off too, so a later command added here stays safe. Filter drivers
// (filter.<name>.*) have free-form names and cannot be overridden one by one: ls-files,
// rev-parse and diff-tree (of two commits' trees) never read a work tree file, so they
// never start one.
var gitOverrides = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.pager=cat",
	"core.sshCommand=false",
	"core.askPass=",
	"core.editor=false",
	"sequence.editor=false",
	"credential.helper=",
	"diff.external=",
	"protocol.allow=never",
}

// gitCommand is every git command r2r-mcp runs: in dir, with args, reading the repository
// but never running a program or hook the repository's config (or the caller's
// environment) names. The system config is not read (it is not the user's); the user's
// global config is (core.excludesFile), with the same overrides winning over it.
func gitCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	full := make([]string, 0, 2*len(gitOverrides)+1+len(args))
	full = append(full, "--no-pager")
	for _, o := range gitOverrides {
		full = append(full, "-c", o)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = gitEnv(os.Environ())
	return cmd
}

// gitEnv is environ without the caller's GIT_* variables (GIT_DIR, GIT_WORK_TREE,
// GIT_INDEX_FILE, GIT_CONFIG_*, GIT_EXEC_PATH, GIT_TRACE*, GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF,
// …: each could point git at another repository or config, name a program or make git
// write files) and pager settings, plus the ones that keep git from writing the index
// (whose refresh would run the post-index-change hook were hooks on) or prompting.
func gitEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+5)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "PAGER" || k == "LESSOPEN" || k == "LESSCLOSE" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat")
}
