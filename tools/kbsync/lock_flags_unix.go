//go:build unix

package kbsync

import "syscall"

// lockOpenFlags keep opening the lock file from blocking or following a link: a FIFO put at
// the lock path would otherwise block open(2) forever (deaf to Ctrl-C), and a symlink would
// lock some other file.
const lockOpenFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
