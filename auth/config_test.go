package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
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
		// The path keeps its case and its escaping (r2r.NormalizeBaseURL's EscapedPath), so
		// the keyring account equals the base URL the client sends requests to.
		{in: "http://R2R:7272/My%20R2R/v3", want: "http://r2r:7272/My%20R2R"},
		{in: "http://[::1]:7272/v3", want: "http://[::1]:7272"},
		{in: "", err: "the R2R URL is empty"},
		{in: "   ", err: "the R2R URL is empty"},
		{in: "localhost:7272", err: "the R2R URL must start with http:// or https:// (for example http://127.0.0.1:7272)"},
		{in: "127.0.0.1:7380", err: "the R2R URL must start with http:// or https:// (for example http://127.0.0.1:7272)"},
		{in: "r2r.example.com", err: "the R2R URL must start with http:// or https://"},
		{in: "ftp://host", err: "must start with http:// or https://"},
		{in: "http://", err: "has no host"},
		{in: "http://u:p@host", err: "must not contain user info (credentials belong in r2r-mcp login or R2R_API_KEY)"},
		{in: "http://host?x=1", err: "must not contain a query string"},
		{in: "http://host?", err: "must not contain a query string"},
		{in: "http://host/#frag", err: "must not contain a fragment"},
		{in: "http://host/%zz", err: "is not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeURL(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NormalizeURL(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			// One normaliser: auth's form is r2r's with the host lower-cased, and stable.
			r, rerr := r2r.NormalizeBaseURL(tt.in)
			if rerr != nil || !strings.EqualFold(r, got) {
				t.Errorf("r2r.NormalizeBaseURL(%q) = %q, %v; auth says %q", tt.in, r, rerr, got)
			}
			if again, err := NormalizeURL(got); err != nil || again != got {
				t.Errorf("NormalizeURL(%q) = %q, %v; not idempotent", got, again, err)
			}
		})
	}
}

// TestURLErrorsNeverQuoteTheURL feeds URLs carrying secrets through every path that
// reports a bad URL: none of the error text may repeat them.
func TestURLErrorsNeverQuoteTheURL(t *testing.T) {
	const secret = "SuperSecret123"
	bad := []string{
		"https://r2r.example.com/?api_key=" + secret,
		"https://r2r.example.com/v3?token=" + secret,
		"https://admin:" + secret + "@r2r.example.com",
		"ftp://admin:" + secret + "@r2r.example.com",
		"https://r2r.example.com/#" + secret,
		"https://r2r.example.com/" + secret + "%zz",
		secret + "://r2r",
		"r2r.example.com/" + secret,
	}
	for i, raw := range bad {
		// Subtests are numbered: t.TempDir paths contain the test's name.
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			_, nerr := NormalizeURL(raw)
			_, _, ferr := ResolveURL(raw, envFunc(nil), t.TempDir())
			_, _, eerr := ResolveURL("", envFunc(map[string]string{"R2R_API_URL": raw}), t.TempDir())
			dir := t.TempDir()
			if err := SaveURL(dir, raw); err != nil {
				t.Fatal(err)
			}
			_, _, cerr := ResolveURL("", envFunc(nil), dir)
			_, rerr := Resolve(context.Background(), Options{URLFlag: raw, URLFlagName: "--r2r-url", ConfigDir: t.TempDir(), Keyring: newMapKeyring()})
			_, lerr := ResolveLazy(context.Background(), Options{Getenv: envFunc(map[string]string{"R2R_API_BASE": raw}), ConfigDir: t.TempDir(), Keyring: newMapKeyring()})
			for i, err := range []error{nerr, ferr, eerr, cerr, rerr, lerr} {
				if err == nil {
					t.Fatalf("error %d: accepted %q", i, raw)
				}
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %d repeats the secret: %v", i, err)
				}
				if !strings.Contains(err.Error(), "the R2R URL ") {
					t.Errorf("error %d does not name the problem: %v", i, err)
				}
			}
			if !strings.HasPrefix(rerr.Error(), "flag --r2r-url: ") {
				t.Errorf("Resolve error does not name serve's flag: %v", rerr)
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

func TestClearURL(t *testing.T) {
	tests := []struct {
		name, saved, logout string
		cleared             bool
	}{
		{"the URL login saved", "http://r2r.test:7272", "http://r2r.test:7272", true},
		{"saved in another spelling", "HTTP://R2R.test:7272/v3/", "http://r2r.test:7272", true},
		{"another R2R's logout keeps it", "http://r2r.test:7272", "http://other:7272", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WritePrivateFile(ConfigPath(dir), []byte(`{"url": "`+tt.saved+`", "other": 1}`)); err != nil {
				t.Fatal(err)
			}
			cleared, err := ClearURL(dir, tt.logout)
			if err != nil || cleared != tt.cleared {
				t.Fatalf("ClearURL = %v, %v", cleared, err)
			}
			b, _ := os.ReadFile(ConfigPath(dir))
			if strings.Contains(string(b), "r2r.test") == tt.cleared || !strings.Contains(string(b), `"other": 1`) {
				t.Errorf("config now %s", b)
			}
		})
	}
	if cleared, err := ClearURL(t.TempDir(), "http://r2r.test:7272"); cleared || err != nil {
		t.Errorf("without a config: %v %v", cleared, err)
	}
}
