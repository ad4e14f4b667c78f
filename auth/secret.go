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
	// KindRefreshToken is an R2R session: a refresh token (Secret) and, since sessions are
	// what login stores, the access token obtained with it (AccessToken). R2R rotates the
	// refresh token on every use, so whoever renews must write the new pair back.
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
	KeyID string `json:"key_id,omitempty"`
	// AccessToken is the session's current access token (a JWT), so a new process starts
	// without a refresh; "" for API keys and for sessions stored before it was kept.
	AccessToken string `json:"access_token,omitempty"`
	// ReceivedAt is when AccessToken (and Secret with it) came from R2R, on this machine's
	// clock: their lifetimes count from it, not from R2R's clock (see expiryOf). Zero for
	// sessions stored before it was kept.
	ReceivedAt time.Time `json:"received_at,omitzero"`
	CreatedAt  time.Time `json:"created_at"`
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
	if err := CheckValue(s.Secret); err != nil {
		return fmt.Errorf("stored credential %w", err)
	}
	if err := CheckValue(s.AccessToken); err != nil {
		return fmt.Errorf("stored access token %w", err)
	}
	return nil
}

// MaxValueBytes bounds a credential value (API key, access or refresh token). R2R's keys
// and tokens are a few hundred bytes; a longer value is a paste mistake, and sent as a
// header R2R answers it with 400, not with a verdict on the credential.
const MaxValueBytes = 8 << 10

// CheckValue reports why v cannot be sent as a credential header: a line break or other
// control character (Go's HTTP client refuses it before anything reaches R2R) or more
// than MaxValueBytes. The error never quotes v; callers prefix the value's source
// ("R2R_API_KEY …").
func CheckValue(v string) error {
	if len(v) > MaxValueBytes {
		return fmt.Errorf("is %d bytes long; R2R credentials are far shorter (at most %d bytes accepted): check what was pasted", len(v), MaxValueBytes)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c == 0x7f {
			what := "a control character"
			if c == '\n' || c == '\r' {
				what = "a line break"
			}
			return fmt.Errorf("contains %s at byte %d; an R2R credential is one line without spaces: check what was pasted", what, i+1)
		}
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
