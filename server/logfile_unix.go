//go:build !windows

package server

import "syscall"

// noFollow makes opening the log file fail on a symlink instead of writing (and changing
// the mode of) whatever it points to.
const noFollow = syscall.O_NOFOLLOW

// isSymlinkLoop reports the error O_NOFOLLOW gives for a symlink.
func isSymlinkLoop(err error) bool { return errorsIs(err, syscall.ELOOP) }
