package cmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// TestSyncOutputEscapesNames: file names reach the terminal escaped, so ESC/BEL sequences,
// BiDi overrides and newlines in a name neither act on the terminal nor forge a line such
// as "uploaded prod.env".
func TestSyncOutputEscapesNames(t *testing.T) {
	hostile := []string{"a\n  upload prod.env", "\x1b]0;pwned\x07.md", "cod\u202egnp.md", "b\r\n[9/9] uploaded prod.env"}
	sum := &kbsync.Summary{DryRun: true, Uploaded: hostile, Deleted: hostile[:1],
		Refused: []kbsync.Problem{{Path: hostile[1], Reason: "secret\nFAILED x"}},
		Failed:  []kbsync.Problem{{Path: hostile[2], Reason: "boom"}}}
	var out, progress bytes.Buffer
	t1 := &syncTarget{dir: "/p/\x1b[2Jdocs", label: "claude-code-\u202edocs"}
	if err := printSummary(&out, false, t1, sum); err != nil {
		t.Fatal(err)
	}
	report, done := progressReporter(&progress, len(hostile))
	for i, p := range hostile {
		report(kbsync.Progress{Done: i + 1, Total: len(hostile), Path: p, Action: "uploaded"})
	}
	done()
	for name, text := range map[string]string{"summary": out.String(), "progress": progress.String()} {
		if strings.ContainsAny(text, "\x1b\x07\r\u202e") {
			t.Errorf("%s holds a raw control or BiDi character:\n%q", name, text)
		}
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "upload prod.env") || strings.HasPrefix(line, "[9/9]") ||
				strings.HasPrefix(line, "FAILED x") {
				t.Errorf("%s: a name forged the line %q", name, line)
			}
		}
	}
	if !strings.Contains(progress.String(), `"a\n  upload prod.env"`) {
		t.Errorf("the name is not shown escaped: %q", progress.String())
	}
}
