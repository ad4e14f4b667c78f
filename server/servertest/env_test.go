package servertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvIsHermetic(t *testing.T) {
	t.Setenv("R2R_API_KEY", "inherited-key")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nowhere")
	t.Setenv("HOME", "/home/someone")
	env := Env(t, "http://127.0.0.1:7272", "R2R_MCP_EXTRA=1", "HOME=/override")
	for _, k := range []string{"R2R_API_KEY", "DBUS_SESSION_BUS_ADDRESS"} {
		if v := EnvValue(env, k); v != "" {
			t.Errorf("%s=%s inherited", k, v)
		}
	}
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok && home == "" {
			home = h
		}
	}
	if home == "/home/someone" || !filepath.IsAbs(home) {
		t.Errorf("first HOME = %q, want a fresh temporary directory", home)
	}
	for k, want := range map[string]string{
		"R2R_API_URL":        "http://127.0.0.1:7272",
		"R2R_MCP_CONFIG_DIR": filepath.Join(home, ".config", "r2r-mcp"),
		"R2R_MCP_EXTRA":      "1",
		"HOME":               "/override", // extra comes last and wins
		"PATH":               os.Getenv("PATH"),
	} {
		if got := EnvValue(env, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if v := EnvValue(Env(t, ""), "R2R_API_URL"); v != "" {
		t.Errorf("R2R_API_URL = %q without a URL", v)
	}
}

func TestMinimalEnv(t *testing.T) {
	t.Setenv("R2R_API_URL", "http://inherited")
	t.Setenv("GORACE", "atexit_sleep_ms=10")
	env := MinimalEnv(t, "DBUS_SESSION_BUS_ADDRESS=unix:path=/bus")
	if len(env) != 7 || EnvValue(env, "GORACE") != "atexit_sleep_ms=10" {
		t.Errorf("MinimalEnv = %q, want PATH, HOME, three XDG dirs, GORACE and the extra entry", env)
	}
	home := EnvValue(env, "HOME")
	for k, want := range map[string]string{
		"PATH":                     os.Getenv("PATH"),
		"XDG_CONFIG_HOME":          filepath.Join(home, ".config"),
		"XDG_DATA_HOME":            filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME":           filepath.Join(home, ".cache"),
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/bus",
		"R2R_API_URL":              "",
	} {
		if got := EnvValue(env, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		t.Errorf("HOME %q: %v", home, err)
	}
}

func TestEnvValue(t *testing.T) {
	env := []string{"A=1", "B=x=y", "A=2", "C"}
	for key, want := range map[string]string{"A": "2", "B": "x=y", "C": "", "D": ""} {
		if got := EnvValue(env, key); got != want {
			t.Errorf("EnvValue(%s) = %q, want %q", key, got, want)
		}
	}
}

func TestGitProject(t *testing.T) {
	root := GitProject(t, "alpha", map[string]string{"docs/guide.md": "# Guide\n", "README.md": "hi"})
	if filepath.Base(root) != "alpha" {
		t.Errorf("root %s is not named alpha", root)
	}
	if real, err := filepath.EvalSymlinks(root); err != nil || real != root {
		t.Errorf("root %s resolves to %s (%v)", root, real, err)
	}
	if fi, err := os.Stat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		t.Errorf(".git: %v", err)
	}
	for rel, want := range map[string]string{"docs/guide.md": "# Guide\n", "README.md": "hi"} {
		if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", rel, b, err)
		}
	}
}
