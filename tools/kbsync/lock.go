package kbsync

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// ErrLocked reports that another sync of the same project holds its lock.
var ErrLocked = errors.New("another sync of this project is running")

// StateDir is where sync keeps its lock files and hash caches: the user cache directory's
// r2r-mcp/sync.
func StateDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory: %w", err)
	}
	return filepath.Join(d, "r2r-mcp", "sync"), nil
}

// Key names one project's sync state: its root and its R2R collection.
func Key(root, collectionID string) string {
	h := sha256.Sum256([]byte(root + "\x00" + collectionID))
	return hex.EncodeToString(h[:12])
}

// Lock takes the cross-process lock of key in dir without waiting: ErrLocked when another
// process (or another sync in this one) holds it. unlock releases it.
func Lock(dir, key string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	l := flock.New(filepath.Join(dir, key+".lock"), flock.SetFlag(os.O_CREATE|os.O_RDONLY|lockOpenFlags),
		flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("taking the sync lock %s: %w (remove it if it is not a regular file)", l.Path(), err)
	}
	if !ok {
		return nil, ErrLocked
	}
	if fi, err := l.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = l.Unlock()
		return nil, fmt.Errorf("the sync lock %s is not a regular file; remove it and sync again", l.Path())
	}
	return func() { _ = l.Unlock() }, nil
}
