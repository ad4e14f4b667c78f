package cmd

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
)

// TestReadmeDocumentsEveryCommandFlagAndEnv keeps README.md true: every command, every flag
// of serve, and every R2R_MCP_* variable named in serve's help must appear in it.
func TestReadmeDocumentsEveryCommandFlagAndEnv(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &strings.Builder{}, ErrOut: &strings.Builder{}},
		Build: Build(), Getenv: func(string) string { return "" }})
	envRe := regexp.MustCompile(`R2R_MCP_[A-Z_]+`)
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if !strings.Contains(readme, "r2r-mcp "+c.Name()) {
			t.Errorf("README.md does not mention the command %q", "r2r-mcp "+c.Name())
		}
		if c.Name() != "serve" {
			continue
		}
		checkFlags(t, c, readme, envRe)
	}
}

func checkFlags(t *testing.T, c *cobra.Command, readme string, envRe *regexp.Regexp) {
	t.Helper()
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		if !strings.Contains(readme, "`--"+f.Name) {
			t.Errorf("README.md does not document %s --%s", c.Name(), f.Name)
		}
		for _, env := range envRe.FindAllString(f.Usage, -1) {
			if !strings.Contains(readme, env) {
				t.Errorf("README.md does not document %s (from %s --%s)", env, c.Name(), f.Name)
			}
		}
	})
}

// Markers of the README's generated knob tables.
const (
	knobsServeStart, knobsServeEnd = "<!-- knobs:serve:start -->", "<!-- knobs:serve:end -->"
	knobsHTTPStart, knobsHTTPEnd   = "<!-- knobs:http:start -->", "<!-- knobs:http:end -->"
)

// TestReadmeKnobTables keeps the README's configuration tables generated from the knob
// rows (server.Options.Knobs): serve's settings, and those of --http. UPDATE_README=1
// rewrites the blocks between the markers.
func TestReadmeKnobTables(t *testing.T) {
	const path = "../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	opts := server.DefaultOptions()
	var serve, http []knob.Row
	for _, k := range opts.Knobs() {
		if k.Name == "http" || k.With == "http" {
			http = append(http, k)
		} else {
			serve = append(serve, k)
		}
	}
	if len(serve) == 0 || len(http) == 0 {
		t.Fatalf("%d serve and %d --http knobs", len(serve), len(http))
	}
	changed := false
	for _, b := range []struct {
		start, end string
		rows       []knob.Row
	}{{knobsServeStart, knobsServeEnd, serve}, {knobsHTTPStart, knobsHTTPEnd, http}} {
		i, j := strings.Index(readme, b.start), strings.Index(readme, b.end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the lines %q and %q around a knob table", b.start, b.end)
		}
		block := b.start + "\n" + knob.Markdown(b.rows) + b.end
		if readme[i:j+len(b.end)] != block {
			readme, changed = readme[:i]+block+readme[j+len(b.end):], true
		}
	}
	if !changed {
		return
	}
	if os.Getenv("UPDATE_README") == "1" {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("the README's knob tables are out of date; run UPDATE_README=1 go test ./cmd -run TestReadmeKnobTables")
}
