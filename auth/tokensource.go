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
	password string        // password mode only; held in memory, never stored
	store    Store         // stored mode only
	url      string        // the store's account
	meta     Secret        // stored mode: the entry as loaded, updated on rotation
	lockPath string        // stored mode: the lock file renewals take; "" = no cross-process lock
	lockWait time.Duration // how long a renewal waits for another process's (lockWait)
	identity string
	log      *slog.Logger
	now      func() time.Time

	mu       sync.Mutex
	origin   Origin // gains a warning when renewals go without the lock or cannot save
	warned   map[WarningKind]bool
	access   string
	exp      time.Time // access token expiry, judged from when it was received (expiryOf); zero = unknown
	renewAt  time.Time // when Apply renews ahead of expiry (see renewTime); zero = only after a 401
	refresh  string
	gen      uint64        // bumped whenever access changes; 0 = no token yet
	lockHeld chan struct{} // closed while a renewal waits for another process's renewal
	heldAt   time.Time     // when that wait began

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
	if ts.fresh(sec.AccessToken, "", sec.ReceivedAt) {
		ts.setTokens(sec.AccessToken, sec.Secret, sec.ReceivedAt)
	}
	who := strings.ToLower(sec.Email)
	if who == "" {
		who = sec.UserID
	}
	ts.identity = "user:" + r2r.Fingerprint(who)
	return ts
}

func newTokenSource(opts TokenSourceOptions) *TokenSource {
	ts := &TokenSource{log: opts.Logger, now: opts.Now, origin: opts.Origin, lockWait: lockWait,
		lockHeld: make(chan struct{}), warned: map[WarningKind]bool{}}
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
// It gains a warning the first time a renewal cannot take the session lock or save the
// renewed session.
func (ts *TokenSource) Origin() Origin {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.origin
}

// warnOnce logs text and adds it to the Origin's warnings, the first time kind happens.
func (ts *TokenSource) warnOnce(ctx context.Context, kind WarningKind, text string) {
	ts.mu.Lock()
	first := !ts.warned[kind]
	if first {
		ts.warned[kind] = true
		ts.origin = ts.origin.warn(Warning{kind, text})
	}
	ts.mu.Unlock()
	if first {
		ts.log.LogAttrs(ctx, slog.LevelWarn, "credentials", slog.String("warning", text))
	}
}

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
		// A token that is still valid is sent rather than waiting for another process's
		// renewal; this one's goes on in the background.
		usable := tok != "" && ts.now().Before(exp)
		err := ts.await(ctx, gen, usable)
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
	return ts.await(ctx, gen, false)
}

// errLockHeld is await's answer to a caller that would rather not wait for another
// process's renewal.
var errLockHeld = errors.New("another process holds the session lock")

