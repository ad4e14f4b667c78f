package auth

import (
	"errors"
	"path/filepath"
)

// SessionLockName is the lock file in the config dir that every r2r-mcp process of the
// user takes while it renews a stored session.
const SessionLockName = "session.lock"

// SessionLockPath is the session lock file of configDir.
func SessionLockPath(configDir string) string { return filepath.Join(configDir, SessionLockName) }

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
