//go:build !windows

package auth

import (
	"io/fs"
	"os"
	"syscall"
)

// fileOwner returns the uid owning fi and this process's uid; ok is false when the owner is
// not known.
func fileOwner(fi fs.FileInfo) (owner, me int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), os.Getuid(), true
}
