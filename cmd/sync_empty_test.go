package cmd

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestSyncCommandEmptyFiles: a project with empty files (py.typed, an empty __init__.py, an
// empty Markdown file) syncs without a failure or a refusal: the files are counted as empty
// and nothing of them is sent.
func TestSyncCommandEmptyFiles(t *testing.T) {
	f := newSyncFixture(t)
	f.write("pkg/__init__.py", "")
	f.write("pkg/py.typed", "")
	f.write("empty.md", "")
	f.write("blank.md", " \n\t\n")
	f.write("pkg/a.py", "def f():\n    return 1\n")
	s, r := f.sync(f.root)
	if r.err != nil || !s.OK() || len(s.Refused) != 0 || !slices.Equal(s.Uploaded, []string{"pkg/a.py"}) || s.Empty != 4 {
		t.Fatalf("sync: %v; %+v\n%s", r.err, s, r.stderr)
	}
	if n := f.srv.Count("POST /v3/documents"); n != 1 {
		t.Errorf("%d documents sent, want 1 (pkg/a.py)", n)
	}
	f.write("pkg/a.py", "")
	s, r = f.sync(f.root)
	if r.err != nil || !s.OK() || !slices.Equal(s.Deleted, []string{"pkg/a.py"}) || s.Empty != 5 {
		t.Fatalf("sync after emptying pkg/a.py: %v; %+v\n%s", r.err, s, r.stderr)
	}
}

// TestSummaryCountsEmptyFiles: the summary says how many files were empty in one count,
// and nothing about them when there were none.
func TestSummaryCountsEmptyFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		sum  kbsync.Summary
		want []string
		not  string
	}{
		{"two empty", kbsync.Summary{Uploaded: []string{"a.py"}, Empty: 2}, []string{"1 uploaded, 0 replaced, 0 unchanged, 2 empty, 0 deleted"}, "FAILED"},
		{"none empty", kbsync.Summary{Uploaded: []string{"a.py"}}, []string{"0 unchanged, 0 deleted"}, "empty"},
		{"team", kbsync.Summary{Team: &kbsync.TeamSummary{Ref: "origin/main", Empty: 3}, Empty: 1},
			[]string{"0 unchanged, 3 empty, 0 retired", "0 unchanged, 1 empty, 0 deleted"}, "FAILED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printSummary(&out, false, &syncTarget{dir: "/p", label: "c"}, &c.sum); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, out.String())
				}
			}
			if strings.Contains(out.String(), c.not) {
				t.Errorf("summary has %q:\n%s", c.not, out.String())
			}
		})
	}
}
