package auth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockRetry is how often a renewal waiting for another process's renewal tries the lock.
const lockRetry = 20 * time.Millisecond

// lockWait bounds how long one renewal waits for another process's. A renewal holds the
// lock for one refresh-token request and one store write, well under a second normally;
// a lock held far longer belongs to a stuck process, and waiting on would only stall
// every call behind it.
const lockWait = 10 * time.Second

// ErrSessionBusy is matched by the error of a renewal that gave up waiting for another
// process's renewal of the same session (SessionBusyError). Nothing was sent to R2R; a
// later call may succeed.
var ErrSessionBusy = errors.New("another process is renewing the R2R session")

// SessionBusyError says a renewal waited Waited for the session lock at Path, which
// another process held all that time, and that nothing was sent to R2R meanwhile.
type SessionBusyError struct {
	Path   string
	Waited time.Duration
}

func (e *SessionBusyError) Error() string {
	return fmt.Sprintf("waited %.1f s for another process to finish renewing the R2R session (it holds the lock %s), so "+
		"nothing was sent to R2R; call again in a moment. If this persists, a process is stuck holding that lock: "+
		"`fuser %s` names it", e.Waited.Seconds(), e.Path, e.Path)
}

// Is makes the error match ErrSessionBusy.
func (e *SessionBusyError) Is(target error) bool { return target == ErrSessionBusy }

// LockUnusableError says why the session lock at Path cannot be taken at all: its
// directory or file cannot be created or opened, or something other than a regular file
// sits at its path. A renewal then goes ahead without the lock (see renewStored).
type LockUnusableError struct {
	Path  string
	Cause string // what is wrong, with its fix when there is one
	Err   error  // the system's error, if any
}

func (e *LockUnusableError) Error() string {
	return "cannot use the session lock " + e.Path + ": " + e.Cause
}

// Unwrap returns the system's error.
func (e *LockUnusableError) Unwrap() error { return e.Err }

// lockSession takes the session lock at path (creating its directory), trying every
// lockRetry for at most wait. waiting (nil = nothing) is called once, when the lock was
// found held, so callers can stop waiting for a renewal that is itself waiting. "" takes
// nothing. It fails with a *LockUnusableError when no lock can be made at path, with a
// *SessionBusyError when another process held it for all of wait, and with ctx's error.
func lockSession(ctx context.Context, path string, wait time.Duration, waiting func()) (unlock func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, lockUnusable(path, err)
	}
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for first := true; ; first = false {
		ok, err := tryLockFile(f)
		if err != nil {
			_ = f.Close()
			return nil, lockUnusable(path, err)
		}
		if ok {
			return func() { unlockFile(f); _ = f.Close() }, nil
		}
		if first && waiting != nil {
			waiting()
		}
		if time.Since(start) >= wait {
			_ = f.Close()
			return nil, &SessionBusyError{Path: path, Waited: time.Since(start)}
		}
		timer.Reset(lockRetry)
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// lockUnusable names why err stops the lock at path from being made: a permission
// (naming the owner when it is someone else), a read-only file system, or the system's
// own words.
func lockUnusable(path string, err error) *LockUnusableError {
	cause := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	switch {
	case errors.Is(err, syscall.EROFS):
		cause = "the file system holding " + filepath.Dir(path) + " is read-only"
	case errors.Is(err, fs.ErrPermission):
		cause = "permission denied"
		if fi, serr := os.Stat(path); serr == nil {
			if owner, me, ok := fileOwner(fi); ok && owner != me {
				cause += fmt.Sprintf(" (it belongs to uid %d, not to you, uid %d; remove it, it is recreated)", owner, me)
			}
		} else if fi, serr := os.Stat(filepath.Dir(path)); serr == nil {
			cause += fmt.Sprintf(" (%s has mode %04o)", filepath.Dir(path), fi.Mode().Perm())
		}
	}
	return &LockUnusableError{Path: path, Cause: cause, Err: err}
}

// notRegular names what sits at a lock or credentials path that is not a regular file,
// or "" when mode is a regular file's.
func notRegular(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// notRegularError is the LockUnusableError for a path where what is lists what sits there.
func notRegularError(path, what string) *LockUnusableError {
	return &LockUnusableError{Path: path, Cause: "it is " + what + ", not a regular file; remove it (r2r-mcp creates the lock file itself)"}
}
