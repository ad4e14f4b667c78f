package servertest

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/auth"
)

// r2rCommands are the commands that resolve an R2R URL and may reach it.
var r2rCommands = []string{"serve", "login", "logout", "auth", "status", "doctor", "sync", "index", "memory"}

// DefaultURLUse says why the child r2r-mcp that args and env (nil: the test's own
// environment) describe would talk to R2R's default address (auth.DefaultURL), "" when it
// would not: no --url flag, no R2R_API_URL or R2R_API_BASE, and no URL saved in its config
// directory. The README's quick start leaves an emulator listening there, so such a test's
// outcome would depend on what runs on the machine; Start and Run refuse it.
func DefaultURLUse(args, env []string) string {
	if len(args) == 0 || !slices.Contains(r2rCommands, args[0]) {
		return ""
	}
	for _, a := range args {
		if a == "-h" || a == "--help" || a == auth.DefaultURLFlagName || strings.HasPrefix(a, auth.DefaultURLFlagName+"=") {
			return ""
		}
	}
	get := os.Getenv
	if env != nil {
		get = func(k string) string { return EnvValue(env, k) }
	}
	for _, k := range []string{"R2R_API_URL", "R2R_API_BASE"} {
		if strings.TrimSpace(get(k)) != "" {
			return ""
		}
	}
	dir := childConfigDir(get)
	if cfg, _, err := auth.LoadConfig(dir); err == nil && cfg.URL != "" {
		return ""
	}
	return "r2r-mcp " + strings.Join(args, " ") + " names no R2R URL (no " + auth.DefaultURLFlagName +
		", R2R_API_URL, R2R_API_BASE or URL saved in " + dir + "), so it would reach whatever listens on " +
		auth.DefaultURL + " (the quick start's emulator, say): pass the test's own R2R, or an unreachable one"
}

// childConfigDir is the config directory a child with environment get uses
// (auth.DefaultConfigDir in the child's environment, not the test's).
func childConfigDir(get func(string) string) string {
	if d := get(auth.ConfigDirEnv); d != "" {
		return d
	}
	var base string
	switch runtime.GOOS {
	case "windows":
		base = get("APPDATA")
	case "darwin":
		base = filepath.Join(get("HOME"), "Library", "Application Support")
	default:
		base = get("XDG_CONFIG_HOME")
		if base == "" {
			base = filepath.Join(get("HOME"), ".config")
		}
	}
	return filepath.Join(base, "r2r-mcp")
}
