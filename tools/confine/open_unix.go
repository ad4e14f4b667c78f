//go:build !windows

package confine

import (
	"os"
	"syscall"
)

// noBlockFlag is added to read-only opens so that a FIFO (or a device) swapped in after a
// check does not block the call; os.Root adds O_NOFOLLOW itself.
const noBlockFlag = syscall.O_NONBLOCK

// linkCount is the number of hard links of a file (1 when unknown).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
