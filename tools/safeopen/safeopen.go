// Package safeopen opens a file beneath an os.Root along exactly the path that was
// checked: no component may be a symbolic link, and each directory opened on the way must
// be the one found there a moment before. os.Root alone follows links that stay inside the
// root, so a directory swapped for a link to another place in the root (the project's own
// .aws/, say) between a check of the path and its opening would be read; here it is refused.
package safeopen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrChanged reports that a component of the path is a symbolic link, or was replaced
// while the path was being opened.
var ErrChanged = errors.New("part of the path is a symbolic link or changed while it was opened")

// Open opens rel (a clean relative path, native separators, no "..") beneath root with
// flag, walking one directory at a time. The returned file is the one at rel as checked:
// every directory on the way was a real directory (not a link) and is the directory that
// was opened, and the final component is not a link and is the file opened.
func Open(root *os.Root, rel string, flag int) (*os.File, error) {
	parts := strings.Split(rel, string(filepath.Separator))
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%s: %w", rel, fs.ErrInvalid)
		}
	}
	cur := root
	defer func() {
		if cur != root {
			cur.Close()
		}
	}()
	for _, dir := range parts[:len(parts)-1] {
		fi, err := cur.Lstat(dir)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: %w", rel, ErrChanged)
		}
		sub, err := cur.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		opened, err := sub.Stat(".")
		if err != nil || !os.SameFile(fi, opened) {
			sub.Close()
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", rel, ErrChanged)
		}
		if cur != root {
			cur.Close()
		}
		cur = sub
	}
	name := parts[len(parts)-1]
	fi, err := cur.Lstat(name)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", rel, ErrChanged)
	}
	f, err := cur.OpenFile(name, flag, 0)
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err != nil || !os.SameFile(fi, opened) {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", rel, ErrChanged)
	}
	return f, nil
}
