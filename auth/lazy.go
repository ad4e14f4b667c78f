package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// lazyReadTimeout bounds one background read of the stored credential. It is much longer
// than the wait of a single request (Options.KeyringTimeout): the first request may make
// the keyring show an unlock prompt, and the read it started keeps going while the user
// answers, so a later request finds the result instead of prompting again.
const lazyReadTimeout = 2 * time.Minute

// ResolveLazy is Resolve for long-running processes (serve): it returns without touching
// the keyring. The URL and environment credentials (R2R_API_KEY, R2R_EMAIL/R2R_PASSWORD)
// are resolved at once, exactly as Resolve does, because they cost nothing. Otherwise
// Resolved.Credentials is a *LazyCredentials that reads the stored credential (keyring
// first, then the plain-text file, with Resolve's rules) on its first use, and
// its Origin's Source is SourceKeyringPending; Kind, Email, UserID and KeyID are empty
// until then (see LazyCredentials.Snapshot). With InsecureStorage only the file is consulted,
// which is cheap, so ResolveLazy behaves like Resolve.
func ResolveLazy(ctx context.Context, opts Options) (Resolved, error) {
	if opts.InsecureStorage {
		return Resolve(ctx, opts)
	}
	res, r, err := resolveEnv(opts)
	if err != nil || r == nil {
		return res, err
	}
	wait := opts.KeyringTimeout
	if wait <= 0 {
		wait = DefaultKeyringTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &LazyCredentials{
		r:       r,
		wait:    wait,
		read:    NewVault(r.dir, opts.Keyring, max(wait, lazyReadTimeout), false),
		writes:  &KeyringStore{Keyring: opts.Keyring, Timeout: wait},
		preload: "keyring:" + r2r.Fingerprint(res.URL),
		env:     res.Origin().Warnings,
		log:     log,
	}
	res.Credentials = l
	l.base = res
	return res, nil
}

// LazyCredentials is the r2r.Credentials ResolveLazy returns when the credential is stored
// (keyring or file) rather than in the environment. Its first Apply reads the store; the
// result, once there is one, is kept for the life of the process.
//
//   - Concurrent first uses share one read (singleflight).
//   - A caller waits at most Options.KeyringTimeout (or until its context ends) and then
//     fails with an error matching ErrKeyringTimeout, which says to unlock the keyring and
//     retry. The read itself continues in the background (up to two minutes, enough to
//     answer an unlock prompt); a later call joins it or, once it is over, finds its
//     result. A read that failed is not remembered: the next call reads again.
//   - Finding nothing is a result, not a failure: the credential becomes r2r.Anonymous()
//     (R2R may run without authentication), as with Resolve.
//   - When R2R rejects the loaded credential (a 401) and it cannot renew itself, the store
//     is read once more: a `r2r-mcp login` done while serve runs takes effect at that call,
//     without a restart. Concurrent 401s share one re-read.
//   - login and logout rewrite config.json; the first request after that reads the store
//     again, so a login as someone else (or a logout) takes effect although the loaded
//     credential still works.
//
// Identity is "keyring:" + a fingerprint of the URL until the read succeeds, then the
// loaded credential's own identity. Identities key cached results (cache.Key,
// tools' project mappings), so the change merely makes entries cached under the first
// identity miss. r2r.Client reads Identity once, when it is built, and keeps the
// pre-load value; that is sound because a LazyCredentials loads at most one credential
// in its lifetime, or — after a 401 — the one a later login stored for the same URL on the
// same machine, so within one process the pre-load identity stands for "whoever is logged
// in here". It names no account, so the project mappings (tools/project) are keyed only
// after Load, by the loaded credential's identity, as every other command keys them.
//
// It implements r2r.GenerationRefresher by delegating to the loaded credential (a
// refresh-token TokenSource renews itself; an API key cannot be renewed, and Refresh says
// so). Origin and Snapshot describe the credential as known so far.
type LazyCredentials struct {
	r       *resolver
	wait    time.Duration // how long one caller waits for the read
	read    *Vault        // its keyring calls are bounded by lazyReadTimeout, not wait
	writes  *KeyringStore // where a keyring refresh token writes rotated tokens back
	preload string        // Identity before the read succeeded
	base    Resolved      // URL and URLSource
	env     []Warning     // the environment's warnings
	log     *slog.Logger

	flights singleflight.Group

	mu     sync.Mutex
	loaded bool
	info   Resolved    // what the read found: its Credentials (with their Origin), Kind, account, KeyringRead and KeyringErr
	swaps  uint32      // how many times a re-read (after a 401, or a login) replaced info.Credentials
	config os.FileInfo // config.json when the store was last read (nil: absent)
}

// Apply reads the stored credential if that has not happened yet, then applies it.
func (l *LazyCredentials) Apply(ctx context.Context, h http.Header) error {
	c, err := l.credentials(ctx)
	if err != nil {
		return err
	}
	return c.Apply(ctx, h)
}

// Load reads the stored credential now if that has not happened yet, under the same rules
// as Apply. serve may call it in the background after start-up, so that an unlock prompt
// appears early and the first tool call finds the credential ready.
func (l *LazyCredentials) Load(ctx context.Context) error {
	_, err := l.credentials(ctx)
	return err
}

// Loaded reports whether the stored credential has been read.
func (l *LazyCredentials) Loaded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loaded
}

