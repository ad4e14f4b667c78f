//go:build !windows

package tools

import (
	"os"
	"syscall"
)

// openNoBlock opens p read-only without blocking on FIFOs and without following a final
// symlink (the caller passes an already resolved path).
func openNoBlock(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
