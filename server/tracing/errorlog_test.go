package tracing

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A collector that stays down is logged once a minute, with how many errors were held back.
func TestErrorLogIsRateLimited(t *testing.T) {
	now := time.Unix(1700000000, 0)
	var logs bytes.Buffer
	l := newErrorLog(slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	for _, step := range []time.Duration{0, time.Second, 30 * time.Second, 29 * time.Second, time.Second, time.Minute} {
		now = now.Add(step)
		l.Handle(errors.New("HTTP 503"))
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	want := []string{"errors_not_logged=0", "errors_not_logged=2", "errors_not_logged=1"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), logs.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) || !strings.Contains(lines[i], "HTTP 503") {
			t.Errorf("line %d %q, want %q", i, lines[i], w)
		}
	}
}
