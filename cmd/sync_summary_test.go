package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestSummaryOfStoppedSync: a problem of the whole run (no file) is printed as what it is,
// not as "FAILED :" with an empty path.
func TestSummaryOfStoppedSync(t *testing.T) {
	tests := []struct {
		name     string
		problems []kbsync.Problem
		want     []string
	}{
		{"stopped", []kbsync.Problem{{Kind: "cancelled", Reason: "the sync was stopped before it finished"}},
			[]string{"  stopped: the sync was stopped before it finished\n"}},
		{"file and run", []kbsync.Problem{{Path: "docs/a.md", Kind: "cancelled", Reason: "cancelled before it was sent"},
			{Kind: "hash_cache", Reason: "saving the hash cache failed: disk full"}},
			[]string{"  FAILED docs/a.md: cancelled before it was sent\n", "  FAILED: saving the hash cache failed: disk full\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printSummary(&out, false, &syncTarget{dir: "/p", label: "c"}, &kbsync.Summary{Failed: tt.problems}); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), " :") {
				t.Errorf("a problem with an empty path:\n%s", out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
