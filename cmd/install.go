package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth/atomicfile"
	"github.com/r2r-mcp/r2r-mcp/cmd/jsonc"
)

// mcpServerName is the key r2r-mcp is registered under in every client.
const mcpServerName = "r2r"

// installClients are the clients install knows, with the description shown in completions.
var installClients = []struct{ name, desc string }{
	{"claude-desktop", "Claude Desktop app (user config)"},
	{"claude-code", "Claude Code CLI (runs claude mcp add)"},
	{"cursor", "Cursor (~/.cursor/mcp.json or .cursor/mcp.json)"},
	{"vscode", "VS Code (user mcp.json or .vscode/mcp.json)"},
}

type installOptions struct {
	Client string
	Scope  string // "user", "project" or, for claude-code, "local"; "" means user
	DryRun bool

	Ctx  context.Context
	Deps Deps
	Env  installEnv
}

// installEnv is the part of the machine install reads and changes; tests point it at temp dirs.
type installEnv struct {
	GOOS       string
	HomeDir    func() (string, error)
	WorkDir    func() (string, error)
	Executable func() (string, error)
	LookPath   func(file string) (string, error)
	// Run runs name with args in dir and returns its combined stdout and stderr.
	Run func(ctx context.Context, dir, name string, args ...string) ([]byte, error)
	Now func() time.Time
}

func defaultInstallEnv() installEnv {
	return installEnv{
		GOOS:       runtime.GOOS,
		HomeDir:    os.UserHomeDir,
		WorkDir:    os.Getwd,
		Executable: os.Executable,
		LookPath:   exec.LookPath,
		Run: func(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
			c := exec.CommandContext(ctx, name, args...)
			c.Dir = dir
			return c.CombinedOutput()
		},
		Now: time.Now,
	}
}

