package kbsync

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ignoreFile is one .gitignore: the directory it lies in (relative to the root, "" for
// the root) and its rules in order.
type ignoreFile struct {
	dir   string
	rules []ignoreRule
}

// ignoreRule is one pattern line of a .gitignore, read as git reads it.
type ignoreRule struct {
	pattern string // without '!', a leading '/' and a trailing '/'
	negate  bool   // "!x" re-includes
	dirOnly bool   // "x/" matches directories only
	base    bool   // no '/' in it: matched against the base name at any depth
}

// parseIgnore reads the rules of a .gitignore as git does: a UTF-8 byte-order mark, blank
// lines and '#' comments skipped, trailing spaces dropped unless escaped with '\', '!'
// negates, a trailing '/' matches only directories, a '/' anywhere else anchors the pattern
// to the file's directory.
func parseIgnore(b []byte) []ignoreRule {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	var rules []ignoreRule
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, line[:len(line)-1]
		}
		if line == "" {
			continue
		}
		r.base = !strings.Contains(line, "/")
		r.pattern = strings.TrimPrefix(line, "/")
		rules = append(rules, r)
	}
	return rules
}

// trimTrailingSpaces drops the trailing spaces of a pattern that no '\' escapes.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

// matches reports whether the rule matches sub, a path relative to the rule's directory.
func (r ignoreRule) matches(sub string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.base {
		return wildmatch(r.pattern, path.Base(sub), false)
	}
	// git compares the part before the first wildcard literally and matches only the rest
	// as a glob, so "a**/b" behaves as "a" followed by "**/b".
	n := strings.IndexAny(r.pattern, "*?[\\")
	if n < 0 {
		return r.pattern == sub
	}
	rest, ok := strings.CutPrefix(sub, r.pattern[:n])
	return ok && wildmatch(r.pattern[n:], rest, true)
}

// ignored reports whether the .gitignore files (outermost first) ignore rel: the last
// rule that matches decides, a deeper file's after an outer one's, as in git.
func ignored(files []ignoreFile, rel string, isDir bool) bool {
	out := false
	for _, f := range files {
		sub := rel
		if f.dir != "" {
			var ok bool
			if sub, ok = strings.CutPrefix(rel, f.dir+"/"); !ok {
				continue
			}
		}
		for _, r := range f.rules {
			if r.matches(sub, isDir) {
				out = !r.negate
			}
		}
	}
	return out
}

// readIgnore reads the .gitignore of dir (relative to root). Like git, it does not follow
// a symbolic link there.
func readIgnore(root, dir string) (ignoreFile, bool) {
	b, err := readRegular(filepath.Join(root, filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		return ignoreFile{}, false
	}
	return ignoreFile{dir: dir, rules: parseIgnore(b)}, true
}

// readRegular reads the file at p unless it is not a regular file (a symbolic link, a FIFO
// that would block the read).
func readRegular(p string) ([]byte, error) {
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, fs.ErrInvalid
	}
	return os.ReadFile(p)
}
