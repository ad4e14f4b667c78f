package httpserve_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// external finds an external client: skipped locally when missing, a failure under CI=true.
func external(t *testing.T, what, missing string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true but %s is missing: %s", what, missing)
	}
	t.Skip(what + " is missing: " + missing)
}

func run(t *testing.T, dir string, environ []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, environ
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The official TypeScript SDK's Streamable HTTP client (protocol 2025-11-25) connects with
// the user's key, lists the registry, finds the user's document and none of the other
// user's, and is refused with a wrong key.
func TestTypeScriptClientOverHTTP(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "ts-client"))
	if err != nil {
		t.Fatal(err)
	}
	node, nerr := exec.LookPath("node")
	external(t, "node", "install Node.js", nerr == nil)
	_, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	external(t, "the TypeScript SDK", "run: npm ci --prefix testdata/ts-client", serr == nil)

	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	var names []string
	for _, d := range rep.Base.ToolDefs() {
		names = append(names, d.Name)
	}
	environ := append(os.Environ(), "R2R_MCP_URL="+rep.URL+"/mcp", "R2R_MCP_KEY="+tm.Alice.Key,
		"R2R_MCP_EXPECT="+tm.Alice.Secret, "R2R_MCP_FORBIDDEN="+tm.Bob.Secret, "R2R_MCP_TOOLS="+strings.Join(names, ","))
	out, err := run(t, dir, environ, node, "http.mjs")
	t.Logf("node http.mjs:\n%s", out)
	if err != nil || !strings.Contains(out, "\nok\n") {
		t.Fatalf("TypeScript SDK over HTTP failed: %v", err)
	}
	if n := tm.Emu.Count(searchRoute); n == 0 {
		t.Error("no search reached R2R")
	}
}

// Claude Code, set up as the README says (claude mcp add --transport http … --header …),
// reports the server connected; with a wrong key it does not.
func TestClaudeCodeOverHTTP(t *testing.T) {
	claude := servertest.ClaudeCLI(t)
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	for _, tc := range []struct {
		key       string
		connected bool
	}{{tm.Alice.Key, true}, {"wrong-key", false}} {
		proj := t.TempDir()
		environ := servertest.ClaudeEnv(servertest.Env(t, ""))
		if out, err := run(t, proj, environ, claude, "mcp", "add", "--transport", "http", "r2r", rep.URL+"/mcp",
			"--header", "Authorization: Bearer "+tc.key); err != nil {
			t.Fatalf("claude mcp add: %v\n%s", err, out)
		}
		out, _ := run(t, proj, environ, claude, "mcp", "list")
		line := ""
		for l := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(l, "r2r:") {
				line = l
			}
		}
		t.Logf("claude mcp list: %s", line)
		if got := strings.Contains(line, "Connected") && !strings.Contains(line, "Failed"); got != tc.connected {
			t.Errorf("key accepted %v: claude mcp list says %q", tc.connected, line)
		}
	}

	// The README's way to keep the key out of the configuration: a project .mcp.json whose
	// header Claude Code expands from the environment.
	proj := t.TempDir()
	mcpJSON := `{"mcpServers": {"r2r": {"type": "http", "url": "` + rep.URL + `/mcp",
		"headers": {"Authorization": "Bearer ${R2R_TEST_KEY}"}}}}`
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := servertest.ClaudeEnv(servertest.Env(t, "",
		"R2R_TEST_KEY="+tm.Bob.Key))
	// Approve the project's server as the trust dialog would (claude mcp list does not ask).
	approval := `{"projects": {` + strconv.Quote(proj) + `: {"enabledMcpjsonServers": ["r2r"], "hasTrustDialogAccepted": true}}}`
	if err := os.WriteFile(filepath.Join(servertest.EnvValue(environ, "HOME"), ".claude.json"), []byte(approval), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := run(t, proj, environ, claude, "mcp", "list")
	if !strings.Contains(out, "Connected") {
		t.Errorf(".mcp.json with ${R2R_TEST_KEY}: claude mcp list says\n%s", out)
	}
}
