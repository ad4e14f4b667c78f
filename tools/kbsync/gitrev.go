package kbsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Head returns the commit the git work tree at dir has checked out; "" when dir is in no
// work tree, the repository has no commit yet or git is not installed.
func Head(ctx context.Context, dir string) string {
	if _, err := exec.LookPath("git"); err != nil {
		return ""
	}
	out, err := gitCommand(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").Output()
	if err != nil {
		return ""
	}
	if c := strings.TrimSpace(string(out)); IsCommitID(c) {
		return c
	}
	return ""
}

// IsCommitID reports whether s is a full commit id (SHA-1 or SHA-256, lower-case hex).
// Commit ids read from anywhere else are checked with it before git sees them.
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// ChangedSince returns which of paths (relative to the root of the work tree at dir)
// differ between commit and to (a commit id; "" = HEAD), deleted ones included. It compares the two commits'
// trees (git diff-tree): no file of the work tree is read, so no filter, hook or other
// program of the repository runs. Paths are literal (no pathspec magic).
func ChangedSince(ctx context.Context, dir, commit, to string, paths []string) ([]string, error) {
	if !IsCommitID(commit) {
		return nil, fmt.Errorf("%q is not a commit id", commit)
	}
	if to == "" {
		to = "HEAD"
	} else if !IsCommitID(to) {
		return nil, fmt.Errorf("%q is not a commit id", to)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("git is not installed")
	}
	args := append([]string{"--literal-pathspecs", "diff-tree", "-r", "-z", "--name-only", "--no-renames",
		"--no-ext-diff", "--no-textconv", commit, to, "--"}, paths...)
	cmd := gitCommand(ctx, dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff-tree: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var changed []string
	for f := range bytes.SplitSeq(out, []byte{0}) {
		if len(f) > 0 {
			changed = append(changed, string(f))
		}
	}
	return changed, nil
}