func newInstallCmd(deps Deps, runF func(*installOptions) error) *cobra.Command {
	opts := &installOptions{Deps: deps, Env: defaultInstallEnv()}
	names := make([]string, len(installClients))
	completions := make([]cobra.Completion, len(installClients))
	for i, c := range installClients {
		names[i] = c.name
		completions[i] = cobra.CompletionWithDesc(c.name, c.desc)
	}
	c := &cobra.Command{
		Use:   "install <claude-desktop|claude-code|cursor|vscode>",
		Short: "Add r2r-mcp to an MCP client's configuration",
		Long: `Register "r2r-mcp serve" as the MCP server named r2r in a client's configuration.

The entry runs this binary by its absolute path with the argument "serve". It holds no
secrets and no environment: serve finds the credentials "r2r-mcp login" stored.

  claude-desktop  Claude Desktop's claude_desktop_config.json (user scope only)
  claude-code     runs "claude mcp add r2r --scope ... -- <this binary> serve"; when claude
                  is not on PATH, prints that command and fails: nothing was installed. An
                  r2r Claude Code has in another scope is kept (install says which), not
                  joined by a second one
  cursor          ~/.cursor/mcp.json (user) or .cursor/mcp.json in the project (project)
  vscode          mcp.json in VS Code's default user profile (user) or .vscode/mcp.json in
                  the project (project)

--scope user (the default) makes r2r available in every project; --scope project writes the
project's own config file at the git root (Claude Code also has --scope local). Files are
merged, not replaced: other servers and settings stay byte for byte as they were. Before a
file is changed a timestamped .bak copy is written next to it, and the file is replaced
atomically. Running install again when the entry is current changes nothing. A file that is
not valid JSON is left alone.`,
		Example: `  r2r-mcp install claude-code
  r2r-mcp install cursor --scope project --dry-run
  r2r-mcp install vscode --scope project`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("install needs one client: %s", strings.Join(names, ", "))
			}
			for _, n := range names {
				if args[0] == n {
					return nil
				}
			}
			return fmt.Errorf("unknown client %q: choose one of %s", args[0], strings.Join(names, ", "))
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completions, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Client = args[0]
			opts.Ctx = cmd.Context()
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runInstall(opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Scope, "scope", "", `"user" (every project; default) or "project" (this project's config); claude-code also takes "local"`)
	f.BoolVar(&opts.DryRun, "dry-run", false, "show what would change (a diff, or the claude command) and change nothing")
	_ = c.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions(
		[]cobra.Completion{"user", "project", "local"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func (o *installOptions) validate() error {
	if o.Scope == "" {
		o.Scope = "user"
	}
	switch {
	case o.Scope == "user" || o.Scope == "project":
	case o.Scope == "local" && o.Client == "claude-code":
	case o.Scope == "local":
		return fmt.Errorf(`--scope local is only for claude-code; %s takes "user" or "project"`, o.Client)
	default:
		return fmt.Errorf(`unknown --scope %q: use "user" or "project"`, o.Scope)
	}
	if o.Client == "claude-desktop" && o.Scope != "user" {
		return errors.New("Claude Desktop has one config for the whole user and none per project; drop --scope (or use --scope user)")
	}
	return nil
}

func runInstall(o *installOptions) error {
	exe, err := o.binaryPath()
	if err != nil {
		return err
	}
	if o.Client == "claude-code" {
		return o.installClaudeCode(exe)
	}
	cfg, err := o.clientConfig(exe)
	if err != nil {
		return err
	}
	return o.installFile(cfg)
}

// binaryPath is the absolute, symlink-free path of the running binary: clients start servers
// without the user's shell PATH (GUI apps in particular), so a bare "r2r-mcp" may not resolve.
func (o *installOptions) binaryPath() (string, error) {
	exe, err := o.Env.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the path of this binary: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return "", err
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("this binary is a temporary go run build (%s) that will be deleted; "+
			"build or install r2r-mcp (make build, or go install) and run install from that binary", exe)
	}
	return exe, nil
}

// clientConfig describes the file of a JSON-configured client and the entry it should hold.
type clientConfig struct {
	Name      string    // "Claude Desktop"
	Path      string    // the config file
	Container string    // the top-level key holding servers
	JSONC     bool      // the client accepts comments and trailing commas
	Entry     jsonc.Obj // what the r2r key should hold
	Next      string    // what the user does next, after a write
}

func (o *installOptions) clientConfig(exe string) (clientConfig, error) {
	home, err := o.Env.HomeDir()
	if err != nil {
		return clientConfig{}, fmt.Errorf("cannot find your home directory: %w", err)
	}
	entry := jsonc.Obj{{Key: "command", Value: exe}, {Key: "args", Value: []string{"serve"}}}
	root := ""
	if o.Scope == "project" {
		if root, err = o.projectRoot(); err != nil {
			return clientConfig{}, err
		}
	}
	switch o.Client {
	case "claude-desktop":
		return clientConfig{
			Name:      "Claude Desktop",
			Path:      filepath.Join(o.appConfigDir(home), "Claude", "claude_desktop_config.json"),
			Container: "mcpServers",
			Entry:     entry,
			Next:      "Quit and restart Claude Desktop to load it.",
		}, nil
	case "cursor":
		dir := filepath.Join(home, ".cursor")
		if root != "" {
			dir = filepath.Join(root, ".cursor")
		}
		return clientConfig{
			Name:      "Cursor",
			Path:      filepath.Join(dir, "mcp.json"),
			Container: "mcpServers",
			Entry:     entry,
			Next:      "Cursor lists it under Settings > MCP; reload the window if it is not there yet.",
		}, nil
	case "vscode":
		// Since VS Code 1.102 user-level MCP servers live in mcp.json in the user profile
		// folder (what "MCP: Open User Configuration" opens); this is the default profile's.
		path := filepath.Join(o.appConfigDir(home), "Code", "User", "mcp.json")
		next := `In VS Code run "MCP: List Servers" to start it. This is the default profile's file; ` +
			`for another profile or VS Code Insiders use "MCP: Add Server" or --scope project.`
		if root != "" {
			path = filepath.Join(root, ".vscode", "mcp.json")
			next = `In VS Code run "MCP: List Servers" to start it.`
		}
		return clientConfig{
			Name:      "VS Code",
			Path:      path,
			Container: "servers",
			JSONC:     true,
			Entry:     append(jsonc.Obj{{Key: "type", Value: "stdio"}}, entry...),
			Next:      next,
		}, nil
	}
	return clientConfig{}, fmt.Errorf("unknown client %q", o.Client)
}

// appConfigDir is where desktop apps (Electron's appData) keep per-user settings.
func (o *installOptions) appConfigDir(home string) string {
	getenv := o.Deps.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	switch o.Env.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support")
	case "windows":
		if d := getenv("APPDATA"); d != "" {
			return d
		}
		return filepath.Join(home, "AppData", "Roaming")
	default:
		if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
			return d
		}
		return filepath.Join(home, ".config")
	}
}

