package kbsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRecordCancelled: a file whose upload the user cancelled (Ctrl-C) is reported as
// cancelled, with its path, whatever layer the cancellation surfaced in.
func TestRecordCancelled(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind string
	}{
		{"waiting for the budget", fmt.Errorf("cancelled before it was sent: %w", context.Canceled), "cancelled"},
		{"during the request", fmt.Errorf("R2R create document: %w", context.Canceled), "cancelled"},
		{"R2R failed", errors.New("R2R create document: 500 boom"), "r2r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sum Summary
			sum.record("docs/a.md", Outcome{Action: Failed}, tt.err)
			if len(sum.Failed) != 1 {
				t.Fatalf("failed = %+v", sum.Failed)
			}
			p := sum.Failed[0]
			if p.Path != "docs/a.md" || p.Kind != tt.kind {
				t.Errorf("problem = %+v, want kind %s", p, tt.kind)
			}
			if tt.kind == "cancelled" && (!strings.Contains(p.Reason, "cancelled") || strings.Contains(p.Reason, "context canceled")) {
				t.Errorf("reason = %q", p.Reason)
			}
		})
	}
}
