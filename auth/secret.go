package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Kinds of stored secret.
const (
	// KindAPIKey is an R2R API key ("key_XXXX.YYYY"), sent as X-API-Key.
	KindAPIKey = "api_key"
	// KindRefreshToken is an R2R refresh token; it rotates on every use, so whoever uses it
	// must write the new one back.
	KindRefreshToken = "refresh_token"
)

// ErrNoCredential is returned by a Store that holds nothing for the URL.
var ErrNoCredential = errors.New("no stored credential")

// Secret is what r2r-mcp stores per R2R instance, as JSON, in the keyring or the file.
// The password is never part of it.
type Secret struct {
	Kind   string `json:"kind"`
	Secret string `json:"secret"`
	UserID string `json:"user_id,omitempty"`
	Email  string `json:"email,omitempty"`
	// KeyID is the server-side id of an API key r2r-mcp created, so logout can revoke it.
	// Empty for keys the user supplied (logout leaves those alone) and for refresh tokens.
	KeyID     string    `json:"key_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate reports whether s can be used.
func (s Secret) Validate() error {
	switch s.Kind {
	case KindAPIKey, KindRefreshToken:
	default:
		return fmt.Errorf("unknown credential kind %q", s.Kind)
	}
	if s.Secret == "" {
		return errors.New("stored credential is empty")
	}
	return nil
}

// PublicKey returns the non-secret prefix of an API key ("key_XXXX" of "key_XXXX.YYYY"),
// or "" for anything else.
func (s Secret) PublicKey() string { return PublicKeyOf(s.Secret) }

// PublicKeyOf returns the public part of an R2R API key ("key_XXXX" of "key_XXXX.YYYY"),
// or "" when key does not have that shape.
func PublicKeyOf(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == '.' {
			if i > 4 && key[:4] == "key_" {
				return key[:i]
			}
			return ""
		}
	}
	return ""
}

// ShortKey is how a key is shown to people: the first characters of its public part and
// an ellipsis ("key_ab…"), or "" when the key has no public part.
func ShortKey(key string) string {
	pub := PublicKeyOf(key)
	if pub == "" {
		return ""
	}
	if len(pub) > 6 {
		pub = pub[:6]
	}
	return pub + "…"
}

// String keeps the secret out of %v and %+v.
func (s Secret) String() string {
	return fmt.Sprintf("auth.Secret{Kind:%s Email:%s UserID:%s KeyID:%s}", s.Kind, s.Email, s.UserID, s.KeyID)
}

// GoString keeps the secret out of %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue keeps the secret out of slog output.
func (s Secret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", s.Kind), slog.String("email", s.Email), slog.String("key_id", s.KeyID))
}

func encodeSecret(s Secret) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(s)
	return string(b), err
}

func decodeSecret(raw string) (Secret, error) {
	var s Secret
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		// The raw value may be a secret itself; never quote it.
		return Secret{}, errors.New("stored credential is not valid JSON; run r2r-mcp login again")
	}
	if err := s.Validate(); err != nil {
		return Secret{}, fmt.Errorf("%w; run r2r-mcp login again", err)
	}
	return s, nil
}
