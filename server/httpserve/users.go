package httpserve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// userKey is one caller's R2R credential: an API key, sent as X-API-Key, or an access token
// (JWT) from the user's R2R session, sent as Authorization: Bearer. Its identity is the R2R
// user id, so every cache and limiter key of the user's calls names the user, whichever of
// the user's credentials was sent.
type userKey struct {
	key string
	id  string
}

func (k userKey) Apply(_ context.Context, h http.Header) error {
	if k.key == "" {
		return errors.New("httpserve: empty credential")
	}
	if isAccessToken(k.key) {
		h.Del("X-API-Key") // R2R rejects requests that carry both
		h.Set("Authorization", "Bearer "+k.key)
		return nil
	}
	h.Set("X-API-Key", k.key)
	return nil
}

// isAccessToken tells an R2R access token (a JWT: three dot-separated base64url parts, the
// first a JSON header) from an API key ("key_…"). R2R checks a JWT in milliseconds; an API
// key costs it a bcrypt check (about half a second) on every request.
func isAccessToken(cred string) bool {
	return strings.HasPrefix(cred, "eyJ") && strings.Count(cred, ".") == 2
}

// checkTokenType refuses a JWT that is not an access token. R2R answers users/me with a
// refresh token too, but a refresh token lives for days and renews sessions: it must not
// act for tools, nor be remembered beside access tokens.
func checkTokenType(cred string) error {
	if !isAccessToken(cred) {
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

// credentialOf is how a caller's credential is sent to R2R.
func credentialOf(cred string) r2r.Credentials {
	if isAccessToken(cred) {
		return r2r.Bearer(cred)
	}
	return r2r.APIKey(cred)
}

func (k userKey) Identity() string { return "r2r-user:" + k.id }

// Origin names the caller's credential as its source, for r2r_status and the advice of
// tool errors (auth.Described).
func (k userKey) Origin() auth.Origin {
	what := "API key"
	if isAccessToken(k.key) {
		what = "access token"
	}
	return auth.Origin{Source: auth.Source("the caller's R2R " + what + " (user " + k.id + ")")}
}

// String and GoString keep the key out of %v, %+v and %#v.
func (k userKey) String() string   { return "httpserve.userKey(" + k.Identity() + ")" }
func (k userKey) GoString() string { return k.String() }

// user is everything one API key's calls go through.
type user struct {
	id      string // R2R user id ("" in shared-key mode)
	srv     *server.Server
	mcp     *mcpserver.StreamableHTTPServer
	gateway http.Handler
	checked time.Time // when R2R last accepted the key
	expires time.Time // when an access token's exp claim says it dies; zero = an API key
	used    time.Time // last request, for eviction
}

// fresh reports whether the check of e still holds at now.
func (e *user) fresh(now time.Time, ttl time.Duration) bool {
	return now.Sub(e.checked) < ttl && (e.expires.IsZero() || now.Before(e.expires))
}

// errRejected means R2R refused the credential (401 or 403 on users/me, or 400, 413 or 431:
// a header it would not read); errRejectedBefore, which wraps it, that it did so a moment
// ago and was not asked again.
var (
	errRejected       = errors.New("R2R rejected the credential")
	errRejectedBefore = fmt.Errorf("%w a moment ago", errRejected)
)

// errMalformed wraps why a credential cannot be sent as a header at all (auth.CheckValue);
// R2R is not asked.
var errMalformed = errors.New("unusable credential")

// throttledError means the client failed too many credential checks: none is made for it
// until wait has passed. first is true the first time in a row the client is refused.
type throttledError struct {
	wait  time.Duration
	first bool
}

func (e *throttledError) Error() string {
	return fmt.Sprintf("too many refused credentials from this address; try again in %s", e.wait.Round(time.Second))
}

// users remembers checked keys by their SHA-256 (never the key itself) for ttl, and
// builds one user per key on first use.
type users struct {
	ttl   time.Duration
	max   int
	check func(ctx context.Context, key string) (*r2r.User, error)
	build func(key, id string) (*user, error)
	now   func() time.Time
	// throttle bounds the failed checks per client address; nil = unbounded.
	throttle *checkThrottle

	mu       sync.Mutex
	m        map[[sha256.Size]byte]*user
	rejected map[[sha256.Size]byte]time.Time // keys R2R refused, until when to refuse them unasked
	sf       singleflight.Group
}

// rejectTTL is how long a key R2R refused is refused without asking R2R again, so a
// client retrying with a bad key does not turn each retry into an R2R request.
const rejectTTL = 10 * time.Second

// get returns the user of key, checking it against R2R when it is new or its check is
// older than ttl. errRejected means the key is not valid, a *throttledError that addr (the
// client's address) failed too many checks to have another made; other errors mean R2R
// could not say (the caller answers 503 and nothing is remembered).
func (u *users) get(ctx context.Context, key, addr string) (*user, error) {
	h := sha256.Sum256([]byte(key))
	now := u.now()
	if err := auth.CheckValue(key); err != nil {
		return nil, fmt.Errorf("%w: the credential %w", errMalformed, err)
	}
	if err := checkTokenType(key); err != nil {
		return nil, err
	}
	u.mu.Lock()
	e := u.m[h]
	if e != nil && e.fresh(now, u.ttl) {
		e.used = now
		u.mu.Unlock()
		return e, nil
	}
	if until, ok := u.rejected[h]; ok && now.Before(until) {
		u.mu.Unlock()
		return nil, errRejectedBefore
	}
	u.mu.Unlock()
	if u.throttle != nil {
		if wait, first, ok := u.throttle.begin(addr); !ok {
			return nil, &throttledError{wait: wait, first: first}
		}
	}
	v, err, _ := u.sf.Do(string(h[:]), func() (any, error) {
		// A cancelled caller must not fail the others waiting on this check.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		me, err := u.check(cctx, key)
		if err != nil {
			if refused(err) {
				u.forget(h)
				return nil, errRejected
			}
			return nil, err
		}
		exp := auth.TokenExpiry(key)
		if !isAccessToken(key) {
			exp = time.Time{}
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		if e := u.m[h]; e != nil && e.id == me.ID {
			e.checked, e.used, e.expires = u.now(), u.now(), exp
			return e, nil
		}
		nu, err := u.build(key, me.ID)
		if err != nil {
			return nil, err
		}
		nu.checked, nu.used, nu.expires = u.now(), u.now(), exp
		u.evictLocked()
		u.m[h] = nu
		return nu, nil
	})
	if u.throttle != nil && !errors.Is(err, errRejected) {
		u.throttle.refund(addr)
	}
	if err != nil {
		return nil, err
	}
	return v.(*user), nil
}

// refused reports answers of R2R that turn the credential down: 401 and 403, and 400, 413
// and 431, which R2R (its HTTP server) gives a header too large or malformed to read. None
// of them means R2R is down.
func refused(err error) bool {
	var e *r2r.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusBadRequest,
		http.StatusRequestEntityTooLarge, http.StatusRequestHeaderFieldsTooLarge:
		return true
	}
	return false
}

// forget drops h and remembers that R2R refused it.
func (u *users) forget(h [sha256.Size]byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m, h)
	now := u.now()
	if len(u.rejected) >= u.max {
		for k, until := range u.rejected {
			if !now.Before(until) || len(u.rejected) >= u.max {
				delete(u.rejected, k)
			}
		}
	}
	u.rejected[h] = now.Add(min(rejectTTL, u.ttl))
}

// evictLocked makes room for one more user: expired checks go first, then the least
// recently used.
func (u *users) evictLocked() {
	if len(u.m) < u.max {
		return
	}
	now := u.now()
	var oldest [sha256.Size]byte
	var oldestUsed time.Time
	for h, e := range u.m {
		if now.Sub(e.checked) >= u.ttl {
			delete(u.m, h)
			continue
		}
		if oldestUsed.IsZero() || e.used.Before(oldestUsed) {
			oldest, oldestUsed = h, e.used
		}
	}
	if len(u.m) >= u.max {
		delete(u.m, oldest)
	}
}

// count is how many keys are remembered.
func (u *users) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.m)
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
