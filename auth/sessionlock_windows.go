package auth

import (
	"os"

	"golang.org/x/sys/windows"
)

// openLockFile opens the lock file at path, creating it. Windows has no FIFOs in the file
// system, but a link or directory at path is still named as the cause.
func openLockFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if what := notRegular(fi.Mode()); what != "" {
			return nil, notRegularError(path, what)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, lockUnusable(path, err)
	}
	return f, nil
}

// tryLockFile takes an exclusive lock on f without waiting; false when another handle
// holds it.
func tryLockFile(f *os.File) (bool, error) {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == windows.ERROR_LOCK_VIOLATION || err == windows.ERROR_IO_PENDING {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