// Identity is stable until the read succeeds: "keyring:" + a fingerprint of the URL (not
// a secret). After it, the loaded credential's identity. See the type's documentation.
func (l *LazyCredentials) Identity() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded {
		return l.info.Credentials.Identity()
	}
	return l.preload
}

// Origin is where the credential came from as known so far (Described): Source is
// SourceKeyringPending before the read, then SourceKeyring, FileSource or SourceNone; the
// warnings are the environment's from ResolveLazy, then the read's (plain-text file in
// use, no keyring, an unusable stored entry).
func (l *LazyCredentials) Origin() Origin {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := Origin{Source: SourceKeyringPending, Warnings: l.env}
	if l.loaded {
		read := OriginOf(l.info.Credentials)
		o = o.warn(read.Warnings...)
		o.Source = read.Source
	}
	return o
}

// Snapshot is the Resolved ResolveLazy would have returned had the credential been read
// eagerly, as far as it is known now (before the read: no Kind or account). Credentials
// is l itself, so its Origin is l's.
func (l *LazyCredentials) Snapshot() Resolved {
	l.mu.Lock()
	defer l.mu.Unlock()
	res := l.base
	if l.loaded {
		res = l.info
		res.URL, res.URLSource = l.base.URL, l.base.URLSource
	}
	res.Credentials = l
	return res
}

// Generation is 0 before the read; after it, the number of re-reads that replaced the
// credential in the high 32 bits and the loaded credential's renewal generation plus one in
// the low ones (r2r.GenerationRefresher).
func (l *LazyCredentials) Generation() uint64 {
	l.mu.Lock()
	c, loaded, swaps := l.info.Credentials, l.loaded, l.swaps
	l.mu.Unlock()
	if !loaded {
		return 0
	}
	inner := uint64(1)
	if g, ok := c.(r2r.GenerationRefresher); ok {
		inner = g.Generation() + 1
	}
	return uint64(swaps)<<32 | inner&(1<<32-1)
}

// RefreshFrom renews the loaded credential after R2R rejected it (r2r.GenerationRefresher),
// or, when it cannot be renewed, reads the store again for a newer login. gen 0 means the
// caller's request started before the read; a gen from before a re-read replaced the
// credential means the caller should simply retry with the new one.
func (l *LazyCredentials) RefreshFrom(ctx context.Context, gen uint64) error {
	l.mu.Lock()
	c, loaded, swaps := l.info.Credentials, l.loaded, l.swaps
	l.mu.Unlock()
	if !loaded {
		return l.Load(ctx)
	}
	if gen > 0 && uint32(gen>>32) != swaps {
		return nil
	}
	var err error
	switch r := c.(type) {
	case r2r.GenerationRefresher:
		if gen > 0 {
			err = r.RefreshFrom(ctx, gen&(1<<32-1)-1)
		} else {
			err = r.RefreshFrom(ctx, r.Generation())
		}
	case r2r.Refresher:
		err = r.Refresh(ctx)
	default:
		err = errNotRenewable
	}
	if err == nil {
		return nil
	}
	if replaced, rerr := l.reread(ctx, swaps); rerr != nil || replaced {
		return rerr
	}
	return l.renewalError(err)
}

