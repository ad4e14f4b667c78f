package upload

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestUploadWaitingForBudgetEnds: an upload waiting for room in the memory budget when its
// caller cancels was cancelled, not refused for a full budget (Ctrl-C in a sync must not
// read "the memory budget for uploads is full"); one whose deadline passed first was.
func TestUploadWaitingForBudgetEnds(t *testing.T) {
	tests := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		busy     bool
		canceled bool
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, false, true},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(1, 0))
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBudget(1)
			release, err := b.Reserve(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			ctx, cancel := tt.ctx()
			defer cancel()
			_, err = Upload(ctx, "a.md", Options{Roots: []string{t.TempDir()}, Budget: b})
			if errors.Is(err, ErrBusy) != tt.busy || errors.Is(err, context.Canceled) != tt.canceled {
				t.Errorf("err = %v; want busy %v, cancelled %v", err, tt.busy, tt.canceled)
			}
		})
	}
}
