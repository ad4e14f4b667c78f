package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// refreshTimeout bounds one shared refresh: it runs detached from the caller that started
// it (other callers wait on it too), so it needs its own deadline.
const refreshTimeout = 30 * time.Second

// expirySkew renews an access token this long before the exp claim says it expires, so a
// request does not leave with a token that dies in flight.
const expirySkew = 30 * time.Second

// Store persists a Secret per R2R URL. KeyringStore and FileStore implement it; a
// TokenSource uses it to write rotated refresh tokens back where they came from.
type Store interface {
	Load(ctx context.Context, url string) (Secret, error)
	Save(ctx context.Context, url string, s Secret) error
	Delete(ctx context.Context, url string) error
	// Source names the store as a credential source (SourceKeyring, FileSource).
	Source() Source
}

// TokenSource is an r2r.Credentials that sends "Authorization: Bearer <access token>" and
// renews the access token when R2R rejects it (r2r.Refresher). It works in one of two modes:
//
//   - password (R2R_EMAIL/R2R_PASSWORD): logs in lazily on first use; renews with the
//     refresh token and logs in again if that fails;
//   - stored session (what `r2r-mcp login` stores): starts with the stored access token
//     while it is valid, renews with the refresh token before it expires and, because R2R
//     rotates refresh tokens, writes every new pair back to its Store under a lock shared
//     by all of the user's r2r-mcp processes (see renewStored).
//
// Renewal happens once for all concurrent callers: they share one flight, and a caller
// whose token was already replaced by someone else's renewal does not renew again.
type TokenSource struct {
	client   *r2r.Client // anonymous: login and refresh-token are public endpoints
	email    string
	password string // password mode only; held in memory, never stored
	store    Store  // stored mode only
	url      string // the store's account
	meta     Secret // stored mode: the entry as loaded, updated on rotation
	lockPath string // stored mode: the lock file renewals take; "" = no cross-process lock
	identity string
	origin   Origin
	log      *slog.Logger
	now      func() time.Time

	mu      sync.Mutex
	access  string
	exp     time.Time // access token expiry from its exp claim; zero = unknown
	renewAt time.Time // when Apply renews ahead of expiry (see renewTime); zero = only after a 401
	refresh string
	gen     uint64 // bumped whenever access changes; 0 = no token yet

	renewMu sync.Mutex // serialises renewals across flights
	flights singleflight.Group
}

// TokenSourceOptions are the shared knobs of both TokenSource constructors.
type TokenSourceOptions struct {
	// Client points at the R2R instance; its credentials are ignored.
	Client *r2r.Client
	// Logger receives warnings (e.g. a rotated token that could not be saved); nil = discard.
	Logger *slog.Logger
	// Now is the clock; nil = time.Now.
	Now func() time.Time
	// LockPath is the lock file a stored session's renewals take, shared by every r2r-mcp
	// process of the user (SessionLockPath); "" = renewals are serialised in this process
	// only.
	LockPath string
	// Origin is where the credential came from, as the TokenSource reports it (Described).
	Origin Origin
}

// NewPasswordSource returns a TokenSource that logs in as email with password on first use.
func NewPasswordSource(opts TokenSourceOptions, email, password string) *TokenSource {
	ts := newTokenSource(opts)
	ts.email = email
	ts.password = password
	ts.identity = "user:" + r2r.Fingerprint(strings.ToLower(strings.TrimSpace(email)))
	return ts
}

// NewStoredSource returns a TokenSource that starts from the stored session sec (Kind
// KindRefreshToken) for url, using its access token while that is valid, and saves every
// rotated pair back to store.
func NewStoredSource(opts TokenSourceOptions, url string, sec Secret, store Store) *TokenSource {
	ts := newTokenSource(opts)
	ts.store = store
	ts.url = url
	ts.meta = sec
	ts.refresh = sec.Secret
	ts.lockPath = opts.LockPath
	if ts.fresh(sec.AccessToken, "") {
		ts.access = sec.AccessToken
		ts.exp = tokenExpiry(ts.access)
		ts.renewAt = sessionRenewAt(ts.access, ts.exp, ts.refresh)
		ts.gen = 1
	}
	who := strings.ToLower(sec.Email)
	if who == "" {
		who = sec.UserID
	}
	ts.identity = "user:" + r2r.Fingerprint(who)
	return ts
}

func newTokenSource(opts TokenSourceOptions) *TokenSource {
	ts := &TokenSource{log: opts.Logger, now: opts.Now, origin: opts.Origin}
	if ts.now == nil {
		ts.now = time.Now
	}
	if opts.Client != nil {
		ts.client = opts.Client.WithCredentials(r2r.Anonymous())
	}
	if ts.log == nil {
		ts.log = slog.New(slog.DiscardHandler)
	}
	return ts
}