// errNotRenewable marks a loaded credential with no way to renew itself (an API key, none).
var errNotRenewable = errors.New("not renewable")

// renewalError says what to do when neither renewal nor a re-read helped.
func (l *LazyCredentials) renewalError(err error) error {
	switch source := l.Origin().Source; {
	case source == SourceNone:
		return errors.New("no R2R credential is stored for " + l.base.URL + "; run `r2r-mcp login` (the next call uses it)")
	case errors.Is(err, errNotRenewable):
		return errors.New("the stored R2R API key (from " + string(source) + ") cannot be renewed; run `r2r-mcp login` (the next call uses the new key)")
	}
	return err
}

// reread reads the store once more, after R2R rejected the loaded credential or a login or
// logout rewrote config.json, and replaces
// it when the store now holds a different one (a login since). swaps is the count the
// caller saw; if another re-read replaced the credential meanwhile, that one is used.
// Concurrent callers share one read.
func (l *LazyCredentials) reread(ctx context.Context, swaps uint32) (bool, error) {
	ch := l.flights.DoChan("reread", func() (any, error) {
		info, err := l.readStored(context.WithoutCancel(ctx))
		if err != nil {
			return false, err
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.swaps != swaps {
			return true, nil
		}
		if info.Credentials.Identity() == l.info.Credentials.Identity() {
			return false, nil
		}
		l.info = info
		l.swaps++
		l.log.LogAttrs(ctx, slog.LevelInfo, "a newer stored R2R credential replaced the one in use",
			slog.String("source", string(info.Origin().Source)), slog.String("kind", info.Kind))
		return true, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return false, r.Err
		}
		return r.Val.(bool), nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Refresh renews the loaded credential (r2r.Refresher).
func (l *LazyCredentials) Refresh(ctx context.Context) error {
	return l.RefreshFrom(ctx, l.Generation())
}

// String keeps secrets out of %v.
func (l *LazyCredentials) String() string { return "auth.LazyCredentials(" + l.Identity() + ")" }

// GoString keeps secrets out of %#v.
func (l *LazyCredentials) GoString() string { return l.String() }

// credentials returns the loaded credential, reading it first if needed. It waits for the
// shared read at most l.wait.
func (l *LazyCredentials) credentials(ctx context.Context) (r2r.Credentials, error) {
	l.mu.Lock()
	if l.loaded {
		c, swaps, changed := l.info.Credentials, l.swaps, l.configChangedLocked()
		l.mu.Unlock()
		if !changed {
			return c, nil
		}
		// login and logout rewrite config.json: the store may hold someone else now, whose
		// credential must be used although the one held still works. A failed read keeps it.
		if replaced, err := l.reread(ctx, swaps); err == nil && replaced {
			l.mu.Lock()
			c = l.info.Credentials
			l.mu.Unlock()
		}
		return c, nil
	}
	l.mu.Unlock()
	ch := l.flights.DoChan("read", func() (any, error) {
		// Detached from the caller that started it: others share it, and it must be able
		// to outlive every caller's wait while an unlock prompt is answered. Its keyring
		// calls are bounded by l.read's timeout; the file is local.
		return l.readOnce(context.WithoutCancel(ctx))
	})
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(r2r.Credentials), nil
	case <-timer.C:
		return nil, &KeyringError{Op: "read", Err: fmt.Errorf(
			"%w (waited %s; it may be locked and waiting for you to unlock it). Unlock it and retry", ErrKeyringTimeout, l.wait)}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// configChangedLocked reports whether config.json was written (or removed) since it was
// last looked at, and remembers how it is now. l.mu is held.
func (l *LazyCredentials) configChangedLocked() bool {
	fi, err := os.Stat(ConfigPath(l.r.dir))
	if err != nil {
		fi = nil
	}
	old := l.config
	l.config = fi
	switch {
	case old == nil || fi == nil:
		return (old == nil) != (fi == nil)
	}
	return !os.SameFile(old, fi) || !old.ModTime().Equal(fi.ModTime()) || old.Size() != fi.Size()
}

// readOnce runs one read and, when it produced a result, keeps it.
func (l *LazyCredentials) readOnce(ctx context.Context) (r2r.Credentials, error) {
	l.mu.Lock()
	l.configChangedLocked() // before the read: a login after it is seen by the next request
	l.mu.Unlock()
	info, err := l.readStored(ctx)
	if err != nil {
		l.log.LogAttrs(ctx, slog.LevelWarn, "could not read the stored R2R credential; the next request tries again",
			slog.String("error", err.Error()))
		return nil, err
	}
	l.mu.Lock()
	if !l.loaded {
		l.loaded, l.info = true, info
	}
	info = l.info
	l.mu.Unlock()
	o := info.Origin()
	l.log.LogAttrs(ctx, slog.LevelInfo, "stored R2R credential read",
		slog.String("source", string(o.Source)), slog.String("kind", info.Kind))
	if w := o.Warning(); w != "" {
		l.log.LogAttrs(ctx, slog.LevelWarn, "credentials", slog.String("warning", w))
	}
	return info.Credentials, nil
}

// readStored applies Vault.Load's rules (keyring first, then the file) with one
// difference: a keyring that exists but failed (timeout, locked, D-Bus error) is an error
// to retry unless the file holds a credential, never "nothing stored". Only a keyring that
// is absent altogether (ErrNoKeyring) or empty lets the answer be "no credential". The
// Origin of the Credentials it returns holds the read's warnings only.
func (l *LazyCredentials) readStored(ctx context.Context) (Resolved, error) {
	u := l.base.URL
	none := func(kerr error, ws ...Warning) Resolved {
		anon := withOrigin(r2r.Anonymous(), Origin{Source: SourceNone, Warnings: ws})
		return Resolved{Credentials: anon, KeyringRead: true, KeyringErr: kerr}
	}
	sec, err := l.read.Keyring.Load(ctx, u)
	var kerr error
	switch {
	case err == nil:
		return l.described(sec, l.writes, nil, nil), nil
	case errors.Is(err, ErrNoCredential):
	case errors.Is(err, ErrKeyringUnavailable):
		kerr = err
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Resolved{}, err
	default:
		// The entry is there but unusable (not JSON, unknown kind): an answer, as in Resolve.
		return none(nil, unusableWarning(u, err)), nil
	}
	fsec, ferr := l.read.File.Load(ctx, u)
	switch {
	case ferr == nil:
		return l.described(fsec, l.read.File, []Warning{l.read.fileWarning("using the credential in", kerr)}, kerr), nil
	case kerr != nil && !errors.Is(kerr, ErrNoKeyring):
		return Resolved{}, kerr
	case errors.Is(ferr, ErrNoCredential) && kerr != nil:
		return none(kerr, keyringWarning(kerr)), nil
	case errors.Is(ferr, ErrNoCredential):
		return none(nil), nil
	case kerr != nil:
		// The file's problem first: it is what there is to fix (chmod 600, not a keyring).
		return none(kerr, unusableWarning(u, ferr), keyringWarning(kerr)), nil
	default:
		return none(nil, unusableWarning(u, ferr)), nil
	}
}

// described is the part of a Resolved that a read of sec from store fills in. A session's
// rotated tokens are written back to store.
func (l *LazyCredentials) described(sec Secret, store Store, warnings []Warning, kerr error) Resolved {
	o := Origin{Source: store.Source(), Warnings: warnings}
	return Resolved{Credentials: l.r.credentialsFor(sec, store, o), Kind: sec.Kind, Email: sec.Email, UserID: sec.UserID,
		KeyID: sec.KeyID, KeyringRead: true, KeyringErr: kerr}
}
