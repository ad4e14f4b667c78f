//go:build !windows

package auth

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// storedSession logs dev@example.com in on a fresh emulator and returns the session as
// login stores it, in a store, with the access token's expiry.
func storedSession(t *testing.T) (*r2r.Client, func() int, Secret, *memStore, time.Time) {
	t.Helper()
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	pair := loginPair(t, c, "dev@example.com", "pw")
	sec := Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, AccessToken: pair.AccessToken.Token, Email: "dev@example.com"}
	store := newMemStore()
	_ = store.Save(context.Background(), testURL, sec)
	srv.ResetCounts()
	return c, func() int { return srv.Count(routeRefresh) }, sec, store, tokenExpiry(pair.AccessToken.Token)
}

// Something other than a regular file at the lock path is never opened in a way that can
// block (a FIFO opened for reading waits for a writer forever): the renewal goes ahead
// without the lock, names what is there once, and takes the lock again once it is gone.
func TestSessionLockThatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name  string
		make  func(path string) error
		named string
	}{
		{"FIFO", func(p string) error { return unix.Mkfifo(p, 0o600) }, "a named pipe (FIFO), not a regular file; remove it"},
		{"symlink to a device", func(p string) error { return os.Symlink("/dev/null", p) }, "a symbolic link, not a regular file"},
		{"dangling symlink", func(p string) error { return os.Symlink(p+".nowhere", p) }, "a symbolic link, not a regular file"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "a directory, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, refreshes, sec, store, exp := storedSession(t)
			lock := SessionLockPath(t.TempDir())
			if err := tt.make(lock); err != nil {
				t.Fatal(err)
			}
			ts := newStoredAt(c, sec, store, lock, exp.Add(time.Minute))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := ts.Apply(ctx, http.Header{}); err != nil {
				t.Fatalf("Apply with %s at the lock path = %v", tt.name, err)
			}
			w := ts.Origin().Warning()
			if !strings.Contains(w, "cannot use the session lock "+lock+": it is "+tt.named) || refreshes() != 1 {
				t.Fatalf("warning %q, %d refreshes", w, refreshes())
			}
			// Removed: the next renewal takes the lock, and nothing more is said.
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			ts.now = func() time.Time { return ts.exp.Add(time.Minute) }
			if err := ts.Apply(ctx, http.Header{}); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(lock); err != nil || !fi.Mode().IsRegular() || ts.Origin().Warning() != w {
				t.Fatalf("after removal: lock %v (%v), warning %q", fi, err, ts.Origin().Warning())
			}
		})
	}
}

// A lock that cannot be made (its directory cannot be created or written, the file is
// someone else's) does not fail the renewal: it goes ahead without the lock and the cause
// is named once, not "another r2r-mcp process is renewing".
func TestSessionLockThatCannotBeMade(t *testing.T) {
	c, refreshes, sec, store, exp := storedSession(t)
	file := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lock := SessionLockPath(file) // its "directory" is a file
	ts := newStoredAt(c, sec, store, lock, exp.Add(time.Minute))
	for round := range 3 {
		if err := ts.Apply(context.Background(), http.Header{}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		ts.now = func() time.Time { return ts.exp.Add(time.Minute) }
	}
	o := ts.Origin()
	if refreshes() != 3 || len(o.Warnings) != 1 || o.Warnings[0].Kind != WarnNoSessionLock ||
		!strings.Contains(o.Warning(), "not a directory") || strings.Contains(o.Warning(), "another r2r-mcp process is renewing") {
		t.Fatalf("%d refreshes, warnings %+v", refreshes(), o.Warnings)
	}
}

// The causes a lock cannot be made for are named as what they are.
func TestLockUnusableNamesTheCause(t *testing.T) {
	dir := t.TempDir()
	path := SessionLockPath(dir)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"permission", &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}, "permission denied"},
		{"read-only", &fs.PathError{Op: "open", Path: path, Err: syscall.EROFS}, "the file system holding " + dir + " is read-only"},
		{"other", &fs.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}, "open " + path + ": no space left on device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lockUnusable(path, tt.err)
			if !strings.HasPrefix(got.Cause, tt.want) || !errors.Is(got, tt.err.(*fs.PathError).Err) {
				t.Fatalf("cause %q, want it to start with %q", got.Cause, tt.want)
			}
		})
	}
}

// holdLock takes the session lock at path the way another process would, until the test
// ends or release is called.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = f.Close() }
	t.Cleanup(release)
	return release
}

// While another process holds the session lock: a call whose token is still valid is not
// held up by it; a call whose token expired, and whose deadline passes while it waits,
// says what it waited for (and that R2R was not asked) instead of a bare deadline; a
// renewal gives up after lockWait; once the lock is free, renewal works.
func TestSessionLockHeldByAnotherProcess(t *testing.T) {
	tests := []struct {
		name     string
		clock    func(exp time.Time) time.Time
		deadline time.Duration
		wait     time.Duration
		wantErr  bool
	}{
		{"token still valid: sent without waiting", func(exp time.Time) time.Time { return exp.Add(-time.Second) }, time.Minute, lockWait, false},
		{"token expired: the deadline names the wait", func(exp time.Time) time.Time { return exp.Add(time.Minute) }, 300 * time.Millisecond, lockWait, true},
		{"token expired: the renewal gives up", func(exp time.Time) time.Time { return exp.Add(time.Minute) }, time.Minute, 200 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, refreshes, sec, store, exp := storedSession(t)
			lock := SessionLockPath(t.TempDir())
			release := holdLock(t, lock)
			clock := &testClock{}
			clock.set(time.Now())
			ts := NewStoredSource(TokenSourceOptions{Client: c, LockPath: lock, Now: clock.now}, testURL, sec, store)
			ts.lockWait = tt.wait
			clock.set(tt.clock(exp))
			ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
			defer cancel()
			h := http.Header{}
			err := ts.Apply(ctx, h)
			switch {
			case !tt.wantErr && (err != nil || ctx.Err() != nil || h.Get("Authorization") != "Bearer "+sec.AccessToken):
				t.Fatalf("Apply = %v (context: %v); want the current token at once", err, ctx.Err())
			case tt.wantErr && (!errors.Is(err, ErrSessionBusy) || errors.Is(err, context.DeadlineExceeded) ||
				!strings.Contains(err.Error(), "another process to finish renewing the R2R session (it holds the lock "+lock+")") ||
				!strings.Contains(err.Error(), "nothing was sent to R2R")):
				t.Fatalf("Apply = %v", err)
			}
			if refreshes() != 0 {
				t.Fatalf("%d refreshes while the lock was held", refreshes())
			}
			release()
			clock.set(exp.Add(time.Minute))
			if err := ts.Apply(context.Background(), http.Header{}); err != nil || refreshes() != 1 {
				t.Fatalf("after the lock was released: %v, %d refreshes", err, refreshes())
			}
		})
	}
}

// A FIFO at the credentials file's path is named, never opened in a way that waits for a
// writer.
func TestCredentialsFileThatIsAFIFO(t *testing.T) {
	store := &FileStore{Path: filepath.Join(t.TempDir(), CredentialsFileName)}
	if err := unix.Mkfifo(store.Path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := store.Load(context.Background(), testURL); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrCorruptFile) || !strings.Contains(err.Error(), store.Path+" is a named pipe (FIFO), not a regular file") {
			t.Fatalf("Load = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on the FIFO")
	}
}
