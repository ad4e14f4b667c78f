package auth

import (
	"context"
	"net/http"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestLazyCredentialsFollowALogin: a login while serve runs (as someone else, or a logout)
// takes effect at serve's next request, although the credential serve holds still works:
// login and logout rewrite config.json, and serve reads the store again when it changed.
// A config.json that did not change costs no read.
func TestLazyCredentialsFollowALogin(t *testing.T) {
	ann, bob := testSecret(KindAPIKey, "key_ann.SECRET"), testSecret(KindAPIKey, "key_bob.SECRET")
	tests := []struct {
		name   string
		change func(t *testing.T, kr *gatedKeyring, dir string)
		header string // X-API-Key of the next request
		reads  int    // keyring reads after the first
	}{
		{"login as someone else", func(t *testing.T, kr *gatedKeyring, dir string) {
			seedKeyring(t, kr, testURL, bob)
			if err := SaveURL(dir, testURL); err != nil {
				t.Fatal(err)
			}
		}, "key_bob.SECRET", 1},
		{"logout", func(t *testing.T, kr *gatedKeyring, dir string) {
			_ = kr.Delete(KeyringService, testURL)
			if _, err := ClearURL(dir, testURL); err != nil {
				t.Fatal(err)
			}
		}, "", 1},
		{"keyring changed, config not", func(t *testing.T, kr *gatedKeyring, _ string) {
			seedKeyring(t, kr, testURL, bob)
		}, "key_ann.SECRET", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			kr := newGatedKeyring(t, false)
			seedKeyring(t, kr, testURL, ann)
			opts := lazyOptions(t, kr, nil)
			if err := SaveURL(opts.ConfigDir, testURL); err != nil {
				t.Fatal(err)
			}
			l, _ := mustLazy(t, opts)
			h := http.Header{}
			if err := l.Apply(ctx, h); err != nil || h.Get("X-API-Key") != "key_ann.SECRET" {
				t.Fatalf("first request: %v %q", err, h.Get("X-API-Key"))
			}
			before := kr.getCount()
			tt.change(t, kr, opts.ConfigDir)
			h = http.Header{}
			if err := l.Apply(ctx, h); err != nil || h.Get("X-API-Key") != tt.header {
				t.Fatalf("next request: %v, key %q, want %q", err, h.Get("X-API-Key"), tt.header)
			}
			if n := kr.getCount() - before; n != tt.reads {
				t.Errorf("%d keyring reads, want %d", n, tt.reads)
			}
			if tt.header == "key_bob.SECRET" && l.Identity() != r2r.APIKey("key_bob.SECRET").Identity() {
				t.Errorf("identity %q is not the new login's", l.Identity())
			}
		})
	}
}
