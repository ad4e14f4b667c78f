package r2r

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
)

// Credentials applies authentication to an outgoing request.
type Credentials interface {
	// Apply sets the auth header(s) (X-API-Key or Authorization: Bearer) on h.
	// Anonymous credentials set nothing.
	Apply(ctx context.Context, h http.Header) error
	// Identity is a stable, non-secret identifier of who the credential acts as
	// (e.g. a SHA-256 prefix of the key/email), used in cache keys and logs. Never a secret.
	Identity() string
}

// Refresher is implemented by credentials that can renew themselves after a 401
// (refresh-token flows). The client calls Refresh at most once per request, then retries
// that request once. Implementations must be safe for concurrent use and coalesce
// concurrent refreshes (singleflight).
type Refresher interface {
	Refresh(ctx context.Context) error
}

// GenerationRefresher is implemented by refreshable credentials that count their renewals.
// The client reads Generation before a request and, after a 401, calls RefreshFrom with it,
// which renews only if no other caller has renewed since.
type GenerationRefresher interface {
	Generation() uint64
	RefreshFrom(ctx context.Context, generation uint64) error
}

// errEmptySecret is returned by Apply when an API key or token is empty, so a request is
// never silently sent anonymously when the caller meant to authenticate.
var errEmptySecret = errors.New("r2r: empty credential")

// errHeaderUnsafe is returned by Apply when a key or token holds a line break or another
// control character: Go's HTTP client would refuse the request before it reaches R2R, and
// that failure must read as a credential problem, not as R2R being unreachable.
var errHeaderUnsafe = errors.New("r2r: the credential contains a line break or control character; an R2R key or token is one line")

// checkSecret is why s cannot be sent as a credential header, or nil.
func checkSecret(s string) error {
	if s == "" {
		return errEmptySecret
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return errHeaderUnsafe
		}
	}
	return nil
}

// APIKey returns credentials that send key as the X-API-Key header.
func APIKey(key string) Credentials { return apiKey{key: key} }

// Bearer returns credentials that send token as "Authorization: Bearer <token>".
// R2R accepts both JWT access tokens and API keys this way.
func Bearer(token string) Credentials { return bearer{token: token} }

// Anonymous returns credentials that send nothing (R2R with authentication off, where such
// requests act as the default superuser).
func Anonymous() Credentials { return anonymous{} }

type apiKey struct{ key string }

func (k apiKey) Apply(_ context.Context, h http.Header) error {
	if err := checkSecret(k.key); err != nil {
		return err
	}
	h.Set("X-API-Key", k.key)
	return nil
}

func (k apiKey) Identity() string { return "apikey:" + Fingerprint(k.key) }

// String and GoString keep the secret out of %v, %+v and %#v.
func (k apiKey) String() string   { return "r2r.APIKey(" + k.Identity() + ")" }
func (k apiKey) GoString() string { return k.String() }

type bearer struct{ token string }

func (b bearer) Apply(_ context.Context, h http.Header) error {
	if err := checkSecret(b.token); err != nil {
		return err
	}
	h.Set("Authorization", "Bearer "+b.token)
	return nil
}

func (b bearer) Identity() string { return "bearer:" + Fingerprint(b.token) }
func (b bearer) String() string   { return "r2r.Bearer(" + b.Identity() + ")" }
func (b bearer) GoString() string { return b.String() }

type anonymous struct{}

func (anonymous) Apply(context.Context, http.Header) error { return nil }
func (anonymous) Identity() string                         { return "anonymous" }
func (anonymous) String() string                           { return "r2r.Anonymous()" }
func (a anonymous) GoString() string                       { return a.String() }

// Fingerprint returns a short, non-reversible identifier of a secret: the first 16 hex
// digits of its SHA-256. Credential implementations outside this package (auth) can use it
// to build Identity values.
func Fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}
