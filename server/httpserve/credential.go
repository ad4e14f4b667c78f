package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// userKey stands for the R2R credentials of one R2R user: each request's own credential
// (an API key, sent as X-API-Key, or an access token from the user's R2R session, sent as
// Authorization: Bearer) travels in the request's context, so one copy of the tools serves
// all of the user's credentials. Its identity is the R2R user id, so every cache and limiter
// key of the user's calls names the user, whichever credential was sent.
type userKey struct {
	id string
	// last is the user's credential accepted most recently: what an R2R request without a
	// credential of this user in its context is sent with, and whose kind Origin names.
	last atomic.Pointer[string]
}

// callCredential is the credential a request carried, for the R2R requests of its call.
type callCredential struct {
	id, key string
}

type callCredentialKey struct{}

// withCredential returns ctx carrying key, the credential of user id that a request sent.
func withCredential(ctx context.Context, id, key string) context.Context {
	return context.WithValue(ctx, callCredentialKey{}, callCredential{id: id, key: key})
}

// credential is the credential an R2R request in ctx is sent with: the call's own when it
// is k's user's, else the user's latest.
func (k *userKey) credential(ctx context.Context) string {
	if c, ok := ctx.Value(callCredentialKey{}).(callCredential); ok && c.id == k.id && c.key != "" {
		return c.key
	}
	if p := k.last.Load(); p != nil {
		return *p
	}
	return ""
}

func (k *userKey) Apply(ctx context.Context, h http.Header) error {
	key := k.credential(ctx)
	if key == "" {
		return errors.New("httpserve: no credential of the user")
	}
	if isJWT(key) {
		h.Del("X-API-Key") // R2R rejects requests that carry both
		h.Set("Authorization", "Bearer "+key)
		return nil
	}
	h.Set("X-API-Key", key)
	return nil
}

func (k *userKey) Identity() string { return "r2r-user:" + k.id }

// Origin names the caller's credential as its source, for r2r_status and the advice of
// tool errors (auth.Described).
func (k *userKey) Origin() auth.Origin {
	what := "API key"
	if p := k.last.Load(); p != nil && isJWT(*p) {
		what = "access token"
	}
	return auth.Origin{Source: auth.Source("the caller's R2R " + what + " (user " + k.id + ")")}
}

// String and GoString keep the key out of %v, %+v and %#v.
func (k *userKey) String() string   { return "httpserve.userKey(" + k.Identity() + ")" }
func (k *userKey) GoString() string { return k.String() }

// isJWT tells a JWT (three dot-separated base64url parts, the first a JSON header), such as
// an R2R access token, from an API key ("key_…"). R2R checks a JWT in milliseconds; an API
// key costs it a bcrypt check (about half a second) on every request.
func isJWT(cred string) bool {
	return strings.HasPrefix(cred, "eyJ") && strings.Count(cred, ".") == 2
}

// checkTokenType refuses a JWT that is not an access token. R2R answers users/me with a
// refresh token too, but a refresh token lives for days and renews sessions: it must not
// act for tools, nor be remembered beside access tokens.
func checkTokenType(cred string) error {
	if !isJWT(cred) {
		return nil
	}
	switch auth.TokenType(cred) {
	case "access":
		return nil
	case "refresh":
		return fmt.Errorf("%w: it is a refresh token; send the access token of the session instead (`r2r-mcp auth header` prints one)", errMalformed)
	}
	return fmt.Errorf("%w: it is a JWT but not an access token (its token_type claim is not \"access\"); send an access token (`r2r-mcp auth header` prints one)", errMalformed)
}

// credentialOf is how a caller's credential is sent to R2R to be checked.
func credentialOf(cred string) r2r.Credentials {
	if isJWT(cred) {
		return r2r.Bearer(cred)
	}
	return r2r.APIKey(cred)
}

// apiKey returns the R2R credential a request carries, an API key or an access token:
// "Authorization: Bearer CRED" or "X-R2R-API-Key: CRED". ok is false when there is none.
func apiKey(r *http.Request) (string, bool) {
	if k := strings.TrimSpace(r.Header.Get("X-R2R-API-Key")); k != "" {
		return k, true
	}
	a := r.Header.Get("Authorization")
	if scheme, rest, found := strings.Cut(a, " "); found && strings.EqualFold(scheme, "Bearer") {
		if k := strings.TrimSpace(rest); k != "" {
			return k, true
		}
	}
	return "", false
}

// use records key, a credential of k's user that a request carried, as the user's latest.
func (k *userKey) use(key string) {
	if p := k.last.Load(); p == nil || *p != key {
		k.last.Store(&key)
	}
}
