package cmd

import (
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// TestMemoryIDs: show and forget take the short id r2r_recall shows (a unique prefix of a
// memory's id), as r2r_forget does, and a memory already forgotten is said to be gone.
func TestMemoryIDs(t *testing.T) {
	f := newSyncFixture(t)
	f.write("a.md", "content")
	if _, r := f.sync(f.root); r.err != nil {
		t.Fatal(r.err)
	}
	id := f.remember(memory.Draft{Kind: "decision", Title: "Keep docs in Markdown", Body: "All docs are Markdown."})
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"show by short id", []string{"show", id[:8]}, "## decision: Keep docs in Markdown", ""},
		{"show by short id, upper case", []string{"show", strings.ToUpper(id[:8])}, "## decision: Keep docs in Markdown", ""},
		{"a prefix of no memory", []string{"show", "0000000"}, "", "no memory of the project's collection has an id starting with 0000000"},
		{"too short", []string{"show", id[:4]}, "", "is not a memory id"},
		{"forget by short id", []string{"forget", id[:8]}, "Forgot decision", ""},
		{"forget again", []string{"forget", id}, "", "already gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.memory(tt.args...)
			if tt.wantErr == "" {
				if r.err != nil || !strings.Contains(r.stdout, tt.wantOut) {
					t.Fatalf("memory %s: %v\n%s", strings.Join(tt.args, " "), r.err, r.stdout)
				}
				return
			}
			if r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Fatalf("memory %s: err %v, want %q", strings.Join(tt.args, " "), r.err, tt.wantErr)
			}
		})
	}
}
