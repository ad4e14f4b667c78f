package kbsync

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth/atomicfile"
)

// HashCache remembers the content hash of files by path, size and modification time, so
// a sync does not read files that have not changed. It is safe for concurrent use.
type HashCache struct {
	file string
	now  func() time.Time

	mu      sync.Mutex
	entries map[string]hashEntry
	dirty   bool
}

type hashEntry struct {
	Size  int64  `json:"s"`
	MTime int64  `json:"m"` // Unix nanoseconds
	SHA   string `json:"h"`
	Blob  string `json:"b,omitempty"` // git's object id of the content, when a team sync asked for it
}

// racyWindow: a file modified within this long of being hashed may change again without
// its modification time moving (coarse file-system clocks), so its hash is not kept.
const racyWindow = 2 * time.Second

// OpenHashCache loads the cache kept in file ("" = in memory only). A missing or
// unreadable file starts an empty cache.
func OpenHashCache(file string) *HashCache {
	c := &HashCache{file: file, now: time.Now, entries: map[string]hashEntry{}}
	if file == "" {
		return c
	}
	if b, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(b, &c.entries)
		if c.entries == nil {
			c.entries = map[string]hashEntry{}
		}
	}
	return c
}

// Get returns the hashes remembered for path with this size and modification time: the
// content's SHA-256 and git's object id of it ("" when it was not computed).
func (c *HashCache) Get(path string, size int64, mtime time.Time) (sha, blob string, ok bool) {
	if c == nil {
		return "", "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[path]
	if !ok || e.Size != size || e.MTime != mtime.UnixNano() {
		return "", "", false
	}
	return e.SHA, e.Blob, true
}

// Put remembers a file's hashes, unless the file changed too recently to be sure of them.
func (c *HashCache) Put(path string, size int64, mtime time.Time, sha, blob string) {
	if c == nil || c.now().Sub(mtime) < racyWindow {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[path] = hashEntry{Size: size, MTime: mtime.UnixNano(), SHA: sha, Blob: blob}
	c.dirty = true
}

// Forget drops a path (its file is gone).
func (c *HashCache) Forget(path string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[path]; ok {
		delete(c.entries, path)
		c.dirty = true
	}
}

// Save writes the cache to its file (atomically, mode 0600) when it changed.
func (c *HashCache) Save() error {
	if c == nil || c.file == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	b, err := json.Marshal(c.entries)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.file), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(c.file, b, 0o600); err != nil {
		return err
	}
	c.dirty = false
	return nil
}
