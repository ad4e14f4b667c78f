package analytics

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// Bounds of the per-user store.
const (
	// DefaultMaxBytes bounds one project's events on disk (the current file and the one
	// before it together).
	DefaultMaxBytes = 4 << 20
	// DefaultMaxAge is how long an event is kept.
	DefaultMaxAge = 30 * 24 * time.Hour
	// maxLineBytes bounds one stored event; a longer line is skipped on reading.
	maxLineBytes = 4 << 10
)

// FileStore keeps each key's events in an append-only JSON-lines file under Dir, with the
// file before it: when appending would take the current file past half of MaxBytes it
// becomes the previous one (replacing it), so a key holds at most MaxBytes. Events older
// than MaxAge are not read, and files not written for MaxAge are removed. A lock file per
// key makes it safe for several processes of the same user; nothing is synced to disk
// (a crash may lose the last events, never a tool call).
type FileStore struct {
	Dir      string
	MaxBytes int64         // 0 = DefaultMaxBytes
	MaxAge   time.Duration // 0 = DefaultMaxAge
	Now      func() time.Time

	sweep sync.Once
}

func (s *FileStore) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *FileStore) maxAge() time.Duration {
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return DefaultMaxAge
}

func (s *FileStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// path is key's current file; its previous one adds ".1".
func (s *FileStore) path(key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, hex.EncodeToString(h[:12])+".jsonl")
}

func (s *FileStore) lock(key string) *flock.Flock {
	return flock.New(s.path(key)+".lock", flock.SetPermissions(0o600))
}

// Append adds events to key's file.
func (s *FileStore) Append(key string, events []Event) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	s.sweep.Do(s.removeOld)
	half := s.maxBytes() / 2
	var buf bytes.Buffer
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil || len(b) >= maxLineBytes {
			continue
		}
		if int64(buf.Len()+len(b)+1) > half {
			break // a batch never fills more than its half
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if buf.Len() == 0 {
		return nil
	}
	l := s.lock(key)
	if err := l.Lock(); err != nil {
		return err
	}
	defer func() { _ = l.Unlock() }()
	cur := s.path(key)
	if fi, err := os.Stat(cur); err == nil && (fi.Size()+int64(buf.Len()) > half || s.now().Sub(fi.ModTime()) > s.maxAge()) {
		if err := os.Rename(cur, cur+".1"); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(cur, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(buf.Bytes())
	return errors.Join(werr, f.Close())
}

// Read returns key's events newer than MaxAge, oldest first.
func (s *FileStore) Read(key string) ([]Event, error) {
	l := s.lock(key)
	if _, err := os.Stat(s.Dir); err == nil {
		if err := l.RLock(); err != nil {
			return nil, err
		}
		defer func() { _ = l.Unlock() }()
	}
	cutoff := s.now().Add(-s.maxAge())
	var out []Event
	for _, p := range []string{s.path(key) + ".1", s.path(key)} {
		evs, err := readLines(p, cutoff)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	return out, nil
}

func readLines(path string, cutoff time.Time) ([]Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Time.After(cutoff) {
			out = append(out, e)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return out, nil // a torn or foreign line ends the file's useful part
	}
	return out, sc.Err()
}

// removeOld deletes the files of keys not written for MaxAge.
func (s *FileStore) removeOld() {
	ents, err := os.ReadDir(s.Dir)
	if err != nil {
		return
	}
	cutoff := s.now().Add(-s.maxAge())
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".jsonl") && !strings.HasSuffix(name, ".jsonl.1") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(s.Dir, name))
		}
	}
}

// DefaultDir is where serve keeps analytics: the user cache directory's r2r-mcp/analytics.
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "r2r-mcp", "analytics"), nil
}
