package servertest

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// ClaudeCLI finds the Claude Code CLI (npm @anthropic-ai/claude-code): the test is skipped
// where it is missing, and fails under CI=true, where .ci/run installs it.
func ClaudeCLI(t testing.TB) string {
	t.Helper()
	claude, err := exec.LookPath("claude")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("claude is not on PATH under CI; .ci/run installs @anthropic-ai/claude-code")
		}
		t.Skip("claude (npm install -g @anthropic-ai/claude-code) is not on PATH")
	}
	return claude
}

// ClaudeEnv is env for running the Claude Code CLI in a test: no update checks and no
// traffic but the MCP servers'.
func ClaudeEnv(env []string) []string {
	return append(slices.Clip(env), "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
}

// WantSlashCommands starts a Claude Code session in dir with environ (`claude -p`, which
// needs no login for its first message) and fails the test unless the slash commands its
// init message lists include every one of want (an MCP prompt p of server r2r is
// "mcp__r2r__p").
func WantSlashCommands(t testing.TB, dir string, environ []string, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ClaudeCLI(t), "-p", "hi", "--output-format", "stream-json", "--verbose")
	// Claude Code 2.1 connects MCP servers in the background by default, so a busy machine
	// can print the init message before r2r-mcp is connected; false makes -p wait for them.
	cmd.Dir, cmd.Env = dir, append(slices.Clip(environ), "MCP_CONNECTION_NONBLOCKING=false")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Only the first line is needed; the rest would be a failure for want of a login.
	first, err := bufio.NewReader(stdout).ReadString('\n')
	cancel()
	_ = cmd.Wait()
	var init struct {
		Subtype       string   `json:"subtype"`
		SlashCommands []string `json:"slash_commands"`
	}
	if jerr := json.Unmarshal([]byte(first), &init); jerr != nil || init.Subtype != "init" {
		t.Fatalf("no init message from claude -p (%v, %v): %s", err, jerr, first)
	}
	for _, w := range want {
		if !slices.Contains(init.SlashCommands, w) {
			t.Errorf("Claude Code does not list /%s; it lists %v", w, init.SlashCommands)
		}
	}
}
