package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pluginDir is the Claude Code plugin the repository's marketplace lists.
var pluginDir = filepath.Join("..", ".claude-plugin", "r2r")

// pluginCommand is the slash command of the plugin for prompt p: the prompt's own message
// with the user's words in place of its text argument. A plugin command gets everything
// typed after it ($ARGUMENTS), where an MCP prompt in Claude Code gets the first word of
// each argument only.
func pluginCommand(t *testing.T, p promptDef) string {
	t.Helper()
	args, hint := map[string]string{}, ""
	for _, a := range p.prompt.Arguments {
		if a.Required {
			args[a.Name], hint = "$ARGUMENTS", "<"+a.Name+">"
		}
	}
	text, err := p.render(context.Background(), args)
	if err != nil {
		t.Fatalf("%s: %v", p.prompt.Name, err)
	}
	for name := range args {
		text = strings.TrimSuffix(text, cutShort(name))
	}
	// A prompt without a text argument takes its optional words from the command line.
	switch p.prompt.Name {
	case "sync":
		hint = "[prune] [collection]"
		text += "\n\nIf I asked for more with the command (" + "$ARGUMENTS" + "): with prune, pass \"prune\": true to both " +
			"r2r_sync calls; with a collection name, find its collection_id with r2r_list_collections and pass it to both."
	case "resume":
		hint = "[topic]"
		text += "\n\nIf I named a task or area with the command (" + "$ARGUMENTS" + "), pass it to r2r_recall as query."
	}
	return "---\ndescription: " + strconv.Quote(p.prompt.Description) + "\nargument-hint: " + strconv.Quote(hint) + "\n---\n\n" + text + "\n"
}

// TestPluginCommands keeps the plugin's commands rendered from the prompts (one text for
// both). UPDATE_TOOLSNAPS=1 rewrites them.
func TestPluginCommands(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(pluginDir, "commands")
	defs := e.deps.promptDefs(false)
	for _, p := range defs {
		compareSnap(t, filepath.Join(dir, p.prompt.Name+".md"), []byte(pluginCommand(t, p)))
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(defs) {
		t.Errorf("%s holds %d files, there are %d prompts: remove the stale ones", dir, len(files), len(defs))
	}
}

// The marketplace lists the plugin, and the plugin runs the installed binary's serve as
// the MCP server named as every install names it.
func TestPluginManifest(t *testing.T) {
	var market struct {
		Name    string `json:"name"`
		Plugins []struct {
			Name        string `json:"name"`
			Source      string `json:"source"`
			Description string `json:"description"`
		} `json:"plugins"`
	}
	readJSON(t, filepath.Join("..", ".claude-plugin", "marketplace.json"), &market)
	if market.Name == "" || len(market.Plugins) != 1 {
		t.Fatalf("marketplace %+v", market)
	}
	if got, want := filepath.Clean(filepath.Join("..", market.Plugins[0].Source)), filepath.Clean(pluginDir); got != want {
		t.Errorf("the plugin's source is %s, want %s", got, want)
	}
	var plugin struct {
		Name       string `json:"name"`
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	readJSON(t, filepath.Join(pluginDir, ".claude-plugin", "plugin.json"), &plugin)
	s, ok := plugin.MCPServers["r2r"]
	if plugin.Name != market.Plugins[0].Name || !ok || s.Command != "r2r-mcp" || strings.Join(s.Args, " ") != "serve" {
		t.Errorf("plugin %+v", plugin)
	}
	// The marketplace entry is what a user reads before installing: it names every command.
	for _, p := range newEnv(t).deps.promptDefs(false) {
		if cmd := "/" + plugin.Name + ":" + p.prompt.Name; !strings.Contains(market.Plugins[0].Description, cmd) {
			t.Errorf("the marketplace's description of the plugin does not name %s: %q", cmd, market.Plugins[0].Description)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