// Identity is a short SHA-256 of the user's email (or id): stable across token renewals,
// never a secret.
func (ts *TokenSource) Identity() string { return ts.identity }

// Origin says where the credential came from (Described): TokenSourceOptions.Origin.
func (ts *TokenSource) Origin() Origin { return ts.origin }

// String keeps tokens out of %v.
func (ts *TokenSource) String() string { return "auth.TokenSource(" + ts.identity + ")" }

// GoString keeps tokens out of %#v.
func (ts *TokenSource) GoString() string { return ts.String() }

// Apply sets the Authorization header, logging in or renewing first when there is no token
// yet or it is about to expire.
func (ts *TokenSource) Apply(ctx context.Context, h http.Header) error {
	ts.mu.Lock()
	tok, exp, renewAt, gen := ts.access, ts.exp, ts.renewAt, ts.gen
	ts.mu.Unlock()
	if tok == "" || (!renewAt.IsZero() && !ts.now().Before(renewAt)) {
		err := ts.RefreshFrom(ctx, gen)
		ts.mu.Lock()
		tok = ts.access
		ts.mu.Unlock()
		// A token that is merely close to expiry is still worth sending if renewal failed.
		if err != nil && (tok == "" || !ts.now().Before(exp)) {
			return err
		}
	}
	h.Del("X-API-Key") // R2R rejects requests that carry both
	h.Set("Authorization", "Bearer "+tok)
	return nil
}

// Generation identifies the current access token; it changes with every renewal. A caller
// that reads it before sending a request can pass it to RefreshFrom after a 401.
func (ts *TokenSource) Generation() uint64 {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.gen
}

// Refresh renews the access token (r2r.Refresher). Concurrent calls share one renewal.
func (ts *TokenSource) Refresh(ctx context.Context) error {
	return ts.RefreshFrom(ctx, ts.Generation())
}

