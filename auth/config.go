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

	"github.com/r2r-mcp/r2r-mcp/auth/atomicfile"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// DefaultURL is the R2R address used when nothing else names one (R2R's default port).
const DefaultURL = "http://localhost:7272"

// DefaultURLFlagName is the flag that names the R2R URL in every command (cmd/urlflag.go).
const DefaultURLFlagName = "--url"

// URL sources reported next to the resolved base URL.
const (
	// URLSourceFlag is the source of a URL given with DefaultURLFlagName; a URL from
	// another flag is reported as URLFlagSource(name).
	URLSourceFlag    = "flag " + DefaultURLFlagName
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
// as the keyring account. It is r2r.NormalizeBaseURL (absolute http(s) URL, no user info,
// query or fragment; no trailing slash or "/v3" suffix; scheme and host lower-cased, so that
// "HTTP://R2R.Example.com/v3/" and "http://r2r.example.com" name the same keyring entry)
// with errors reworded for login and serve.
//
// Its errors name the problem and never repeat the value: a rejected URL may carry a
// secret ("?api_key=…", "user:pass@"), and these errors reach serve's stderr, which MCP
// clients keep in log files.
func NormalizeURL(raw string) (string, error) {
	n, err := r2r.NormalizeBaseURL(raw)
	if err != nil {
		return "", errors.New("the R2R URL " + urlProblem(raw, err))
	}
	return n, nil
}

// urlProblem says why r2r.NormalizeBaseURL rejected s, in the words of login and serve, and
// without quoting any part of s. The checks mirror r2r.NormalizeBaseURL's order only to pick
// the message; whether a URL is accepted is decided there alone. A reason not listed here
// falls back to r2r's own text, which never quotes the value either.
func urlProblem(s string, rejected error) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "is empty"
	}
	// "127.0.0.1:7380" does not even parse ("first path segment in URL cannot contain colon")
	// and "localhost:7380" parses with the scheme "localhost": both lack the scheme.
	if !strings.Contains(s, "://") {
		return "must start with http:// or https:// (for example http://127.0.0.1:7272)"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "is not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must start with http:// or https://"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "must not contain user info (credentials belong in r2r-mcp login or R2R_API_KEY)"
	case u.RawQuery != "" || u.ForceQuery:
		return "must not contain a query string"
	case u.Fragment != "":
		return "must not contain a fragment"
	}
	msg := strings.TrimPrefix(rejected.Error(), r2r.ErrInvalidRequest.Error()+": ")
	return "is not usable (" + msg + ")"
}

// URLFlagSource is the source reported for a URL given with the flag named flagName
// ("--url" → "flag --url"); "" means DefaultURLFlagName.
func URLFlagSource(flagName string) string {
	if flagName == "" {
		flagName = DefaultURLFlagName
	}
	return "flag " + flagName
}

// ResolveURL picks the R2R base URL: flag > R2R_API_URL > R2R_API_BASE > saved config >
// DefaultURL, and says where it came from. An invalid value is an error naming its source,
// never silently skipped. flag is the value of DefaultURLFlagName (Resolve takes other
// flag names through Options.URLFlagName).
func ResolveURL(flag string, getenv func(string) string, configDir string) (u, source string, err error) {
	return resolveURL(flag, URLSourceFlag, getenv, configDir)
}

func resolveURL(flag, flagSource string, getenv func(string) string, configDir string) (u, source string, err error) {
	candidates := []struct{ value, source string }{
		{flag, flagSource},
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
	return WritePrivateFile(path, append(out, '\n'))
}

// ClearURL removes the saved R2R URL from dir/config.json when it is u (what a login to u
// saved), keeping any other keys, and reports whether it did.
func ClearURL(dir, u string) (bool, error) {
	cfg, path, err := LoadConfig(dir)
	if err != nil || cfg.URL == "" {
		return false, err
	}
	if saved, nerr := NormalizeURL(cfg.URL); nerr != nil || saved != u {
		return false, nil
	}
	doc := map[string]json.RawMessage{}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return false, fmt.Errorf("config %s is not valid JSON: %w", path, err)
	}
	delete(doc, "url")
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return false, err
	}
	return true, WritePrivateFile(path, append(out, '\n'))
}

// WritePrivateFile writes data to path with mode 0600 (its directory 0700) atomically
// (atomicfile.Write), so readers never see a half-written file. It is how every file in
// r2r-mcp's config directory is written.
func WritePrivateFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