// projectRoot is the git root above the working directory, or the working directory itself.
func (o *installOptions) projectRoot() (string, error) {
	wd, err := o.Env.WorkDir()
	if err != nil {
		return "", fmt.Errorf("cannot read the working directory: %w", err)
	}
	for dir := wd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd, nil
		}
		dir = parent
	}
}

func (o *installOptions) installFile(cfg clientConfig) error {
	errOut, out := o.Deps.IO.ErrOut, o.Deps.IO.Out
	old, err := os.ReadFile(cfg.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot read %s: %w", cfg.Path, err)
	}
	updated, changed, err := jsonc.Merge(old, cfg.JSONC, []string{cfg.Container, mcpServerName}, cfg.Entry)
	if err != nil {
		what := "is not valid JSON"
		if cfg.JSONC {
			what = "is not valid JSON (with comments)"
		}
		if errors.Is(err, jsonc.ErrNotObject) {
			what = "has an unexpected shape"
		}
		return fmt.Errorf("%s %s: %v\nThe file was not changed. Fix it, or move it aside, and run r2r-mcp install %s again", cfg.Path, what, err, o.Client)
	}
	if !changed {
		fmt.Fprintf(errOut, "r2r is already up to date in %s; nothing changed.\n", cfg.Path)
		return nil
	}
	if o.DryRun {
		from := cfg.Path
		if !exists {
			from = "/dev/null"
		}
		fmt.Fprint(out, jsonc.Diff(from, cfg.Path, old, updated))
		fmt.Fprintf(errOut, "Dry run: %s would change as shown above; nothing was written.\n", cfg.Path)
		return nil
	}
	backup, err := writeConfigFile(cfg.Path, old, exists, updated, o.Scope == "user", o.Env.Now())
	if err != nil {
		return err
	}
	if prev, ok := entryCommand(old, cfg); ok {
		fmt.Fprintf(errOut, "Updated r2r in %s's config %s (it ran %s)\n", cfg.Name, cfg.Path, prev)
	} else {
		fmt.Fprintf(errOut, "Added r2r to %s's config %s\n", cfg.Name, cfg.Path)
	}
	if backup != "" {
		fmt.Fprintf(errOut, "The previous version is in %s\n", backup)
	}
	if o.Scope == "project" {
		fmt.Fprintln(errOut, "The entry holds this machine's path to r2r-mcp; teammates should each run r2r-mcp install rather than share the path.")
	}
	fmt.Fprintln(errOut, cfg.Next)
	fmt.Fprintln(errOut, loginHint)
	return nil
}

// loginHint ends a successful install: the entry carries no credentials by design.
const loginHint = "The entry holds no credentials: if you have not yet, run r2r-mcp login once so serve can reach R2R."

