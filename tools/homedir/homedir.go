// Package homedir finds the user's home directory without trusting $HOME alone: an empty
// or altered $HOME must not make the real home look like an ordinary project.
package homedir

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// Dirs returns the user's home directories, symlinks resolved where possible: $HOME (or
// the platform's equivalent) when it is an absolute path, and the home directory of the
// current user in the OS user database. Usually both are the same directory.
func Dirs() []string {
	var out []string
	add := func(d string) {
		if d == "" || !filepath.IsAbs(d) {
			return
		}
		d = filepath.Clean(d)
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h)
	}
	if u, err := user.Current(); err == nil {
		add(u.HomeDir)
	}
	return out
}

// Covers reports whether dir is a home directory or a directory above one (/home, /Users,
// /): ingesting from it would reach everything in the home directory.
func Covers(dir string) bool {
	if !filepath.IsAbs(dir) {
		return false
	}
	d := filepath.Clean(dir)
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	for _, h := range Dirs() {
		if within(d, h) {
			return true
		}
	}
	return false
}

// within reports whether p is root or below it (both clean absolute paths).
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
