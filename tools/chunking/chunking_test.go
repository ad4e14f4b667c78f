package chunking

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSplitMarkdown: every file of testdata/docs becomes chunks of at most Target
// characters, each opening with the file, its heading path and its part number (1, 2, …),
// which together hold every line of the file once; no chunk starts inside a code fence.
func TestSplitMarkdown(t *testing.T) {
	for _, rel := range []string{"runbooks/card-authorisation-latency-spike.md", "api/idempotency.md", "reference/glossary.txt"} {
		b, err := os.ReadFile("../../testdata/docs/" + rel)
		if err != nil {
			t.Fatal(err)
		}
		chunks := Split(rel, string(b))
		if len(chunks) < 2 {
			t.Fatalf("%s: %d chunks", rel, len(chunks))
		}
		var bodies []string
		for i, c := range chunks {
			if n := utf8.RuneCountInString(c); n > Target || !strings.HasPrefix(c, Marker+rel) {
				t.Errorf("%s: chunk of %d chars: %.80q", rel, n, c)
			}
			_, part, body := Context(c, rel)
			if part != i+1 {
				t.Errorf("%s: chunk %d is part %d", rel, i+1, part)
			}
			bodies = append(bodies, body)
		}
		joined := strings.Join(bodies, "\n")
		for _, line := range strings.Split(string(b), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.Contains(joined, line) {
				t.Errorf("%s: line %q lost", rel, line)
			}
		}
	}
}

// TestContext: the heading path a chunk carries, for Markdown sections, code declarations
// and plain text.
func TestContext(t *testing.T) {
	long := strings.Repeat("word ", 80)
	for _, tc := range []struct {
		file, text, find, section string
	}{
		{"g.md", "# Guide\n\nIntro " + long + "\n\n## Install\n\n" + long + "\n\n### Linux\n\nRun apt install zebra.\n", "zebra", "Guide › Install › Linux"},
		{"g.md", "# Guide\n\n```sh\n# not a heading\necho zebra\n```\n", "zebra", "Guide"},
		{"m.go", "package m\n\n// Zebra stripes.\nfunc Zebra() int {\n\treturn 1\n}\n", "Zebra()", "func Zebra() int"},
		{"m.py", "import os\n\n# Zebra stripes.\ndef Zebra():\n    return 1\n", "Zebra()", "def Zebra()"},
		{"n.txt", "plain zebra text", "zebra", ""},
	} {
		found := false
		for _, c := range Split(tc.file, tc.text) {
			section, _, body := Context(c, tc.file)
			if strings.Contains(body, tc.find) {
				found = true
				if section != tc.section {
					t.Errorf("%s: section %q, want %q in %q", tc.file, section, tc.section, c)
				}
			}
		}
		if !found {
			t.Errorf("%s: %q in no chunk", tc.file, tc.find)
		}
	}
	if Split("x.md", " \n\n") != nil {
		t.Error("blank text gave chunks")
	}
	if s, p, b := Context("no marker", "x.md"); s != "" || p != 0 || b != "no marker" {
		t.Errorf("Context without marker = %q, %d, %q", s, p, b)
	}
}

// TestRSTHeadings: reStructuredText and Setext headings (underlined, with or without an
// overline) give the heading path, levels in the order their characters first appear; a
// chunk holding several short sections is under the path they share.
func TestRSTHeadings(t *testing.T) {
	long := strings.Repeat("word ", 80)
	text := "=====\nGuide\n=====\n\nIntro " + long + "\n\nInstall\n-------\n\n" + strings.Repeat("pelican ", 60) + "\n\nLinux\n~~~~~\n\nRun apt install zebra.\n\nUsage\n-----\n\nCall the heron.\n"
	want := map[string]string{"zebra": "Guide", "heron": "Guide", "pelican": "Guide › Install"}
	for _, c := range Split("g.rst", text) {
		section, _, body := Context(c, "g.rst")
		for find, w := range want {
			if strings.Contains(body, find) && section != w {
				t.Errorf("%s: section %q, want %q", find, section, w)
			}
		}
	}
}

// TestContextOfNamesWithSeparator: the heading path is read after the file's name, whatever
// the name holds (the separator, runs of spaces); a name that fills the context line leaves
// no path rather than a piece of the name.
func TestContextOfNamesWithSeparator(t *testing.T) {
	text := "# Guide\n\n## Install\n\nRun apt install zebra.\n"
	long := strings.Repeat("very › long ", 30) + ".md"
	for _, tc := range []struct{ file, section string }{
		{"docs/plain.md", "Guide"},
		{"docs/notes › 2024.md", "Guide"},
		{"docs/a › b › c.md", "Guide"},
		{"docs/ › lead.md", "Guide"},
		{"docs/two  spaces ›  x.md", "Guide"},
		{"docs/tail › .md", "Guide"},
		{long, ""},
	} {
		chunks := Split(tc.file, text)
		if len(chunks) != 1 {
			t.Fatalf("%s: %d chunks", tc.file, len(chunks))
		}
		if section, part, body := Context(chunks[0], tc.file); section != tc.section || part != 1 || !strings.Contains(body, "zebra") {
			t.Errorf("%s: section %q part %d, want %q part 1 (chunk %q)", tc.file, section, part, tc.section, chunks[0])
		}
	}
}

// The context line collapses white space (tabs, line ends, runs of spaces, Unicode spaces) to
// single spaces and keeps at most maxContext characters, the last one an ellipsis when it
// was cut.
func TestContextLine(t *testing.T) {
	exact := strings.Repeat("é", maxContext-len([]rune(Marker+"f"+sep)))
	for _, tc := range []struct {
		file     string
		headings []string
		want     string
	}{
		{"a.go", nil, "§ a.go"},
		{" a.go ", []string{"func  F(\n\ta int,\u00a0b int)\t"}, "§ a.go › func F( a int, b int)"},
		{"f", []string{exact}, "§ f › " + exact},
		{"f", []string{exact + "x"}, "§ f › " + exact[:len(exact)-len("é")] + "…"},
	} {
		got := contextLine(tc.file, tc.headings)
		if got != tc.want {
			t.Errorf("contextLine(%q, %q) = %q, want %q", tc.file, tc.headings, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n > maxContext {
			t.Errorf("contextLine(%q, …) has %d characters, more than %d", tc.file, n, maxContext)
		}
	}
}