// RefreshFrom renews the access token unless it has changed since generation gen (someone
// else already replaced the token the caller was rejected with). Concurrent calls for the
// same generation share one renewal.
func (ts *TokenSource) RefreshFrom(ctx context.Context, gen uint64) error {
	ch := ts.flights.DoChan(strconv.FormatUint(gen, 10), func() (any, error) {
		// Detached from the first caller: cancelling it must not fail the others.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return nil, ts.renew(rctx, gen)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// renew obtains a new token pair unless the generation moved on.
func (ts *TokenSource) renew(ctx context.Context, gen uint64) error {
	ts.renewMu.Lock()
	defer ts.renewMu.Unlock()
	ts.mu.Lock()
	if ts.gen != gen {
		ts.mu.Unlock()
		return nil
	}
	refresh, current := ts.refresh, ts.access
	ts.mu.Unlock()
	if ts.client == nil {
		return errors.New("auth: TokenSource has no R2R client")
	}
	var (
		pair *r2r.TokenPair
		err  error
	)
	if ts.store != nil {
		pair, err = ts.renewStored(ctx, refresh, current)
	} else {
		pair, err = ts.renewPassword(ctx, refresh)
	}
	if err != nil {
		return err
	}
	ts.mu.Lock()
	ts.access = pair.AccessToken.Token
	ts.exp = tokenExpiry(ts.access)
	ts.refresh = pair.RefreshToken.Token
	ts.renewAt = sessionRenewAt(ts.access, ts.exp, ts.refresh)
	ts.gen++
	ts.mu.Unlock()
	return nil
}

func (ts *TokenSource) renewPassword(ctx context.Context, refresh string) (*r2r.TokenPair, error) {
	if refresh != "" {
		pair, err := ts.client.RefreshToken(ctx, refresh)
		if err == nil && pair.AccessToken.Token != "" {
			return pair, nil
		}
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		ts.log.LogAttrs(ctx, slog.LevelDebug, "r2r token refresh failed; logging in again", slog.Any("error", err))
	}
	pair, err := ts.client.Login(ctx, ts.email, ts.password)
	if err != nil {
		return nil, fmt.Errorf("log in to R2R as %s (from R2R_EMAIL/R2R_PASSWORD): %w", ts.email, err)
	}
	if pair.AccessToken.Token == "" {
		return nil, errors.New("R2R login returned no access token")
	}
	return pair, nil
}

// renewStored trades the refresh token for a new pair and saves it. R2R invalidates a
// refresh token once used, so two processes renewing the same session at once would log
// each other out: the renewal runs under the user's session lock and first reads the store
// again. If another process already renewed (the stored refresh token differs from ours),
// its pair is used as it is while its access token is fresh and differs from current (the
// one being replaced), else its refresh token is traded. A stored entry that is gone or no
// longer a session (logout, or a login with an API key) ends this session.
func (ts *TokenSource) renewStored(ctx context.Context, refresh, current string) (*r2r.TokenPair, error) {
	unlock, err := lockSession(ctx, ts.lockPath)
	if err != nil {
		return nil, err
	}
	defer unlock()
	stored, lerr := ts.store.Load(ctx, ts.url)
	switch {
	case errors.Is(lerr, ErrNoCredential) && !errors.Is(lerr, ErrKeyringUnavailable),
		lerr == nil && stored.Kind != KindRefreshToken:
		return nil, &SessionExpiredError{URL: ts.url, Err: errors.New("the stored session was removed or replaced")}
	case lerr == nil && stored.Secret != refresh:
		ts.meta = stored
		if ts.fresh(stored.AccessToken, current) {
			return &r2r.TokenPair{AccessToken: r2r.Token{Token: stored.AccessToken}, RefreshToken: r2r.Token{Token: stored.Secret}}, nil
		}
		refresh = stored.Secret
	}
	pair, err := ts.client.RefreshToken(ctx, refresh)
	if err != nil {
		if errors.Is(err, r2r.ErrUnauthorized) {
			return nil, &SessionExpiredError{URL: ts.url, Err: err}
		}
		return nil, err
	}
	if pair.AccessToken.Token == "" || pair.RefreshToken.Token == "" {
		return nil, errors.New("R2R refresh-token returned an incomplete token pair")
	}
	next := ts.meta
	next.Secret, next.AccessToken = pair.RefreshToken.Token, pair.AccessToken.Token
	if serr := ts.store.Save(ctx, ts.url, next); serr != nil {
		// The old token is already invalidated; the new one lives in memory until exit.
		ts.log.LogAttrs(ctx, slog.LevelWarn, "could not save the renewed R2R session; run `r2r-mcp login` after restarting",
			slog.String("store", string(ts.store.Source())), slog.String("error", serr.Error()))
	} else {
		ts.meta = next
	}
	return pair, nil
}

// fresh reports whether tok is an access token worth starting from: present, not current
// (the token being replaced), and not yet due for renewal.
func (ts *TokenSource) fresh(tok, current string) bool {
	if tok == "" || tok == current {
		return false
	}
	exp := tokenExpiry(tok)
	return exp.IsZero() || ts.now().Before(renewAt(tok, exp))
}

// sessionRenewAt is when a session is renewed: before its access token expires (renewAt),
// or once its refresh token has lived half its life, whichever comes first. R2R's access
// token outlives its refresh token by default (60,000 minutes against 7 days), so renewing
// only for the access token would find the refresh token long dead; renewing it halfway
// keeps a session that is used every few days alive indefinitely.
func sessionRenewAt(access string, exp time.Time, refresh string) time.Time {
	at := renewAt(access, exp)
	rexp, riat := tokenExpiry(refresh), tokenClaim(refresh, "iat")
	if rexp.IsZero() || riat.IsZero() || !riat.Before(rexp) {
		return at
	}
	half := riat.Add(rexp.Sub(riat) / 2)
	if at.IsZero() || half.Before(at) {
		return half
	}
	return at
}

// renewAt is when tok, expiring at exp, is renewed ahead of time: renewTime from its iat
// claim (when R2R issued it, in this process or another); without one, expirySkew before
// exp. Zero when exp is.
func renewAt(tok string, exp time.Time) time.Time {
	if exp.IsZero() {
		return time.Time{}
	}
	if iat := tokenClaim(tok, "iat"); !iat.IsZero() && iat.Before(exp) {
		return renewTime(iat, exp)
	}
	return exp.Add(-expirySkew)
}

// renewTime is when a token received at now and expiring at exp is renewed ahead of time:
// expirySkew before exp, but no earlier than nine tenths into its lifetime. Without the cap a
// token living less than expirySkew (R2R's access_token_lifetime can be set to seconds)
// would be renewed on every request.
func renewTime(now, exp time.Time) time.Time {
	if exp.IsZero() {
		return time.Time{}
	}
	skew := max(min(expirySkew, exp.Sub(now)/10), 0)
	return exp.Add(-skew)
}

// tokenExpiry reads the exp claim of a JWT without verifying it (only R2R can); zero when
// the token is not a JWT or has no exp.
func tokenExpiry(tok string) time.Time { return tokenClaim(tok, "exp") }

// TokenExpiry is when the JWT tok expires by its exp claim, read without verifying it
// (only R2R can); zero when tok is not a JWT or has no exp.
func TokenExpiry(tok string) time.Time { return tokenExpiry(tok) }

// tokenClaim reads the time claim name ("exp", "iat") of a JWT without verifying it; zero
// when the token is not a JWT or lacks the claim.
func tokenClaim(tok, name string) time.Time {
	v, ok := jwtClaims(tok)[name].(float64)
	if !ok || v <= 0 {
		return time.Time{}
	}
	sec := int64(v)
	return time.Unix(sec, int64((v-float64(sec))*1e9))
}
