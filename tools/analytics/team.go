package analytics

import (
	"encoding/json"
	"time"
)

// ListStore is a capped list per key shared by the replicas of serve --http (Redis, as the
// search history uses it): PushHistory puts an entry first and keeps size entries, History
// returns the newest size entries.
type ListStore interface {
	PushHistory(key string, entry []byte, size int) error
	History(key string, size int) ([][]byte, error)
}

// DefaultTeamEvents bounds one team's events in Redis.
const DefaultTeamEvents = 5000

// TeamStore keeps a team's events in a ListStore: at most Size of them (the list is
// trimmed on every push), none older than MaxAge read.
type TeamStore struct {
	List   ListStore
	Size   int           // 0 = DefaultTeamEvents
	MaxAge time.Duration // 0 = DefaultMaxAge
	Now    func() time.Time
}

func (s *TeamStore) size() int {
	if s.Size > 0 {
		return s.Size
	}
	return DefaultTeamEvents
}

// listKey keeps analytics apart from the search history in the same store.
func listKey(key string) string { return "analytics\x00" + key }

// Append pushes events onto the team's list.
func (s *TeamStore) Append(key string, events []Event) error {
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil || len(b) >= maxLineBytes {
			continue
		}
		if err := s.List.PushHistory(listKey(key), b, s.size()); err != nil {
			return err
		}
	}
	return nil
}

// Read returns the team's events newer than MaxAge, oldest first.
func (s *TeamStore) Read(key string) ([]Event, error) {
	raw, err := s.List.History(listKey(key), s.size())
	if err != nil {
		return nil, err
	}
	age := s.MaxAge
	if age <= 0 {
		age = DefaultMaxAge
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	cutoff := now().Add(-age)
	out := make([]Event, 0, len(raw))
	for i := len(raw) - 1; i >= 0; i-- {
		var e Event
		if json.Unmarshal(raw[i], &e) == nil && e.Time.After(cutoff) {
			out = append(out, e)
		}
	}
	return out, nil
}
