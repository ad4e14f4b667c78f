package cmd

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeUserPartMax bounds what a reader sees before the first collapsed section: the
// user's part (what r2r-mcp is, a quick start, install, tools, scoping, configuration,
// troubleshooting). Team deployment, references, figures and development follow collapsed.
const readmeUserPartMax = 15_000

// TestReadmeUserPartFitsBudget keeps README.md a user's document first: the part before the
// first <details> holds the user's sections, the quick start is linked from the top, and
// that part stays under readmeUserPartMax bytes.
func TestReadmeUserPartFitsBudget(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(raw, []byte("<details"))
	if i < 0 {
		t.Fatal("README.md has no collapsed <details> section: team deployment, the references and development belong in them")
	}
	user := string(raw[:i])
	if len(user) > readmeUserPartMax {
		t.Errorf("README.md has %d bytes before its first <details>, over the %d-byte budget of the user's part: "+
			"tighten it, or move material for operators or contributors into a collapsed section", len(user), readmeUserPartMax)
	}
	for _, h := range []string{"## Quick start", "## Install", "## Tools", "## Project scoping", "## Configuration", "## Troubleshooting"} {
		if !strings.Contains(user, "\n"+h+"\n") {
			t.Errorf("the user's part of README.md (before the first <details>) has no %q section", h)
		}
	}
	// A newcomer runs the quick start, then the tests: the test command and how long it
	// takes are in the visible part, not only in the collapsed development section.
	if !regexp.MustCompile("(?m)^make test +# .*\\d+ minutes").MatchString(user) {
		t.Error("the user's part of README.md (before the first <details>) does not show `make test` with how long it runs")
	}
	if top, _, _ := strings.Cut(user, "\n## "); !strings.Contains(top, "](#quick-start)") {
		t.Error("README.md does not link the quick start before its first section")
	}
	if n, m := strings.Count(string(raw), "<details>"), strings.Count(string(raw), "</details>"); n != m {
		t.Errorf("README.md opens %d <details> and closes %d", n, m)
	}
}

// TestReadmeAnchorsResolve: every in-page link of README.md names a heading, with the anchor
// GitHub derives from it, so moving a section into a collapsed one breaks no link.
func TestReadmeAnchorsResolve(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		slug := githubSlug(strings.TrimLeft(line, "# "))
		for n := 0; ; n++ { // GitHub numbers repeated headings: slug, slug-1, slug-2, ...
			s := slug
			if n > 0 {
				s += "-" + strconv.Itoa(n)
			}
			if !anchors[s] {
				anchors[s] = true
				break
			}
		}
	}
	links := regexp.MustCompile(`\]\(#([^)]+)\)`).FindAllStringSubmatch(string(raw), -1)
	if len(links) == 0 {
		t.Fatal("README.md has no in-page links: the top should link the quick start")
	}
	for _, l := range links {
		if !anchors[l[1]] {
			t.Errorf("README.md links #%s, which no heading defines", l[1])
		}
	}
}

// githubSlug is the anchor GitHub gives a heading: lower case, spaces to hyphens, and
// everything but letters, digits, hyphens and underscores dropped.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
