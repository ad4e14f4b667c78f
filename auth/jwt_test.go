package auth

import (
	"encoding/base64"
	"testing"
)

func TestTokenType(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tt := range []struct {
		tok, want string
	}{
		{"h." + enc(`{"token_type":"access","exp":1800000000}`) + ".s", "access"},
		{"h." + enc(`{"token_type":"refresh"}`) + ".s", "refresh"},
		{"h." + enc(`{"token_type":7}`) + ".s", ""},
		{"h." + enc(`{"sub":"x"}`) + ".s", ""},
		{"key_abc.def", ""},
		{"h.!!!.s", ""},
	} {
		if got := TokenType(tt.tok); got != tt.want {
			t.Errorf("TokenType(%q) = %q, want %q", tt.tok, got, tt.want)
		}
	}
}
