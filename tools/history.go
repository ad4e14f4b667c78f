package tools

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// DefaultHistorySize is how many searches SearchHistory keeps per project.
const DefaultHistorySize = 10

// SearchEntry is one remembered search.
type SearchEntry struct {
	Time         time.Time `json:"time"`
	Query        string    `json:"query"`
	Hits         int       `json:"hits"`
	SearchMode   string    `json:"search_mode"`
	CollectionID string    `json:"collection_id,omitempty"`
}

// SearchHistory keeps the last searches of each project in memory. The zero value is not
// usable; a nil *SearchHistory records nothing. Safe for concurrent use.
type SearchHistory struct {
	mu    sync.Mutex
	size  int
	m     map[string][]SearchEntry // project root → oldest first
	store HistoryStore             // nil = memory only
}

// HistoryStore keeps search histories outside the process, shared by the replicas of serve
// --http (Redis). Entries are JSON; the newest comes first. Its errors make the history
// fall back to this process's memory.
type HistoryStore interface {
	PushHistory(key string, entry []byte, size int) error
	History(key string, size int) ([][]byte, error)
}

// NewSharedSearchHistory is NewSearchHistory that also keeps every history in store.
func NewSharedSearchHistory(size int, store HistoryStore) *SearchHistory {
	h := NewSearchHistory(size)
	h.store = store
	return h
}

// NewSearchHistory keeps size entries per project (0 = DefaultHistorySize).
func NewSearchHistory(size int) *SearchHistory {
	if size <= 0 {
		size = DefaultHistorySize
	}
	return &SearchHistory{size: size, m: map[string][]SearchEntry{}}
}

// Add records a search of project.
func (h *SearchHistory) Add(project string, e SearchEntry) {
	if h == nil {
		return
	}
	if h.store != nil {
		if b, err := json.Marshal(e); err == nil {
			_ = h.store.PushHistory(project, b, h.size)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l := append(h.m[project], e)
	if len(l) > h.size {
		l = slices.Clone(l[len(l)-h.size:])
	}
	h.m[project] = l
}

// Recent returns project's searches, newest first.
func (h *SearchHistory) Recent(project string) []SearchEntry {
	if h == nil {
		return []SearchEntry{}
	}
	if h.store != nil {
		if raw, err := h.store.History(project, h.size); err == nil {
			out := make([]SearchEntry, 0, len(raw))
			for _, b := range raw {
				var e SearchEntry
				if json.Unmarshal(b, &e) == nil {
					out = append(out, e)
				}
			}
			return out
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l := slices.Clone(h.m[project])
	slices.Reverse(l)
	if l == nil {
		l = []SearchEntry{}
	}
	return l
}

// Len returns how many searches of project are remembered.
func (h *SearchHistory) Len(project string) int {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m[project])
}
