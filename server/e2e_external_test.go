package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// inCI reports whether the tests run under CI, where a missing external client is a
// failure rather than a reason to skip.
func inCI() bool { return os.Getenv("CI") == "true" }

// teeStdout returns a wrapper command that runs the built binary with its arguments and
// copies its stdout to a log, for clients that spawn the server themselves (the TypeScript
// SDK, Claude Code). check, run after the client is done, fails the test unless every line
// the server wrote was JSON-RPC 2.0.
func teeStdout(t *testing.T) (wrapper string, check func()) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stdout tee wrapper is a POSIX shell script")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "stdout.log")
	wrapper = filepath.Join(dir, "r2r-mcp-tee")
	script := "#!/bin/sh\n" + shellQuote(servertest.Build(t)) + ` "$@" | tee -a ` + shellQuote(log) + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, func() {
		t.Helper()
		raw, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("server stdout log: %v", err)
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if len(raw) == 0 || len(lines) < 2 {
			t.Fatalf("server wrote %d stdout lines, want the client's whole session", len(lines))
		}
		for i, l := range lines {
			if err := servertest.ValidateJSONRPC(l); err != nil {
				t.Errorf("stdout line %d is not JSON-RPC 2.0 (%v): %s", i+1, err, servertest.Truncate(l))
			}
		}
		t.Logf("%d stdout lines, all JSON-RPC 2.0", len(lines))
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestE2ETypeScriptClient runs testdata/ts-client/e2e.mjs, which drives the binary with the
// official MCP TypeScript SDK (StdioClientTransport): initialize, tools/list, search,
// ingest, monitor until success, search again. It needs node and `npm ci` in
// testdata/ts-client; without them it is skipped locally and fails under CI=true.
func TestE2ETypeScriptClient(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "ts-client"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not on PATH"
	default:
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
			missing = "testdata/ts-client/node_modules is missing (run: npm ci --prefix testdata/ts-client)"
		}
	}
	if missing != "" {
		if inCI() {
			t.Fatalf("CI=true but %s", missing)
		}
		t.Skip(missing)
	}

	emu := r2rtest.NewServer(t, r2rtest.Options{IngestDelay: 20 * time.Millisecond})
	proj := servertest.GitProject(t, "delta", map[string]string{"docs/guide.md": guideText})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	bin, checkStdout := teeStdout(t)
	cmd := exec.CommandContext(ctx, node, "e2e.mjs")
	cmd.Dir = dir
	cmd.Env = servertest.Env(t, emu.URL,
		"R2R_MCP_BIN="+bin,
		"R2R_MCP_PROJECT="+proj,
		"R2R_MCP_FILE=docs/guide.md",
		"R2R_MCP_EXPECT="+guideQuery,
		"R2R_MCP_TOOLS="+strings.Join(servertest.ToolNames(servertest.Tools(t), false), ","),
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("TypeScript SDK client failed: %v", err)
	}
	if !strings.Contains(string(out), "\nok\n") {
		t.Fatalf("the script did not finish")
	}
	checkStdout()
}

// TestE2EClaudeCode registers the binary with the Claude Code CLI the way the README tells
// users to (claude mcp add r2r -- r2r-mcp serve) and checks `claude mcp list` reports it
// connected. It runs only where `claude` is on PATH; it needs no Claude login.
// runIn runs a command in dir with environ, bounded, and fails the test when it fails.
func runIn(t *testing.T, dir string, environ []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s:\n%s", filepath.Base(name), strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("%s %s: %v", filepath.Base(name), args[0], err)
	}
	return string(out)
}

// wantConnected checks `claude mcp list` reports the r2r server Connected.
func wantConnected(t *testing.T, out string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "r2r:") {
			line = l
		}
	}
	if !strings.Contains(line, "Connected") {
		t.Fatalf("claude mcp list does not report r2r connected:\n%s", out)
	}
}

