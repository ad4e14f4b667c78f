package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultURL is the R2R address used when nothing else names one (R2R's default port).
const DefaultURL = "http://localhost:7272"

// URL sources reported next to the resolved base URL.
const (
	URLSourceFlag    = "flag --url"
	URLSourceEnvURL  = "env R2R_API_URL"
	URLSourceEnvBase = "env R2R_API_BASE"
	URLSourceDefault = "default"
	// A URL read from the saved config is reported as "config <path>".
)

// ConfigDirEnv overrides the configuration directory (default: os.UserConfigDir()/r2r-mcp).
const ConfigDirEnv = "R2R_MCP_CONFIG_DIR"

// DefaultConfigDir returns the directory holding config.json and, without a keyring,
// credentials.json: $R2R_MCP_CONFIG_DIR if set, else os.UserConfigDir()/r2r-mcp.
func DefaultConfigDir(getenv func(string) string) (string, error) {
	if getenv != nil {
		if d := getenv(ConfigDirEnv); d != "" {
			return d, nil
		}
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory: %w (set %s)", err, ConfigDirEnv)
	}
	return filepath.Join(base, "r2r-mcp"), nil
}

// NormalizeURL returns the canonical form of an R2R base URL, used both to talk to R2R and
// as the keyring account: scheme and host lower-cased, no trailing slash, no "/v3" suffix,
// no query or fragment. It rejects anything that is not an absolute http(s) URL.
func NormalizeURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("R2R URL is empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("R2R URL %q is not a URL: %w", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("R2R URL %q must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("R2R URL %q has no host", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("R2R URL must not contain credentials; use r2r-mcp login")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("R2R URL %q must not have a query or fragment", raw)
	}
	u.Host = strings.ToLower(u.Host)
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/v3")
	u.Path = strings.TrimRight(p, "/")
	u.RawPath = ""
	return u.String(), nil
}

// ResolveURL picks the R2R base URL: flag > R2R_API_URL > R2R_API_BASE > saved config >
// DefaultURL, and says where it came from. An invalid value is an error naming its source,
// never silently skipped.
func ResolveURL(flag string, getenv func(string) string, configDir string) (u, source string, err error) {
	candidates := []struct{ value, source string }{
		{flag, URLSourceFlag},
		{getenv("R2R_API_URL"), URLSourceEnvURL},
		{getenv("R2R_API_BASE"), URLSourceEnvBase},
	}
	for _, c := range candidates {
		if strings.TrimSpace(c.value) == "" {
			continue
		}
		n, err := NormalizeURL(c.value)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", c.source, err)
		}
		return n, c.source, nil
	}
	if configDir != "" {
		cfg, path, err := LoadConfig(configDir)
		if err != nil {
			return "", "", err
		}
		if cfg.URL != "" {
			n, err := NormalizeURL(cfg.URL)
			if err != nil {
				return "", "", fmt.Errorf("config %s: %w", path, err)
			}
			return n, "config " + path, nil
		}
	}
	return DefaultURL, URLSourceDefault, nil
}

// Config is the saved user configuration (config.json in the config dir).
type Config struct {
	// URL is the R2R base URL of the last successful login.
	URL string `json:"url,omitempty"`
}

// ConfigPath returns the path of config.json in dir.
func ConfigPath(dir string) string { return filepath.Join(dir, "config.json") }

// LoadConfig reads config.json from dir. A missing file is an empty Config, not an error.
func LoadConfig(dir string) (Config, string, error) {
	path := ConfigPath(dir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, path, nil
	}
	if err != nil {
		return Config{}, path, fmt.Errorf("read %s: %w", path, err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, path, fmt.Errorf("config %s is not valid JSON: %w", path, err)
	}
	return c, path, nil
}

// SaveURL records u as the R2R URL in dir/config.json, keeping any other keys the file has.
func SaveURL(dir, u string) error {
	path := ConfigPath(dir)
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("config %s is not valid JSON: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("read %s: %w", path, err)
	}
	v, _ := json.Marshal(u)
	doc["url"] = v
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(out, '\n'))
}

// writeFileAtomic writes data to path with mode 0600 (its directory 0700) through a
// temporary file and a rename, so readers never see a half-written file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
