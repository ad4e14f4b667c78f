package httpserve

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"
	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// user is everything one R2R user's calls go through, whichever of the user's credentials
// they carry: one copy of the tools (with its rate limiters, search history and sync jobs)
// and its two front doors.
type user struct {
	id      string   // R2R user id ("" in shared-key mode)
	key     *userKey // the user's credentials; nil in shared-key mode
	srv     *server.Server
	mcp     *mcpserver.StreamableHTTPServer
	gateway http.Handler
	creds   int // credentials of the user remembered (users.m); guarded by users.mu
}

// accepted is one credential R2R accepted, remembered by its SHA-256 (never the credential).
type accepted struct {
	user    *user
	checked time.Time // when R2R last accepted it
	expires time.Time // when an access token's exp claim says it dies; zero = an API key
	used    time.Time // last request, for eviction
}

// fresh reports whether the check of e still holds at now.
func (e *accepted) fresh(now time.Time, ttl time.Duration) bool {
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

// users remembers the credentials R2R accepted by their SHA-256 for ttl, at most max of
// them, and builds one user per R2R user on the first of its credentials; a user is dropped
// with the last of its credentials. The table holds no credential: only each user's
// userKey keeps the latest one it was sent.
type users struct {
	ttl   time.Duration
	max   int
	check func(ctx context.Context, key string) (*r2r.User, error)
	build func(id string) (*user, error)
	now   func() time.Time
	// throttle bounds the failed checks per client address; nil = unbounded.
	throttle *checkThrottle

	mu       sync.Mutex
	m        map[[sha256.Size]byte]*accepted
	byID     map[string]*user                // users with a credential in m
	rejected map[[sha256.Size]byte]time.Time // keys R2R refused, until when to refuse them unasked
	sf       singleflight.Group
}

// rejectTTL is how long a key R2R refused is refused without asking R2R again, so a
// client retrying with a bad key does not turn each retry into an R2R request.
const rejectTTL = 10 * time.Second

// get returns the user of key, checking key against R2R when it is new or its check is
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
	if e := u.m[h]; e != nil && e.fresh(now, u.ttl) {
		e.used = now
		usr := e.user
		u.mu.Unlock()
		usr.key.use(key)
		return usr, nil
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
		var exp time.Time
		if isJWT(key) {
			exp = auth.TokenExpiry(key)
		}
		return u.accept(h, me.ID, exp)
	})
	if u.throttle != nil && !errors.Is(err, errRejected) {
		u.throttle.refund(addr)
	}
	if err != nil {
		return nil, err
	}
	usr := v.(*user)
	usr.key.use(key)
	return usr, nil
}

// accept remembers that R2R accepted the credential h as user id, until exp (zero = an API
// key), and returns the user, built on its first credential.
func (u *users) accept(h [sha256.Size]byte, id string, exp time.Time) (*user, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	if e := u.m[h]; e != nil {
		if e.user.id == id {
			e.checked, e.used, e.expires = now, now, exp
			return e.user, nil
		}
		u.dropLocked(h)
	}
	u.evictLocked()
	usr := u.byID[id]
	if usr == nil {
		var err error
		if usr, err = u.build(id); err != nil {
			return nil, err
		}
		u.byID[id] = usr
	}
	usr.creds++
	u.m[h] = &accepted{user: usr, checked: now, used: now, expires: exp}
	return usr, nil
}

// dropLocked forgets the credential h, and its user with the user's last credential.
func (u *users) dropLocked(h [sha256.Size]byte) {
	e := u.m[h]
	if e == nil {
		return
	}
	delete(u.m, h)
	if e.user.creds--; e.user.creds <= 0 {
		delete(u.byID, e.user.id)
	}
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
	u.dropLocked(h)
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

// evictLocked makes room for one more credential: expired checks go first, then the least
// recently used.
func (u *users) evictLocked() {
	if len(u.m) < u.max {
		return
	}
	now := u.now()
	var oldest [sha256.Size]byte
	var oldestUsed time.Time
	for h, e := range u.m {
		if !e.fresh(now, u.ttl) {
			u.dropLocked(h)
			continue
		}
		if oldestUsed.IsZero() || e.used.Before(oldestUsed) {
			oldest, oldestUsed = h, e.used
		}
	}
	if len(u.m) >= u.max {
		u.dropLocked(oldest)
	}
}