// TestE2EClaudeCode adds the server to Claude Code by hand, as the README says, and checks
// that Claude Code's own health check connects to it and that a session lists the server's
// prompts as slash commands (/mcp__r2r__ask …).
func TestE2EClaudeCode(t *testing.T) {
	t.Parallel()
	claude := servertest.ClaudeCLI(t)
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "epsilon", nil)
	environ := servertest.ClaudeEnv(servertest.Env(t, ""))
	bin, checkStdout := teeStdout(t)
	runIn(t, proj, environ, claude, "mcp", "add", "r2r", "-e", "R2R_API_URL="+emu.URL, "--", bin, "serve")
	wantConnected(t, runIn(t, proj, environ, claude, "mcp", "list"))
	servertest.WantSlashCommands(t, proj, environ, "mcp__r2r__ask", "mcp__r2r__search", "mcp__r2r__sync", "mcp__r2r__remember", "mcp__r2r__resume")
	checkStdout()
}

// TestE2EInstallClaudeCode is the new user's path: `r2r-mcp install claude-code` in a fresh
// HOME, then `claude mcp list` shows r2r Connected; a second install changes nothing.
func TestE2EInstallClaudeCode(t *testing.T) {
	t.Parallel()
	claude := servertest.ClaudeCLI(t)
	proj := servertest.GitProject(t, "zeta", nil)
	environ := servertest.ClaudeEnv(servertest.Env(t, ""))
	bin := servertest.Build(t)
	runIn(t, proj, environ, bin, "install", "claude-code")
	wantConnected(t, runIn(t, proj, environ, claude, "mcp", "list"))
	if out := runIn(t, proj, environ, bin, "install", "claude-code"); !strings.Contains(out, "up to date") {
		t.Fatalf("second install was not a no-op:\n%s", out)
	}
}

// TestE2EClaudeCodePlugin installs the repository's Claude Code plugin from its local
// marketplace as the README says (claude plugin marketplace add, claude plugin install),
// with r2r-mcp on PATH, and checks Claude Code connects to the plugin's r2r server.
func TestE2EClaudeCodePlugin(t *testing.T) {
	t.Parallel()
	claude := servertest.ClaudeCLI(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	proj := servertest.GitProject(t, "eta", nil)
	bin := t.TempDir()
	if err := os.Symlink(servertest.Build(t), filepath.Join(bin, "r2r-mcp")); err != nil {
		t.Fatal(err)
	}
	environ := servertest.ClaudeEnv(servertest.Env(t, emu.URL,
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")))
	runIn(t, proj, environ, claude, "plugin", "marketplace", "add", repo)
	runIn(t, proj, environ, claude, "plugin", "install", "r2r@r2r-mcp")
	out := runIn(t, proj, environ, claude, "mcp", "list")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "r2r-mcp serve") {
			line = l
		}
	}
	if !strings.HasPrefix(line, "plugin:r2r:r2r") || !strings.Contains(line, "Connected") {
		t.Fatalf("claude mcp list does not report the plugin's r2r connected:\n%s", out)
	}
	servertest.WantSlashCommands(t, proj, environ, "r2r:ask", "r2r:search", "r2r:sync", "r2r:remember", "r2r:resume")
}

// TestE2EInstallClaudeCodeKeepsOtherScope: with r2r already in Claude Code's local scope,
// `r2r-mcp install claude-code` (user scope) keeps that entry and says so, and Claude Code
// ends with one r2r, connected.
func TestE2EInstallClaudeCodeKeepsOtherScope(t *testing.T) {
	t.Parallel()
	claude := servertest.ClaudeCLI(t)
	proj := servertest.GitProject(t, "theta", nil)
	environ := servertest.ClaudeEnv(servertest.Env(t, ""))
	bin := servertest.Build(t)
	runIn(t, proj, environ, claude, "mcp", "add", "--scope", "local", "r2r", "--", bin, "serve")
	if out := runIn(t, proj, environ, bin, "install", "claude-code"); !strings.Contains(out, "local scope; install keeps that entry") {
		t.Fatalf("install did not say it keeps the local entry:\n%s", out)
	}
	out := runIn(t, proj, environ, claude, "mcp", "list")
	wantConnected(t, out)
	if n := strings.Count(out, "\nr2r:"); n != 1 {
		t.Fatalf("claude mcp list shows %d r2r entries:\n%s", n, out)
	}
	if got := runIn(t, proj, environ, claude, "mcp", "get", "r2r"); !strings.Contains(got, "Scope: Local config") {
		t.Fatalf("the kept entry is not the local one:\n%s", got)
	}
}
