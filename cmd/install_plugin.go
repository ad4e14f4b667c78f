package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// claudePluginName is the name of r2r-mcp's Claude Code plugin (.claude-plugin/), whose
// MCP server is the installed r2r-mcp serve under the name every install uses.
const claudePluginName = "r2r"

// enabledClaudePlugin returns the plugin id ("r2r@<marketplace>") and the settings file
// that enables r2r-mcp's Claude Code plugin for this user or project: Claude Code's user
// settings (in CLAUDE_CONFIG_DIR, else ~/.claude), then the project's shared and local
// ones. ok is false when none does; unreadable files count as enabling nothing.
func (o *installOptions) enabledClaudePlugin() (id, file string, ok bool) {
	var files []string
	dir := ""
	if o.Deps.Getenv != nil {
		dir = o.Deps.Getenv("CLAUDE_CONFIG_DIR")
	}
	if home, err := o.Env.HomeDir(); dir == "" && err == nil {
		dir = filepath.Join(home, ".claude")
	}
	if dir != "" {
		files = append(files, filepath.Join(dir, "settings.json"))
	}
	if root, err := o.projectRoot(); err == nil {
		files = append(files, filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".claude", "settings.local.json"))
	}
	for _, f := range files {
		if id, ok := pluginEnabledIn(f); ok {
			return id, f, true
		}
	}
	return "", "", false
}

// pluginEnabledIn reports the id under which the settings file at path enables the
// plugin: an enabledPlugins key "r2r@<marketplace>" whose value is true or a non-empty
// list of versions.
func pluginEnabledIn(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var s struct {
		EnabledPlugins map[string]json.RawMessage `json:"enabledPlugins"`
	}
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	for id, v := range s.EnabledPlugins {
		name, _, _ := strings.Cut(id, "@")
		if name != claudePluginName {
			continue
		}
		var on bool
		var versions []string
		if json.Unmarshal(v, &on) == nil && on || json.Unmarshal(v, &versions) == nil && len(versions) > 0 {
			return id, true
		}
	}
	return "", false
}
