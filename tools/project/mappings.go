package project

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

// cachedMapping is one resolved project → collection mapping.
type cachedMapping struct {
	CollectionID   string    `json:"collection_id"`
	CollectionName string    `json:"collection_name"`
	ProjectRoot    string    `json:"project_root"`
	R2RURL         string    `json:"r2r_url"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// mappingFile is the on-disk cache of mappings, shared by the user's r2r-mcp processes. It
// is read once, on first use; every change re-reads the file (another process may have
// written it), applies itself and replaces the file atomically with mode 0600. It is safe
// for concurrent use.
type mappingFile struct {
	path string // "" = no disk cache
	log  *slog.Logger

	mu     sync.Mutex
	loaded bool
	m      map[string]cachedMapping // key: cacheKey
}

// mappingPath is the file Options.CacheFile names ("" = none).
func mappingPath(opt string) string {
	switch opt {
	case "-":
		return ""
	case "":
		dir, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		return filepath.Join(dir, "r2r-mcp", "projects.json")
	}
	return opt
}

type diskFile struct {
	Version  int                      `json:"version"`
	Projects map[string]cachedMapping `json:"projects"`
}

// get returns the mapping stored under key.
func (f *mappingFile) get(key string) (cachedMapping, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loadLocked()
	m, ok := f.m[key]
	return m, ok
}

// put stores m under key; a stored mapping to the same collection is left as it is.
func (f *mappingFile) put(key string, m cachedMapping) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loadLocked()
	if old, ok := f.m[key]; ok && old.CollectionID == m.CollectionID {
		return
	}
	f.m[key] = m
	f.saveLocked(key, &m)
}

// drop deletes the mapping under key, if there is one.
func (f *mappingFile) drop(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loadLocked()
	if _, ok := f.m[key]; ok {
		delete(f.m, key)
		f.saveLocked(key, nil)
	}
}

func (f *mappingFile) read() map[string]cachedMapping {
	if f.path == "" {
		return map[string]cachedMapping{}
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return map[string]cachedMapping{}
	}
	var d diskFile
	if err := json.Unmarshal(b, &d); err != nil || d.Projects == nil {
		f.log.Warn("ignoring unreadable project cache", "path", f.path)
		return map[string]cachedMapping{}
	}
	return d.Projects
}

func (f *mappingFile) loadLocked() {
	if f.loaded {
		return
	}
	f.m = f.read()
	f.loaded = true
}

// saveLocked re-reads the file, applies one change (m == nil deletes key) and replaces it.
func (f *mappingFile) saveLocked(key string, m *cachedMapping) {
	if f.path == "" {
		return
	}
	cur := f.read()
	if m == nil {
		delete(cur, key)
	} else {
		cur[key] = *m
	}
	b, err := json.MarshalIndent(diskFile{Version: 1, Projects: cur}, "", "  ")
	if err != nil {
		return
	}
	if err := auth.WritePrivateFile(f.path, b); err != nil {
		f.log.Warn("cannot save project cache", "path", f.path, "error", err)
	}
}
