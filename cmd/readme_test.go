package cmd

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
