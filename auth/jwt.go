package auth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// jwtClaims decodes the payload of the JWT tok without verifying it (only R2R can); nil
// when tok is not a JWT.
func jwtClaims(tok string) map[string]any {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return nil
	}
	return claims
}

// TokenType is the token_type claim of the JWT tok ("access" or "refresh" from R2R), read
// without verifying it; "" when tok is not a JWT or the claim is not a string.
func TokenType(tok string) string {
	s, _ := jwtClaims(tok)["token_type"].(string)
	return s
}
