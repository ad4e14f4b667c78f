package cmd

import (
	"bytes"
	"strings"
	"testing"
)

// Every command that talks to R2R takes the R2R URL as --url, with the same help, and still
// accepts the former --r2r-url without showing it.
func TestURLFlagIsTheSameEverywhere(t *testing.T) {
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(string) string { return "" }})
	var help string
	for _, name := range []string{"serve", "login", "logout", "status", "doctor", "sync", "auth header", "index create"} {
		t.Run(name, func(t *testing.T) {
			c, _, err := root.Find(strings.Fields(name))
			if err != nil || c.CommandPath() != "r2r-mcp "+name {
				t.Fatalf("find %s: %v", name, err)
			}
			url := c.Flags().Lookup("url")
			if url == nil || url.Hidden {
				t.Fatalf("%s has no visible --url", name)
			}
			if help == "" {
				help = url.Usage
			} else if url.Usage != help {
				t.Errorf("%s --url help %q differs from %q", name, url.Usage, help)
			}
			alias := c.Flags().Lookup("r2r-url")
			if alias == nil || !alias.Hidden {
				t.Fatalf("%s: --r2r-url missing or shown", name)
			}
			if err := c.Flags().Parse([]string{"--r2r-url", "http://alias.example:7272"}); err != nil {
				t.Fatal(err)
			}
			if got := url.Value.String(); got != "http://alias.example:7272" {
				t.Errorf("%s --r2r-url set --url to %q", name, got)
			}
		})
	}
}

// A mistyped command gets the commands it is close to.
func TestMistypedCommandSuggests(t *testing.T) {
	for _, tt := range []struct{ typed, want string }{
		{"serv", "serve"}, {"sycn", "sync"}, {"lgoin", "login"}, {"statsu", "status"},
	} {
		t.Run(tt.typed, func(t *testing.T) {
			root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
				Getenv: func(string) string { return "" }})
			root.SetArgs([]string{tt.typed})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), `unknown command "`+tt.typed+`"`) ||
				!strings.Contains(err.Error(), "Did you mean this?\n\t"+tt.want+"\n") {
				t.Errorf("r2r-mcp %s: %v", tt.typed, err)
			}
		})
	}
	root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(string) string { return "" }})
	root.SetArgs([]string{"frobnicate"})
	if err := root.Execute(); err == nil || strings.Contains(err.Error(), "Did you mean") {
		t.Errorf("r2r-mcp frobnicate: %v", err)
	}
}
