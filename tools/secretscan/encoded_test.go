package secretscan

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// TestFindEncoded: a token hidden in each form FindEncoded reads is found, by its rule;
// ordinary text that has runs of base64 or hex letters is not.
func TestFindEncoded(t *testing.T) {
	key := "AKIA" + "Z7QRSTUVWXYZ2345"
	rev := []rune(key)
	slices.Reverse(rev)
	for _, tc := range []struct {
		name, text string
		want       bool
	}{
		{"plain", "key " + key, true},
		{"base64", "see " + base64.StdEncoding.EncodeToString([]byte(key)), true},
		{"base64_after_a_word", "secret_" + base64.RawURLEncoding.EncodeToString([]byte("x "+key)), true},
		{"hex", hex.EncodeToString([]byte(key)), true},
		{"hex_odd_start", "f" + hex.EncodeToString([]byte(key)), true},
		{"unicode_escapes", `\u0041\u004b\u0049\u0041Z7QRSTUVWXYZ2345`, true},
		{"zero_width_space", "AKIA\u200bZ7QRSTUVWXYZ2345", true},
		{"soft_hyphen", "AKIAZ7QR\u00adSTUVWXYZ2345", true},
		{"reversed", string(rev), true},
		{"commit_and_uuid", "commit 0123456789abcdef0123456789abcdef01234567, id 3f2b8c1e-9d4a-4f6b-8e2c-1a2b3c4d5e6f", false},
		{"long_words", "internationalization counterrevolutionaries " + base64.StdEncoding.EncodeToString([]byte("hello world, nothing here")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, got := FindEncoded([]byte(tc.text))
			if got != tc.want || (got && f.Rule != "AWS access key") {
				t.Errorf("FindEncoded = %+v %v, want %v", f, got, tc.want)
			}
		})
	}
}

// TestFindJoined: a token split across two pieces is found in either order; pieces that
// make none are not.
func TestFindJoined(t *testing.T) {
	gh := "ghp_" + strings.Repeat("A1b2", 9)
	for _, pieces := range [][]string{{gh[:10], gh[10:]}, {gh[10:], "db", gh[:10]}} {
		if _, ok := FindJoined(pieces); !ok {
			t.Errorf("FindJoined(%q) found nothing", pieces)
		}
	}
	if f, ok := FindJoined([]string{"api", "db", "docs/guide.md"}); ok {
		t.Errorf("FindJoined of plain tags = %+v", f)
	}
}
