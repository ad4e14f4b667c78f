package kbsync

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os/exec"
	"strconv"
	"strings"
)

// TreeEntry is one file of a commit's tree.
type TreeEntry struct {
	Blob string // git's object id
	Size int64
}

// refCandidates are the refs a team follows when the configuration names none, in order:
// the remote's default branch as the last fetch recorded it, then the usual names.
var refCandidates = []string{"refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
	"refs/heads/main", "refs/heads/master"}

// ResolveTeamRef finds the ref a team project follows in the repository at dir: configured
// (a branch or ref name) or the first of refCandidates that exists. It returns the full ref
// name and its commit; ErrNoTeamRef when none exists.
func ResolveTeamRef(ctx context.Context, dir, configured string) (ref, commit string, err error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", "", ErrNoTeamRef
	}
	cands := refCandidates
	if configured != "" {
		if strings.HasPrefix(configured, "-") || strings.ContainsAny(configured, " \t\n:^~?*[\\") {
			return "", "", fmt.Errorf("%q is not a ref name", configured)
		}
		cands = []string{configured, "refs/remotes/origin/" + configured, "refs/heads/" + configured}
	}
	for _, c := range cands {
		out, err := gitCommand(ctx, dir, "rev-parse", "--verify", "--quiet", "--symbolic-full-name", c).Output()
		full := strings.TrimSpace(string(out))
		if err != nil || full == "" {
			continue
		}
		out, err = gitCommand(ctx, dir, "rev-parse", "--verify", "--quiet", full+"^{commit}").Output()
		if id := strings.TrimSpace(string(out)); err == nil && IsCommitID(id) {
			return full, id, nil
		}
	}
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	return "", "", ErrNoTeamRef
}

// ErrNoTeamRef: the repository has none of the refs a team could follow.
var ErrNoTeamRef = errors.New("no branch for the team's version: the repository has no origin/HEAD, main or master")

// CommitTime is the committer time of commit (Unix seconds).
func CommitTime(ctx context.Context, dir, commit string) (int64, error) {
	if !IsCommitID(commit) {
		return 0, fmt.Errorf("%q is not a commit id", commit)
	}
	out, err := gitCommand(ctx, dir, "show", "-s", "--no-show-signature", "--format=%ct", commit).Output()
	if err != nil {
		return 0, fmt.Errorf("git show %s: %w", commit, err)
	}
	return strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
}

// MergeBase is the best common ancestor of HEAD and commit; "" when they have none (or
// there is no HEAD yet).
func MergeBase(ctx context.Context, dir, commit string) string {
	out, err := gitCommand(ctx, dir, "merge-base", "HEAD", commit).Output()
	if id := strings.TrimSpace(string(out)); err == nil && IsCommitID(id) {
		return id
	}
	return ""
}

// IsAncestor reports whether commit a is an ancestor of (or the same as) b. A commit the
// repository does not have is no ancestor.
func IsAncestor(ctx context.Context, dir, a, b string) bool {
	if !IsCommitID(a) || !IsCommitID(b) {
		return false
	}
	return gitCommand(ctx, dir, "merge-base", "--is-ancestor", a, b).Run() == nil
}

// HasCommit reports whether the repository has commit.
func HasCommit(ctx context.Context, dir, commit string) bool {
	return IsCommitID(commit) && gitCommand(ctx, dir, "cat-file", "-e", commit+"^{commit}").Run() == nil
}

// ObjectFormat is the repository's object hash: "sha1" or "sha256".
func ObjectFormat(ctx context.Context, dir string) string {
	out, err := gitCommand(ctx, dir, "rev-parse", "--show-object-format").Output()
	if f := strings.TrimSpace(string(out)); err == nil && f == "sha256" {
		return f
	}
	return "sha1"
}

// LsTree lists the regular files of commit's tree under prefix ("" = all), by path
// relative to the repository's root. Symlinks, submodules and other modes are left out: a
// sync writes regular files only.
func LsTree(ctx context.Context, dir, commit, prefix string) (map[string]TreeEntry, error) {
	if !IsCommitID(commit) {
		return nil, fmt.Errorf("%q is not a commit id", commit)
	}
	args := []string{"--literal-pathspecs", "ls-tree", "-r", "-l", "-z", "--full-tree", commit}
	if prefix != "" && prefix != "." {
		args = append(args, "--", prefix)
	}
	cmd := gitCommand(ctx, dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s: %v: %s", commit, err, strings.TrimSpace(stderr.String()))
	}
	files := map[string]TreeEntry{}
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		// "<mode> SP <type> SP <object> SP* <size> TAB <path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 4 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		files[string(path)] = TreeEntry{Blob: f[2], Size: size}
	}
	return files, nil
}

// ReadBlob returns the content of blob id, refusing one over limit bytes (size is what the
// tree said) before reading it.
func ReadBlob(ctx context.Context, dir, id string, size, limit int64) ([]byte, error) {
	if !IsCommitID(id) { // object ids have the form of commit ids
		return nil, fmt.Errorf("%q is not an object id", id)
	}
	if size > limit {
		return nil, fmt.Errorf("the file is %d bytes, over the limit of %d", size, limit)
	}
	out, err := gitCommand(ctx, dir, "cat-file", "blob", id).Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file %s: %w", id, err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("the file is over the limit of %d bytes", limit)
	}
	return out, nil
}

// BlobID is git's object id of data in the object format ("" = none wanted): the hash of
// "blob <size>\x00" followed by the content, as `git hash-object --no-filters` computes it.
func BlobID(format string, data []byte) string {
	var h hash.Hash
	switch format {
	case "":
		return ""
	case "sha256":
		h = sha256.New()
	default:
		h = sha1.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
