package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"
)

// noticeEvery is how often a standing warning is repeated to the same user.
const noticeEvery = 24 * time.Hour

// Standing reports whether w is a standing fact about this machine rather than news: the
// credential lives in the plain-text file because there is no keyring (or by choice). It
// is true on every command until the machine changes, so it is said once a day (NoticeDue),
// not on every run; the credential's source names the file each time anyway.
func (w Warning) Standing() bool { return w.Kind == WarnPlainTextFile }

// NoticeDir is where NoticeDue keeps its markers: the user cache directory's
// r2r-mcp/notices ($XDG_CACHE_HOME through getenv when set). "" when there is none.
func NoticeDir(getenv func(string) string) string {
	base := ""
	if getenv != nil {
		base = getenv("XDG_CACHE_HOME")
	}
	if base == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		base = d
	}
	return filepath.Join(base, "r2r-mcp", "notices")
}

// NoticeDue reports whether the standing warning w is to be shown at now, and if so
// records that it was: once per noticeEvery per user and text, by a marker file in dir
// whose modification time is when it was last shown. A marker that cannot be read or
// written (no dir, a read-only cache) makes it due: saying it again beats never saying it.
func NoticeDue(dir string, w Warning, now time.Time) bool {
	if dir == "" {
		return true
	}
	sum := sha256.Sum256([]byte(w.Text))
	marker := filepath.Join(dir, "warning-"+hex.EncodeToString(sum[:8]))
	if fi, err := os.Lstat(marker); err == nil && fi.Mode().IsRegular() {
		if age := now.Sub(fi.ModTime()); age >= 0 && age < noticeEvery {
			return false
		}
	}
	if err := WritePrivateFile(marker, nil); err == nil {
		_ = os.Chtimes(marker, now, now)
	}
	return true
}
