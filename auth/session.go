package auth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// SessionLockName is the lock file in the config dir that every r2r-mcp process of the
// user takes while it renews a stored session.
const SessionLockName = "session.lock"

// SessionLockPath is the session lock file of configDir.
func SessionLockPath(configDir string) string { return filepath.Join(configDir, SessionLockName) }

// lockRetry is how often a renewal waiting for another process's renewal tries the lock.
const lockRetry = 20 * time.Millisecond

// lockSession takes the session lock at path (creating its directory), waiting until ctx
// ends; "" takes nothing. A renewal holds it for one refresh-token request and one store
// write.
func lockSession(ctx context.Context, path string) (unlock func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session lock: %w", err)
	}
	l := flock.New(path, flock.SetPermissions(0o600))
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		return nil, fmt.Errorf("take the session lock %s (another r2r-mcp process is renewing the R2R session): %w", path, errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Unlock() }, nil
}

// ErrSessionExpired is matched by the error of a stored session that can no longer be
// renewed: its refresh token expired or was revoked, or the session was logged out or
// replaced. Only a new login helps.
var ErrSessionExpired = errors.New("R2R session expired")

// SessionExpiredError is ErrSessionExpired for one R2R URL; its text is the one verdict
// every command and tool gives (SessionExpiredText).
type SessionExpiredError struct {
	URL string
	Err error // R2R's answer, or what ended the session; never a secret
}

func (e *SessionExpiredError) Error() string { return SessionExpiredText(e.URL) }

// Unwrap makes the error match ErrSessionExpired and R2R's answer.
func (e *SessionExpiredError) Unwrap() []error { return []error{ErrSessionExpired, e.Err} }

// SessionExpiredText is the verdict on a session that ended: what happened and the one
// thing to do.
func SessionExpiredText(url string) string {
	return "the R2R session stored for " + url + " has expired or was ended; log in again with `r2r-mcp login`"
}
