package cleantext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"clean", "plain text\twith\nwhitespace\r\n", "plain text\twith\nwhitespace\r\n"},
		{"C0 and DEL", "a\x00b\x1b[31mc\x7f", "ab[31mc"},
		{"C1", "a\u0085b\u009bc", "abc"},
		{"BiDi override and isolate", "user\u202Egnp.exe\u2066x\u2069", "usergnp.exex"},
		{"zero width", "a\u200Bb\u200Dc\uFEFFd", "abcd"},
		{"tag characters", "hi\U000E0041\U000E0042", "hi"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"line and paragraph separators", "a\u2028b\u2029c", "a\nb\nc"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("%s: String(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	if got := Line("a\nb\tc\r\u2028d"); got != "a b c  d" {
		t.Errorf("Line = %q", got)
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc… (3 bytes more)"},
		{"héllo", 2, "h… (5 bytes more)"}, // never cuts inside é
		{"abc", -1, "… (3 bytes more)"},
	}
	for _, tt := range tests {
		got := Clip(tt.in, tt.max)
		if got != tt.want || !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	if got := Clip(strings.Repeat("x", 1<<20), 200); len(got) > 250 {
		t.Errorf("Clip kept %d bytes", len(got))
	}
}

func TestTerminal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"docs/runbook.md", "docs/runbook.md"},
		{"docs/my notes – ü.md", "docs/my notes – ü.md"},
		{"a\nuploaded prod.env", `"a\nuploaded prod.env"`},
		{"evil\x1b]0;title\x07.md", `"evil\x1b]0;title\a.md"`},
		{"cod\u202egnp.exe", `"cod\u202egnp.exe"`},
		{"zero\u200bwidth", `"zero\u200bwidth"`},
		{"bad\xffbyte", `"bad\xffbyte"`},
		{"tab\there", `"tab\there"`},
	} {
		if got := Terminal(tc.in); got != tc.want {
			t.Errorf("Terminal(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRunes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"ééééé", 4, "ééé…"},
		{"", 3, ""},
	} {
		if got := Runes(tc.in, tc.n); got != tc.want || utf8.RuneCountInString(got) > tc.n {
			t.Errorf("Runes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
