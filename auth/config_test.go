package auth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "http://localhost:7272", want: "http://localhost:7272"},
		{in: "http://localhost:7272/", want: "http://localhost:7272"},
		{in: "http://localhost:7272/v3", want: "http://localhost:7272"},
		{in: "http://localhost:7272/v3/", want: "http://localhost:7272"},
		{in: "  HTTPS://R2R.Example.com/r2r/v3/ ", want: "https://r2r.example.com/r2r"},
		{in: "https://r2r.example.com/api", want: "https://r2r.example.com/api"},
		{in: "", err: "empty"},
		{in: "localhost:7272", err: "http:// or https://"},
		{in: "ftp://host", err: "http:// or https://"},
		{in: "http://", err: "no host"},
		{in: "http://u:p@host", err: "credentials"},
		{in: "http://host?x=1", err: "query"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeURL(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NormalizeURL(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				if strings.Contains(err.Error(), "u:p") {
					t.Errorf("error repeats the credentials: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func envFunc(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolveURLPrecedence(t *testing.T) {
	withConfig := t.TempDir()
	if err := SaveURL(withConfig, "http://saved:7272/v3"); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	cfgSource := "config " + filepath.Join(withConfig, "config.json")
	tests := []struct {
		name       string
		flag       string
		env        map[string]string
		dir        string
		want, src  string
		wantErrSrc string
	}{
		{name: "flag wins", flag: "http://flag/", env: map[string]string{"R2R_API_URL": "http://env", "R2R_API_BASE": "http://base"}, dir: withConfig, want: "http://flag", src: URLSourceFlag},
		{name: "R2R_API_URL", env: map[string]string{"R2R_API_URL": "http://env/v3", "R2R_API_BASE": "http://base"}, dir: withConfig, want: "http://env", src: URLSourceEnvURL},
		{name: "R2R_API_BASE", env: map[string]string{"R2R_API_BASE": "http://base"}, dir: withConfig, want: "http://base", src: URLSourceEnvBase},
		{name: "saved config", dir: withConfig, want: "http://saved:7272", src: cfgSource},
		{name: "default", dir: empty, want: DefaultURL, src: URLSourceDefault},
		{name: "blank env ignored", env: map[string]string{"R2R_API_URL": "  "}, dir: empty, want: DefaultURL, src: URLSourceDefault},
		{name: "bad env is an error naming it", env: map[string]string{"R2R_API_URL": "localhost:7272"}, dir: empty, wantErrSrc: URLSourceEnvURL},
		{name: "bad flag is an error naming it", flag: "nope", dir: empty, wantErrSrc: URLSourceFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, src, err := ResolveURL(tt.flag, envFunc(tt.env), tt.dir)
			if tt.wantErrSrc != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErrSrc) {
					t.Fatalf("got %q %q %v; want error starting with %q", got, src, err, tt.wantErrSrc)
				}
				return
			}
			if err != nil || got != tt.want || src != tt.src {
				t.Fatalf("got %q from %q (%v); want %q from %q", got, src, err, tt.want, tt.src)
			}
		})
	}
}

func TestSaveURLKeepsOtherKeysAndMode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r2r-mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ConfigPath(dir), []byte(`{"url":"http://old","mappings":{"a":"b"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SaveURL(dir, "http://new:7272"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ConfigPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["url"] != "http://new:7272" || doc["mappings"] == nil {
		t.Errorf("config after SaveURL = %s", b)
	}
	cfg, _, err := LoadConfig(dir)
	if err != nil || cfg.URL != "http://new:7272" {
		t.Errorf("LoadConfig = %+v, %v", cfg, err)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(ConfigPath(dir))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("config mode %o, want 600", fi.Mode().Perm())
		}
	}
}

func TestLoadConfigInvalidJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(ConfigPath(dir), []byte("{nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ResolveURL("", envFunc(nil), dir); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("ResolveURL with a broken config: %v", err)
	}
}

func TestDefaultConfigDir(t *testing.T) {
	d, err := DefaultConfigDir(envFunc(map[string]string{ConfigDirEnv: "/x/y"}))
	if err != nil || d != "/x/y" {
		t.Errorf("with %s: %q, %v", ConfigDirEnv, d, err)
	}
	base, err := os.UserConfigDir()
	if err != nil {
		t.Skip("no user config dir on this machine")
	}
	d, err = DefaultConfigDir(envFunc(nil))
	if err != nil || d != filepath.Join(base, "r2r-mcp") {
		t.Errorf("default: %q, %v", d, err)
	}
}
