package cmd

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// TestQuickStartSeedIsRecognised: the README's try-it steps used to seed the emulator with
// its own --seed (documents shaped as R2R ingests them, without r2r-mcp's metadata), so a
// later r2r_sync of the clone uploaded the whole corpus again and every hit showed twice.
// The steps now seed with `r2r-mcp sync testdata/docs`; a sync of the whole project then
// finds those documents current.
func TestQuickStartSeedIsRecognised(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "## Quick start")
	if start < 0 {
		t.Fatal("README has no quick start section")
	}
	block := readme[start:]
	block = block[strings.Index(block, "```sh"):]
	block = block[:strings.Index(block[5:], "```")+5]
	if !strings.Contains(block, "bin/r2r-mcp sync testdata/docs") || strings.Contains(block, "--seed") {
		t.Fatalf("the try-it block must seed with `bin/r2r-mcp sync testdata/docs`, not the emulator's --seed:\n%s", block)
	}

	f := newSyncFixture(t)
	var docs []string
	err = filepath.WalkDir(filepath.Join("..", "testdata", "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", p)
		docs = append(docs, filepath.ToSlash(rel))
		f.write(filepath.ToSlash(rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.write("main.go", "package main\n")
	s, r := f.sync(filepath.Join(f.root, "testdata", "docs"))
	if r.err != nil || len(s.Uploaded) != len(docs) {
		t.Fatalf("seeding sync: %d of %d uploaded, %v\n%s", len(s.Uploaded), len(docs), r.err, r.stderr)
	}
	s, r = f.sync(f.root)
	if r.err != nil || s.Unchanged != len(docs) || !slices.Equal(s.Uploaded, []string{"main.go"}) {
		t.Fatalf("whole-project sync after the seed: uploaded %v, %d unchanged (want only main.go, %d unchanged), %v",
			s.Uploaded, s.Unchanged, len(docs), r.err)
	}
}
