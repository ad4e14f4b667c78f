package servertest

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// notifications counts the notifications a session's client received, by method.
type notifications struct {
	mu      sync.Mutex
	count   map[string]int
	changed chan struct{} // closed and replaced on each notification
}

func newNotifications() *notifications {
	return &notifications{count: map[string]int{}, changed: make(chan struct{})}
}

func (n *notifications) record(note mcp.JSONRPCNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.count[note.Method]++
	close(n.changed)
	n.changed = make(chan struct{})
}

// Notifications returns how many notifications of method the session received so far.
func (s *Session) Notifications(method string) int {
	s.notes.mu.Lock()
	defer s.notes.mu.Unlock()
	return s.notes.count[method]
}

// WaitNotifications waits until the session has received at least n notifications of
// method, or ctx ends.
func (s *Session) WaitNotifications(ctx context.Context, method string, n int) error {
	for {
		s.notes.mu.Lock()
		got, changed := s.notes.count[method], s.notes.changed
		s.notes.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d %s notifications: %w", got, n, method, ctx.Err())
		}
	}
}
