package servertest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Env is a hermetic environment for a child r2r-mcp built from the test's own: a fresh
// HOME and config directories, no inherited R2R_* variable, keyring session or home, and
// R2R_API_URL=r2rURL unless r2rURL is "". extra entries ("K=V") come last, so they win.
func Env(t testing.TB, r2rURL string, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	out := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "R2R_"), k == "HOME", k == "XDG_CONFIG_HOME",
			k == "DBUS_SESSION_BUS_ADDRESS", k == "APPDATA", k == "USERPROFILE":
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"HOME="+home,
		"USERPROFILE="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"APPDATA="+filepath.Join(home, "AppData"),
		"R2R_MCP_CONFIG_DIR="+filepath.Join(home, ".config", "r2r-mcp"),
	)
	if r2rURL != "" {
		out = append(out, "R2R_API_URL="+r2rURL)
	}
	return append(out, extra...)
}

// MinimalEnv is the whole environment of a child r2r-mcp: PATH, a private HOME with its
// XDG directories under it, the race detector's options (GORACE, when set), and extra
// ("K=V"). Nothing else is inherited: no R2R_* variable and no D-Bus address unless extra
// passes one.
func MinimalEnv(t testing.TB, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	return append(env, extra...)
}

// EnvValue returns the value of key in env, the last one when it is set twice ("" when
// absent).
func EnvValue(env []string, key string) string {
	for _, kv := range slices.Backward(env) {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// GitProject creates a directory named name that looks like a git checkout (it has a .git
// directory) holding files (slash-separated relative path → content), and returns its
// path with symlinks resolved (macOS /var → /private/var), so that it compares equal to
// the paths the server reports.
func GitProject(t testing.TB, name string, files map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return root
}
