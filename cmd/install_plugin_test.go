package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallClaudeCodeWithThePlugin: where the r2r Claude Code plugin is enabled (it runs
// r2r-mcp serve as the server r2r), install claude-code says so and adds no second
// server; a disabled plugin, or none, changes nothing about the install.
func TestInstallClaudeCodeWithThePlugin(t *testing.T) {
	tests := []struct {
		name     string
		file     string // relative to the fixture: home/... or proj/...
		settings string
		plugin   bool
	}{
		{"user settings", "home/.claude/settings.json", `{"enabledPlugins": {"r2r@r2r-mcp": true}}`, true},
		{"project settings", "proj/.claude/settings.json", `{"enabledPlugins": {"other@x": true, "r2r@r2r-mcp": true}}`, true},
		{"local settings", "proj/.claude/settings.local.json", `{"enabledPlugins": {"r2r@r2r-mcp": ["1.0.0"]}}`, true},
		{"disabled", "home/.claude/settings.json", `{"enabledPlugins": {"r2r@r2r-mcp": false}}`, false},
		{"another plugin", "home/.claude/settings.json", `{"enabledPlugins": {"r2rx@elsewhere": true}}`, false},
		{"no settings", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newInstallFixture(t, "linux")
			if tt.file != "" {
				base := f.home
				rel, ok := strings.CutPrefix(tt.file, "home/")
				if !ok {
					base, rel = f.proj, strings.TrimPrefix(tt.file, "proj/")
				}
				writeFile(t, filepath.Join(base, filepath.FromSlash(rel)), tt.settings, 0o644)
			}
			log := fakeClaude(t, "echo added", "exit 1")
			err := f.run("claude-code")
			added := false
			for _, c := range calls(t, log) {
				if strings.Contains(c, " mcp add ") {
					added = true
				}
			}
			if tt.plugin {
				if err != nil || added || !strings.Contains(f.errOut.String(), "plugin r2r@r2r-mcp") ||
					!strings.Contains(f.errOut.String(), "no second") {
					t.Fatalf("err %v, added %v; stderr:\n%s", err, added, f.errOut.String())
				}
				return
			}
			if err != nil || !added {
				t.Fatalf("err %v, added %v; stderr:\n%s", err, added, f.errOut.String())
			}
		})
	}
}

// TestClaudePluginName: the plugin install looks for is the repository's plugin.
func TestClaudePluginName(t *testing.T) {
	var plugin struct {
		Name string `json:"name"`
	}
	b, err := os.ReadFile(filepath.Join("..", ".claude-plugin", "r2r", ".claude-plugin", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &plugin); err != nil || plugin.Name != claudePluginName {
		t.Errorf("plugin.json names the plugin %q (%v); install looks for %q", plugin.Name, err, claudePluginName)
	}
}