// entryCommand returns the command of an existing r2r entry in src, if there is one.
func entryCommand(src []byte, cfg clientConfig) (string, bool) {
	entry, ok := jsonc.Lookup(src, cfg.JSONC, cfg.Container, mcpServerName)
	if !ok {
		return "", false
	}
	if c, ok := jsonc.Lookup(src, cfg.JSONC, cfg.Container, mcpServerName, "command"); ok && c.IsString {
		return c.Str, true
	}
	return entry.Raw, true
}

// writeConfigFile backs up the current file (when there is one) and then replaces it
// atomically (atomicfile.Write), so a crash never leaves a half-written config. A
// symlinked config is written through to its target. It returns the backup's path.
func writeConfigFile(path string, old []byte, exists bool, data []byte, private bool, now time.Time) (string, error) {
	target := path
	mode := fs.FileMode(0o644)
	dirMode := fs.FileMode(0o755)
	if private {
		mode, dirMode = 0o600, 0o700
	}
	backup := ""
	if exists {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
		fi, err := os.Stat(target)
		if err != nil {
			return "", err
		}
		mode = fi.Mode().Perm()
		if backup, err = writeBackup(path, old, mode, now); err != nil {
			return "", fmt.Errorf("cannot write a backup of %s, so it was not changed: %w", path, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(target), dirMode); err != nil {
		return "", err
	}
	if err := atomicfile.Write(target, data, mode); err != nil {
		return "", fmt.Errorf("cannot write %s (it was not changed): %w", path, err)
	}
	return backup, nil
}

// writeBackup saves data as <path>.<timestamp>.bak without overwriting an earlier backup.
func writeBackup(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	stamp := now.Format("20060102-150405")
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("%s.%s.bak", path, stamp)
		if i > 0 {
			name = fmt.Sprintf("%s.%s-%d.bak", path, stamp, i)
		}
		err := atomicfile.WriteNew(name, data, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("too many backups of %s made at %s", path, stamp)
}

// installClaudeCode registers the server through Claude Code's own CLI, which owns its config
// files (~/.claude.json, .mcp.json) and their format.
func (o *installOptions) installClaudeCode(exe string) error {
	errOut, out := o.Deps.IO.ErrOut, o.Deps.IO.Out
	if id, file, ok := o.enabledClaudePlugin(); ok {
		// The plugin's server is named r2r too; a second one would run two r2r servers.
		fmt.Fprintf(errOut, "Claude Code already runs r2r-mcp serve as the MCP server r2r through the plugin %s (enabled in %s); "+
			"install adds no second r2r server. Nothing changed.\nTo use this binary instead, disable the plugin "+
			"(claude plugin disable %s, or /plugin in Claude Code), then run r2r-mcp install claude-code again.\n", id, file, id)
		return nil
	}
	args := []string{"mcp", "add", "--scope", o.Scope, mcpServerName, "--", exe, "serve"}
	display := shellJoin(append([]string{"claude"}, args...), o.Env.GOOS)
	if o.DryRun {
		fmt.Fprintln(out, display)
		fmt.Fprintln(errOut, "Dry run: install would run the command above; nothing was run.")
		return nil
	}
	claude, err := o.Env.LookPath("claude")
	if err != nil {
		// Nothing was installed: say so with a failing exit, and keep the command on stdout
		// for whoever installs Claude Code later.
		fmt.Fprintln(out, display)
		return errors.New("Claude Code's claude command is not on PATH, so nothing was installed. " +
			"Install Claude Code (npm install -g @anthropic-ai/claude-code), then run r2r-mcp install claude-code again, " +
			"or run the command above")
	}
	dir, err := o.projectRoot()
	if err != nil {
		return err
	}
	// Claude Code takes an r2r in another scope without complaint and then reports
	// "Conflicting scopes": an entry anywhere is kept rather than joined by a second.
	cur, err := o.Env.Run(o.Ctx, dir, claude, "mcp", "get", mcpServerName)
	if e := parseClaudeMCPGet(string(cur)); err == nil && e.Command != "" {
		return o.keepClaudeEntry(exe, e)
	}
	res, err := o.Env.Run(o.Ctx, dir, claude, args...)
	if err == nil {
		if msg := strings.TrimSpace(string(res)); msg != "" {
			fmt.Fprintln(errOut, msg)
		}
		fmt.Fprintf(errOut, "r2r is registered in Claude Code (%s scope). Check it with: claude mcp list\n", o.Scope)
		fmt.Fprintln(errOut, loginHint)
		return nil
	}
	if !strings.Contains(string(res), "already exists") {
		return fmt.Errorf("%s failed: %v\n%s", display, err, strings.TrimSpace(string(res)))
	}
	// Registered after all (claude mcp get did not say so): compare with what is there now.
	cur, _ = o.Env.Run(o.Ctx, dir, claude, "mcp", "get", mcpServerName)
	return o.keepClaudeEntry(exe, parseClaudeMCPGet(string(cur)))
}

// keepClaudeEntry reports the r2r entry Claude Code already has, which install keeps: fine
// when it runs this binary with serve (in whatever scope), otherwise an error that says how
// to replace it.
func (o *installOptions) keepClaudeEntry(exe string, e claudeEntry) error {
	scope := cmp.Or(e.Scope, o.Scope) // not shown: the scope install was asked for
	if e.Command == exe && e.Args == "serve" {
		if scope == o.Scope {
			fmt.Fprintf(o.Deps.IO.ErrOut, "r2r is already up to date in Claude Code (%s scope); nothing changed.\n", o.Scope)
		} else {
			fmt.Fprintf(o.Deps.IO.ErrOut, "r2r already runs this binary in Claude Code's %s scope; install keeps that entry "+
				"and adds none in %s scope (two would conflict). Nothing changed.\n", scope, o.Scope)
		}
		return nil
	}
	if scope == o.Scope {
		return fmt.Errorf("Claude Code already has an MCP server named r2r in its %s config (command: %s %s).\n"+
			"To replace it, run: claude mcp remove r2r --scope %s\nthen run r2r-mcp install claude-code --scope %s again",
			o.Scope, e.Command, e.Args, o.Scope, o.Scope)
	}
	return fmt.Errorf("Claude Code already has an MCP server named r2r in its %s config (command: %s %s); install keeps it "+
		"rather than add a second r2r in %s scope, which would conflict.\n"+
		"To use this binary instead, run: claude mcp remove r2r --scope %s\nthen run r2r-mcp install claude-code --scope %s again",
		scope, e.Command, e.Args, o.Scope, scope, o.Scope)
}

// claudeEntry is an MCP server entry as "claude mcp get" shows it.
type claudeEntry struct {
	Scope   string // "user", "project" or "local"; "" when not shown
	Command string // for an HTTP server, its URL
	Args    string
}

// parseClaudeMCPGet reads the Scope, Command and Args lines of "claude mcp get <name>".
func parseClaudeMCPGet(s string) claudeEntry {
	var e claudeEntry
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "Command:"); ok {
			e.Command = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "URL:"); ok && e.Command == "" {
			e.Command = strings.TrimSpace(v) // an HTTP server
		} else if v, ok := strings.CutPrefix(line, "Args:"); ok {
			e.Args = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "Scope:"); ok {
			word, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(v)), " ")
			if word == "user" || word == "project" || word == "local" {
				e.Scope = word
			}
		}
	}
	return e
}

// shellJoin quotes args so the line can be pasted into the user's shell.
func shellJoin(args []string, goos string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a, goos)
	}
	return strings.Join(q, " ")
}

func shellQuote(s, goos string) string {
	safe := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r) ||
			goos == "windows" && r == '\\')
	}) < 0
	if safe {
		return s
	}
	if goos == "windows" {
		return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
