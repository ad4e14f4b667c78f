package cmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVersionCmd(t *testing.T) {
	build := BuildInfo{Version: "1.2.3", Commit: "abc123", Date: "2026-11-21"}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"text", []string{"version"}, []string{"r2r-mcp 1.2.3", "commit abc123", "built 2026-11-21"}},
		{"json", []string{"version", "--json"}, []string{`"version":"1.2.3"`, `"commit":"abc123"`}},
		{"flag", []string{"--version"}, []string{"r2r-mcp 1.2.3", "commit abc123"}},
		{"short flag", []string{"-v"}, []string{"r2r-mcp 1.2.3", "commit abc123"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Build: build, Getenv: func(string) string { return "" }})
			root.SetArgs(tt.args)
			if err := root.Execute(); err != nil {
				t.Fatalf("execute: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout %q does not contain %q", out.String(), w)
				}
			}
			if errOut.Len() != 0 {
				t.Errorf("unexpected stderr: %q", errOut.String())
			}
		})
	}
	t.Run("json parses", func(t *testing.T) {
		var out bytes.Buffer
		root := NewRootCmd(Deps{IO: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, Build: build, Getenv: func(string) string { return "" }})
		root.SetArgs([]string{"version", "--json"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if got["version"] != "1.2.3" || got["go_version"] == "" {
			t.Errorf("got %v", got)
		}
	})
}
