package servertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultURLUse: a child that would resolve R2R's default address is named, whatever
// names a URL (flag, environment, saved config) clears it, and commands that never reach
// R2R pass.
func TestDefaultURLUse(t *testing.T) {
	saved := t.TempDir()
	if err := os.WriteFile(filepath.Join(saved, "config.json"), []byte(`{"url":"http://127.0.0.1:1"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cleared := t.TempDir() // what logout leaves: a config without a URL
	if err := os.WriteFile(filepath.Join(cleared, "config.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	tests := []struct {
		name string
		args []string
		env  []string
		want bool
	}{
		{"status after logout", []string{"status", "--json"}, []string{"HOME=" + home, "R2R_MCP_CONFIG_DIR=" + cleared}, true},
		{"serve with nothing configured", []string{"serve"}, []string{"HOME=" + home}, true},
		{"sync in XDG config", []string{"sync", "."}, []string{"XDG_CONFIG_HOME=" + home}, true},
		{"--url", []string{"status", "--url", "http://127.0.0.1:1"}, []string{"HOME=" + home}, false},
		{"--url=", []string{"logout", "--url=http://127.0.0.1:1"}, []string{"HOME=" + home}, false},
		{"R2R_API_URL", []string{"serve"}, []string{"HOME=" + home, "R2R_API_URL=http://127.0.0.1:1"}, false},
		{"R2R_API_BASE", []string{"doctor"}, []string{"HOME=" + home, "R2R_API_BASE=http://127.0.0.1:1"}, false},
		{"blank R2R_API_URL", []string{"memory", "list"}, []string{"HOME=" + home, "R2R_API_URL= "}, true},
		{"saved URL", []string{"status"}, []string{"HOME=" + home, "R2R_MCP_CONFIG_DIR=" + saved}, false},
		{"help", []string{"sync", "--help"}, []string{"HOME=" + home}, false},
		{"version", []string{"version"}, []string{"HOME=" + home}, false},
		{"install", []string{"install", "cursor"}, []string{"HOME=" + home}, false},
		{"no command", nil, []string{"HOME=" + home}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := DefaultURLUse(tt.args, tt.env)
			if got := why != ""; got != tt.want {
				t.Fatalf("DefaultURLUse(%q) = %q, want a reason: %v", tt.args, why, tt.want)
			}
			if tt.want && !strings.Contains(why, "http://localhost:7272") {
				t.Errorf("the reason does not name the default address: %q", why)
			}
		})
	}
}
