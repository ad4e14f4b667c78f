package r2r

import (
	"strings"
	"testing"
)

// TestChunksFit: chunks fit the form field while their JSON (quotes and escapes included)
// is at most MaxFormField bytes.
func TestChunksFit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		want   bool
	}{
		{"small", []string{"§ a.md ¶1\nhello", "§ a.md ¶2\nworld"}, true},
		{"just fits", []string{strings.Repeat("x", MaxFormField-4)}, true},
		{"one byte over", []string{strings.Repeat("x", MaxFormField-3)}, false},
		{"escapes count", []string{strings.Repeat(`"`, MaxFormField/2)}, false},
	} {
		if got := ChunksFit(tc.chunks); got != tc.want {
			t.Errorf("%s: ChunksFit = %v, want %v", tc.name, got, tc.want)
		}
	}
}
