package kbsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"
)

// ListFiles lists the files of dir (inside root) that a sync considers, as paths relative
// to root with forward slashes: `git ls-files -co --exclude-standard` when dir is in a git
// work tree (tracked and untracked files, ignored ones left out), else a walk that honours
// the .gitignore files from root down. Tracked files deleted from the work tree are
// listed too; the caller finds them missing. .git directories are never listed.
func ListFiles(ctx context.Context, root, dir string) ([]string, error) {
	files, _, err := listFiles(ctx, root, dir)
	return files, err
}

// listFiles is ListFiles with the directories the walk could not read (their files are not
// listed), each with the reason.
func listFiles(ctx context.Context, root, dir string) ([]string, []Problem, error) {
	prefix, err := filepath.Rel(root, dir)
	if err != nil || prefix == ".." || strings.HasPrefix(prefix, ".."+string(filepath.Separator)) {
		return nil, nil, fmt.Errorf("%s is not inside the project root %s", dir, root)
	}
	prefix = filepath.ToSlash(prefix)
	if prefix == "." {
		prefix = ""
	}
	files, err := gitLsFiles(ctx, dir)
	if errors.Is(err, errNotGit) {
		return walkFiles(root, prefix)
	}
	if err != nil {
		return nil, nil, err
	}
	for i, f := range files {
		files[i] = path.Join(prefix, f)
	}
	return files, nil, nil
}

var errNotGit = errors.New("not in a git work tree")

// gitLsFiles lists dir's files relative to dir; errNotGit when dir is not in a git work
// tree or git is not installed.
func gitLsFiles(ctx context.Context, dir string) ([]string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errNotGit
	}
	probe := gitCommand(ctx, dir, "rev-parse", "--is-inside-work-tree")
	if out, err := probe.Output(); err != nil || strings.TrimSpace(string(out)) != "true" {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errNotGit
	}
	cmd := gitCommand(ctx, dir, "ls-files", "-co", "--exclude-standard", "-z", "--", ".")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() == nil && isPartialClone(ctx, dir) {
			return nil, &PartialCloneError{Dir: dir}
		}
		return nil, fmt.Errorf("git ls-files in %s: %v: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	seen := map[string]bool{}
	for f := range bytes.SplitSeq(out, []byte{0}) {
		// A file both tracked and modified may be listed twice (-c and -o never overlap,
		// but unmerged entries repeat).
		if s := string(f); s != "" && !seen[s] {
			seen[s] = true
			files = append(files, s)
		}
	}
	return files, nil
}

// walkFiles walks root/prefix, skipping what the .gitignore files (of root, the
// directories down to prefix, and below) ignore, and .git directories. A subdirectory it
// cannot read (a path longer than the system allows, no permission) is skipped with its
// reason; only prefix itself failing fails the walk.
func walkFiles(root, prefix string) ([]string, []Problem, error) {
	var files []ignoreFile
	// Below every .gitignore: the repository's own exclude file, which git reads too (the
	// walk runs in a repository when git is missing or refuses it as another user's).
	if b, err := readRegular(filepath.Join(root, ".git", "info", "exclude")); err == nil {
		files = append(files, ignoreFile{rules: parseIgnore(b)})
	}
	if prefix != "" {
		// The directories above prefix contribute their rules, and one of them (or prefix)
		// being ignored leaves nothing to list, as git does.
		parts := strings.Split(prefix, "/")
		for i := range parts {
			if f, ok := readIgnore(root, strings.Join(parts[:i], "/")); ok {
				files = append(files, f)
			}
			if ignored(files, strings.Join(parts[:i+1], "/"), true) || parts[i] == ".git" {
				return nil, nil, nil
			}
		}
	}
	var out []string
	var skipped []Problem
	var walk func(dir string, files []ignoreFile) error
	walk = func(dir string, files []ignoreFile) error {
		if f, ok := readIgnore(root, dir); ok {
			files = append(files[:len(files):len(files)], f)
		}
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
		if err != nil && dir != prefix {
			skipped = append(skipped, unreadable(dir, err))
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			rel := path.Join(dir, e.Name())
			isDir := e.IsDir()
			if (isDir && e.Name() == ".git") || ignored(files, rel, isDir) {
				continue
			}
			if isDir {
				if err := walk(rel, files); err != nil {
					return err
				}
				continue
			}
			out = append(out, rel)
		}
		return nil
	}
	if err := walk(prefix, files); err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}

// unreadable is the problem of a path that cannot be looked at.
func unreadable(rel string, err error) Problem {
	if errors.Is(err, syscall.ENAMETOOLONG) {
		return Problem{Path: rel, Kind: "path_too_long", Reason: "its path is longer than this system lets a program open; " +
			"move it higher up to sync it"}
	}
	return Problem{Path: rel, Kind: "unreadable", Reason: "it cannot be read: " + errText(err)}
}

// errText is err without the absolute path an *fs.PathError carries.
func errText(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// Globs are include and exclude patterns (doublestar syntax: ** spans directories)
// matched against paths relative to the project root.
type Globs struct {
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// Validate reports the first malformed pattern.
func (g Globs) Validate() error {
	for _, p := range append(slices.Clone(g.Include), g.Exclude...) {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("%q is not a valid glob pattern", p)
		}
	}
	return nil
}

// Match reports whether rel is selected: it matches an include pattern (or there are
// none) and no exclude pattern. A pattern without a slash also matches base names
// anywhere ("*.md" selects docs/a.md), as in .gitignore.
func (g Globs) Match(rel string) bool {
	if len(g.Include) > 0 && !anyMatch(g.Include, rel) {
		return false
	}
	return !anyMatch(g.Exclude, rel)
}

func anyMatch(patterns []string, rel string) bool {
	for _, p := range patterns {
		target := rel
		if !strings.Contains(p, "/") {
			target = path.Base(rel)
		}
		if ok, _ := doublestar.Match(p, target); ok {
			return true
		}
		// "docs/**" style patterns also select the directory's files through a prefix.
		if ok, _ := doublestar.Match(strings.TrimSuffix(p, "/")+"/**", rel); ok && strings.HasSuffix(p, "/") {
			return true
		}
	}
	return false
}
