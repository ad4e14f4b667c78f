package kbsync

import (
	"context"
	"fmt"
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

// noFetchEnv keeps git from fetching, which in a partial clone (git clone --filter) it does
// by itself whenever it needs an object the clone lacks, from the promisor remote the
// repository's config names: with a transport that may be any command (ext::), allowed by
// the repository's own protocol.<name>.allow, which protocol.allow=never on the command
// line does not outrank. GIT_NO_LAZY_FETCH stops the fetch (git 2.39.4 and later);
// GIT_ALLOW_PROTOCOL, whatever git's version, outranks every protocol.<name>.allow and
// allows only the protocols it lists, here none: its value cannot be a protocol's name (a
// remote helper's name has no "_").
var noFetchEnv = []string{"GIT_NO_LAZY_FETCH=1", "GIT_ALLOW_PROTOCOL=no_protocol_at_all"}

// gitCommand is every git command r2r-mcp runs: in dir, with args, reading the repository
// but never running a program or hook the repository's config (or the caller's
// environment) names, nor fetching anything. The system config is not read (it is not the
// user's); the user's global config is (core.excludesFile), with the same overrides
// winning over it.
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
// (whose refresh would run the post-index-change hook were hooks on), prompting or
// fetching.
func gitEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+5+len(noFetchEnv))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "PAGER" || k == "LESSOPEN" || k == "LESSCLOSE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat")
	return append(env, noFetchEnv...)
}

// PartialCloneError is git failing in a partial clone, most likely for an object the clone
// lacks and git was not let fetch.
type PartialCloneError struct {
	Dir string // the directory git ran in
}

func (e *PartialCloneError) Error() string {
	return fmt.Sprintf("git cannot list the files of %s: it is a partial clone (git clone --filter) lacking objects git needs, "+
		"and r2r-mcp never lets git fetch them (a fetch can run a command the repository's config names). "+
		"If you trust its remote, make it a full clone yourself (unset remote.<name>.partialclonefilter, then run "+
		"`git fetch --refetch <name>`), or sync a full clone.", e.Dir)
}

// isPartialClone reports whether the repository at dir is a partial clone: its config
// names a promisor remote (extensions.partialClone, or remote.<name>.promisor true).
func isPartialClone(ctx context.Context, dir string) bool {
	out, err := gitCommand(ctx, dir, "config", "--get-regexp", `^(extensions\.partialclone|remote\..*\.promisor)$`).Output()
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(out)) {
		_, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToLower(value) {
		case "false", "no", "off", "0":
		default:
			return true
		}
	}
	return false
}
