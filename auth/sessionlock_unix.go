//go:build !windows

package auth

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openLockFile opens the lock file at path, creating it, without ever blocking or
// following a link: a FIFO opened for reading waits for a writer forever, so what sits at
// path is checked before the open and again on the descriptor (something may replace it
// in between), and the open itself is non-blocking. A file this user may not write (a
// read-only file system, someone else's file) is locked through a read-only descriptor,
// which flock allows.
func openLockFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if what := notRegular(fi.Mode()); what != "" {
			return nil, notRegularError(path, what)
		}
	}
	const flags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|flags, 0o600)
	if err != nil && (errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS)) {
		if rf, rerr := os.OpenFile(path, os.O_RDONLY|flags, 0); rerr == nil {
			f, err = rf, nil
		}
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, notRegularError(path, "a symbolic link")
	}
	if err != nil {
		return nil, lockUnusable(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, lockUnusable(path, err)
	}
	if what := notRegular(fi.Mode()); what != "" {
		_ = f.Close()
		return nil, notRegularError(path, what)
	}
	return f, nil
}

// tryLockFile takes an exclusive flock on f without waiting; false when another open
// file description holds it.
func tryLockFile(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EINTR):
		return false, nil
	}
	return false, err
}

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