// await joins (or starts) the renewal of generation gen and waits for it until ctx ends;
// with leaveIfHeld, only until the renewal finds another process renewing (errLockHeld).
// When ctx ends while the renewal waits for another process, the error says so
// (SessionBusyError): nothing was sent to R2R.
func (ts *TokenSource) await(ctx context.Context, gen uint64, leaveIfHeld bool) error {
	var held <-chan struct{} // nil: never ready
	if leaveIfHeld {
		ts.mu.Lock()
		held = ts.lockHeld
		ts.mu.Unlock()
	}
	ch := ts.flights.DoChan(strconv.FormatUint(gen, 10), func() (any, error) {
		// Detached from the first caller: cancelling it must not fail the others.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return nil, ts.renew(rctx, gen)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-held:
		return errLockHeld
	case <-ctx.Done():
		ts.mu.Lock()
		since := ts.heldAt
		ts.mu.Unlock()
		if !since.IsZero() {
			return &SessionBusyError{Path: ts.lockPath, Waited: time.Since(since)}
		}
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
		got  time.Time
		err  error
	)
	if ts.store != nil {
		pair, got, err = ts.renewStored(ctx, refresh, current)
	} else {
		pair, err = ts.renewPassword(ctx, refresh)
		got = ts.now()
	}
	if err != nil {
		return err
	}
	ts.mu.Lock()
	ts.setTokens(pair.AccessToken.Token, pair.RefreshToken.Token, got)
	ts.mu.Unlock()
	return nil
}

// setTokens makes access and refresh, received at got, the current pair; ts.mu is held
// (or ts not yet shared).
func (ts *TokenSource) setTokens(access, refresh string, got time.Time) {
	ts.access, ts.refresh = access, refresh
	ts.exp = expiryOf(access, got)
	ts.renewAt = sessionRenewAt(access, refresh, got)
	ts.gen++
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

// renewStored trades the refresh token for a new pair, saves it and says when it was
// received. R2R invalidates a refresh token once used, so two processes renewing the same
// session at once would log each other out: the renewal runs under the user's session lock
// and first reads the store again. If another process already renewed (the stored refresh
// token differs from ours), its pair is used as it is while its access token is fresh and
// differs from current (the one being replaced), else its refresh token is traded. A stored
// entry that is gone or no longer a session (logout, or a login with an API key) ends this
// session.
func (ts *TokenSource) renewStored(ctx context.Context, refresh, current string) (*r2r.TokenPair, time.Time, error) {
	unlock, err := ts.lockSession(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer unlock()
	stored, lerr := ts.store.Load(ctx, ts.url)
	switch {
	case errors.Is(lerr, ErrNoCredential) && !errors.Is(lerr, ErrKeyringUnavailable),
		lerr == nil && stored.Kind != KindRefreshToken:
		return nil, time.Time{}, &SessionExpiredError{URL: ts.url, Err: errors.New("the stored session was removed or replaced")}
	case lerr == nil && stored.Secret != refresh:
		ts.meta = stored
		if ts.fresh(stored.AccessToken, current, stored.ReceivedAt) {
			return &r2r.TokenPair{AccessToken: r2r.Token{Token: stored.AccessToken}, RefreshToken: r2r.Token{Token: stored.Secret}},
				stored.ReceivedAt, nil
		}
		refresh = stored.Secret
	}
	pair, err := ts.client.RefreshToken(ctx, refresh)
	got := ts.now()
	if err != nil {
		if errors.Is(err, r2r.ErrUnauthorized) {
			return nil, time.Time{}, &SessionExpiredError{URL: ts.url, Err: err}
		}
		return nil, time.Time{}, err
	}
	if pair.AccessToken.Token == "" || pair.RefreshToken.Token == "" {
		return nil, time.Time{}, errors.New("R2R refresh-token returned an incomplete token pair")
	}
	next := ts.meta
	next.Secret, next.AccessToken, next.ReceivedAt = pair.RefreshToken.Token, pair.AccessToken.Token, got
	if serr := ts.store.Save(ctx, ts.url, next); serr != nil {
		// The old token is already invalidated; the new one lives in memory until exit.
		ts.warnOnce(ctx, WarnSessionNotSaved, fmt.Sprintf("could not save the renewed R2R session in %s (%v); "+
			"this process goes on with it, but once it exits run `r2r-mcp login`", ts.store.Source().Place(), serr))
	} else {
		ts.meta = next
	}
	return pair, got, nil
}

// lockSession takes the user's session lock for one renewal (see lockSession). When no
// lock can be made at its path (a read-only directory, someone else's file, a FIFO), the
// renewal goes ahead without it and says so once: failing every call instead would end a
// session that still works.
func (ts *TokenSource) lockSession(ctx context.Context) (unlock func(), err error) {
	unlock, err = lockSession(ctx, ts.lockPath, ts.lockWait, func() {
		ts.mu.Lock()
		ts.heldAt = time.Now()
		close(ts.lockHeld)
		ts.mu.Unlock()
	})
	ts.mu.Lock()
	if !ts.heldAt.IsZero() {
		ts.heldAt, ts.lockHeld = time.Time{}, make(chan struct{})
	}
	ts.mu.Unlock()
	if lu, ok := errors.AsType[*LockUnusableError](err); ok {
		ts.warnOnce(ctx, WarnNoSessionLock, lu.Error()+". Renewing the R2R session without it: another r2r-mcp process "+
			"renewing at the same moment could end this session, and renewed tokens may not be saved")
		return func() {}, nil
	}
	return unlock, err
}

// fresh reports whether tok, received at got (zero = unknown), is an access token worth
// starting from: present, not current (the token being replaced), and not yet due for
// renewal.
func (ts *TokenSource) fresh(tok, current string, got time.Time) bool {
	if tok == "" || tok == current {
		return false
	}
	at := renewAt(tok, got)
	return at.IsZero() || ts.now().Before(at)
}

// sessionRenewAt is when a session whose tokens were received at got is renewed: before its
// access token expires (renewAt), or once its refresh token has lived half its life,
// whichever comes first. R2R's access token outlives its refresh token by default (60,000
// minutes against 7 days), so renewing only for the access token would find the refresh
// token long dead; renewing it halfway keeps a session that is used every few days alive
// indefinitely.
func sessionRenewAt(access, refresh string, got time.Time) time.Time {
	at := renewAt(access, got)
	start, rexp := issuedAt(refresh, got), expiryOf(refresh, got)
	if rexp.IsZero() || start.IsZero() || !start.Before(rexp) {
		return at
	}
	half := start.Add(rexp.Sub(start) / 2)
	if at.IsZero() || half.Before(at) {
		return half
	}
	return at
}

// renewAt is when tok, received at got, is renewed ahead of time: renewTime from when it
// was received (or, not known, from its iat claim); without either, expirySkew before it
// expires. Zero when it has no exp.
func renewAt(tok string, got time.Time) time.Time {
	exp := expiryOf(tok, got)
	if exp.IsZero() {
		return time.Time{}
	}
	if start := issuedAt(tok, got); !start.IsZero() && start.Before(exp) {
		return renewTime(start, exp)
	}
	return exp.Add(-expirySkew)
}

// expiryOf is when tok, received at got, expires on this machine's clock: got plus the
// lifetime R2R gave it (exp − iat), so that R2R's clock running ahead or behind this one
// does not make a new token look expired or an old one valid. Without got or an iat claim,
// the exp claim as it stands. Zero when tok has no exp.
func expiryOf(tok string, got time.Time) time.Time {
	exp := tokenExpiry(tok)
	if exp.IsZero() || got.IsZero() {
		return exp
	}
	if iat := tokenClaim(tok, "iat"); !iat.IsZero() && iat.Before(exp) {
		return got.Add(exp.Sub(iat))
	}
	return exp
}

// issuedAt is when tok's life began on this machine's clock: got, or without it its iat
// claim (zero when it has none).
func issuedAt(tok string, got time.Time) time.Time {
	if !got.IsZero() {
		return got
	}
	return tokenClaim(tok, "iat")
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
