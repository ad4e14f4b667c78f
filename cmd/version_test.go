package cmd

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
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

// TestBuildInfoFromToolchain: a binary built without -ldflags (go install, go build) reports
// what the toolchain recorded instead of "dev (commit none, built unknown)".
func TestBuildInfoFromToolchain(t *testing.T) {
	unset := BuildInfo{Version: "dev", Commit: "none", Date: "unknown"}
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name     string
		ldflags  BuildInfo
		version  string
		settings []debug.BuildSetting
		want     BuildInfo
	}{
		{"go install of a tag", unset, "v1.4.0", nil, BuildInfo{"v1.4.0", "none", "unknown"}},
		{"go install of a commit", unset, "v0.0.0-20261126145939-f6db8d1a27fe", nil,
			BuildInfo{"v0.0.0-20261126145939-f6db8d1a27fe", "f6db8d1a27fe", "2026-11-26T14:59:39Z"}},
		{"pseudo-version after a tag", unset, "v1.4.1-0.20261126145939-f6db8d1a27fe", nil,
			BuildInfo{"v1.4.1-0.20261126145939-f6db8d1a27fe", "f6db8d1a27fe", "2026-11-26T14:59:39Z"}},
		{"go build in a checkout", unset, "v0.0.0-20261126145939-f6db8d1a27fe+dirty",
			vcs("f6db8d1a27feedcd04440cbf964c83c3dec2cae7", "2026-11-26T14:59:39Z", "true"),
			BuildInfo{"v0.0.0-20261126145939-f6db8d1a27fe+dirty", "f6db8d1a27fe-dirty", "2026-11-26T14:59:39Z"}},
		{"pseudo-version of a pre-release, +incompatible", unset, "v2.0.0-rc.1.0.20261126145939-f6db8d1a27fe+incompatible", nil,
			BuildInfo{"v2.0.0-rc.1.0.20261126145939-f6db8d1a27fe+incompatible", "f6db8d1a27fe", "2026-11-26T14:59:39Z"}},
		{"not a pseudo-version", unset, "v1.4.0-x20261126145939-F6DB8D1A27FE", nil, BuildInfo{"v1.4.0-x20261126145939-F6DB8D1A27FE", "none", "unknown"}},
		{"go build without VCS", unset, "(devel)", nil, unset},
		{"ldflags win", BuildInfo{"v2.0.0", "abc1234", "2026-11-21"}, "v0.0.0-20261126145939-f6db8d1a27fe",
			vcs("f6db8d1a27feedcd04440cbf964c83c3dec2cae7", "2026-11-26T14:59:39Z", "false"), BuildInfo{"v2.0.0", "abc1234", "2026-11-21"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/r2r-mcp/r2r-mcp", Version: tt.version}, Settings: tt.settings}
			if got := buildInfo(tt.ldflags, bi); got != tt.want {
				t.Errorf("buildInfo = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := buildInfo(unset, nil); got != unset {
		t.Errorf("without build info: %+v", got)
	}
}
