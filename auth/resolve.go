// Package auth finds the R2R URL and credentials r2r-mcp uses, and stores the ones
// `r2r-mcp login` obtains.
//
// Credentials resolve in this order, each reporting its source: env R2R_API_KEY > env
// R2R_EMAIL + R2R_PASSWORD > the OS keyring (service "r2r-mcp", account = normalised R2R
// URL) > a 0600 JSON file in the user config dir, always with a warning. Login writes that
// file only on a machine without any keyring (ErrNoKeyring) or with --insecure-storage; a
// keyring that is locked or slow is an error there, not a reason to write plain text.
// Every keyring call is bounded by a timeout so a locked or hung keyring never hangs a
// command, and serve reads the keyring only on its first request (ResolveLazy).
package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// KindPassword is Resolved.Kind for R2R_EMAIL/R2R_PASSWORD.
const KindPassword = "password"

// Options say where Resolve looks. Zero values mean the real environment.
type Options struct {
	// URLFlag is the value of the command's URL flag; "" = not given.
	URLFlag string
	// URLFlagName names that flag in URLSource and in errors; "" = DefaultURLFlagName
	// ("--url").
	URLFlagName string
	// Getenv reads environment variables; nil = os.Getenv.
	Getenv func(string) string
	// Keyring is the OS keyring; nil = SystemKeyring().
	Keyring Keyring
	// KeyringTimeout bounds each keyring call; 0 = DefaultKeyringTimeout.
	KeyringTimeout time.Duration
	// ConfigDir holds config.json and credentials.json; "" = DefaultConfigDir(Getenv).
	ConfigDir string
	// InsecureStorage skips the keyring and uses only the file.
	InsecureStorage bool
	// HTTPClient, UserAgent and Logger configure the r2r client token sources use to log in
	// and refresh; zero = the r2r package defaults.
	HTTPClient *http.Client
	UserAgent  string
	Logger     *slog.Logger
}

// Resolved is the effective R2R URL and credential, with where each came from.
type Resolved struct {
	URL       string
	URLSource string
	// Credentials is never nil: r2r.Anonymous() when nothing was found (R2R may run
	// without authentication). They say where they came from (Origin).
	Credentials r2r.Credentials
	// KeyringRead reports that the keyring was asked for the stored credential (not when a
	// credential came from the environment, nor with InsecureStorage). It answered unless
	// KeyringErr is set.
	KeyringRead bool
	// KeyringErr is why the keyring could not be read (it matches ErrKeyringUnavailable,
	// and ErrKeyringTimeout or ErrNoKeyring when that was the cause); nil = it answered or
	// was not asked.
	KeyringErr error
	// Kind is KindAPIKey, KindRefreshToken, KindPassword, or "" with no credential.
	Kind string
	// Email, UserID and KeyID describe the stored credential when known (never secrets).
	Email  string
	UserID string
	KeyID  string
}

// Origin is where Credentials came from and what the user should know about them, as
// Credentials report it now.
func (r Resolved) Origin() Origin { return OriginOf(r.Credentials) }

// WarningKind says what a Resolved warning is about, so callers can act on it without
// reading its text.
type WarningKind int

const (
	// WarnEnvIncomplete: R2R_EMAIL or R2R_PASSWORD is set without the other and is ignored.
	WarnEnvIncomplete WarningKind = iota + 1
	// WarnKeyringUnavailable: the keyring could not be read (Resolved.KeyringErr) and no
	// credential was found in the file.
	WarnKeyringUnavailable
	// WarnUnusableEntry: a stored entry exists but cannot be used (not valid, unreadable).
	WarnUnusableEntry
	// WarnPlainTextFile: the credential comes from the plain-text file, by choice or
	// because the keyring could not be read (then Resolved.KeyringErr is set too).
	WarnPlainTextFile
	// WarnNoSessionLock: the session lock cannot be made, so renewals go without it.
	WarnNoSessionLock
	// WarnSessionNotSaved: a renewed session could not be written back to its store.
	WarnSessionNotSaved
)

// Warning is one thing the user should know about the resolved credential.
type Warning struct {
	Kind WarningKind
	Text string
}

// warningText joins the texts of ws with "; ", the form of Origin.Warning.
func warningText(ws []Warning) string {
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.Text
	}
	return strings.Join(texts, "; ")
}

func unusableWarning(url string, err error) Warning {
	if errors.Is(err, ErrInsecureFile) {
		return Warning{WarnUnusableEntry, err.Error()} // it leads with the fix
	}
	return Warning{WarnUnusableEntry, fmt.Sprintf("stored credential for %s unusable: %v", url, err)}
}

func keyringWarning(kerr error) Warning { return Warning{WarnKeyringUnavailable, kerr.Error()} }

// Resolve finds the R2R URL and credential. It never prompts and never talks to R2R
// (token sources log in lazily on first use). It fails only when the URL is invalid or
// the config dir cannot be determined; a missing or unusable stored credential resolves
// to Anonymous with a Warning, so serve can start and explain how to log in.
//
// Resolve reads the keyring before it returns, which can take up to KeyringTimeout when
// the keyring is locked or slow; ResolveLazy defers that read to the first request.
func Resolve(ctx context.Context, opts Options) (Resolved, error) {
	res, r, err := resolveEnv(opts)
	if err != nil || r == nil {
		return res, err
	}
	v := NewVault(r.dir, opts.Keyring, opts.KeyringTimeout, opts.InsecureStorage)
	sec, store, warn, kerr, err := v.load(ctx, res.URL)
	res.KeyringRead, res.KeyringErr = !v.Insecure, kerr
	o := res.Origin()
	if warn.Text != "" {
		o = o.warn(warn)
	}
	switch {
	case errors.Is(err, ErrNoCredential):
		res.Credentials = withOrigin(r2r.Anonymous(), o)
	case err != nil:
		res.Credentials = withOrigin(r2r.Anonymous(), o.warn(unusableWarning(res.URL, err)))
	default:
		o.Source = store.Source()
		res.Credentials, res.Kind = r.credentialsFor(sec, store, o), sec.Kind
		res.Email, res.UserID, res.KeyID = sec.Email, sec.UserID, sec.KeyID
	}
	return res, nil
}

// resolver carries what the stored-credential half of Resolve and ResolveLazy needs.
type resolver struct {
	opts   Options
	dir    string
	url    string      // the normalised URL: the keyring account and the file's key
	client *r2r.Client // anonymous, for token sources
}

// resolveEnv resolves the URL and the environment's credentials. A nil *resolver means res
// is final (a credential came from the environment); otherwise the stored credential is
// still to be looked up and res holds the URL and Anonymous from SourceNone, with the
// environment's warnings.
func resolveEnv(opts Options) (Resolved, *resolver, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.ConfigDir
	if dir == "" {
		d, err := DefaultConfigDir(getenv)
		if err != nil {
			return Resolved{}, nil, err
		}
		dir = d
	}
	u, urlSource, err := resolveURL(opts.URLFlag, URLFlagSource(opts.URLFlagName), getenv, dir)
	if err != nil {
		return Resolved{}, nil, err
	}
	res := Resolved{URL: u, URLSource: urlSource}
	client, err := r2r.New(r2r.Options{BaseURL: u, HTTPClient: opts.HTTPClient, UserAgent: opts.UserAgent, Logger: opts.Logger})
	if err != nil {
		return Resolved{}, nil, err
	}
	r := &resolver{opts: opts, dir: dir, url: u, client: client}

	if key := strings.TrimSpace(getenv("R2R_API_KEY")); key != "" {
		c := r2r.APIKey(key)
		if err := CheckValue(key); err != nil {
			// Not an error here: serve must still start and answer every call with this.
			c = unusable{identity: c.Identity(), err: fmt.Errorf("R2R_API_KEY %w", err)}
		}
		res.Credentials, res.Kind = withOrigin(c, Origin{Source: SourceEnvAPIKey}), KindAPIKey
		return res, nil, nil
	}
	email, password := strings.TrimSpace(getenv("R2R_EMAIL")), getenv("R2R_PASSWORD")
	o := Origin{Source: SourceNone}
	switch {
	case email != "" && password != "":
		res.Credentials = NewPasswordSource(TokenSourceOptions{Client: client, Logger: opts.Logger,
			Origin: Origin{Source: SourceEnvPassword}}, email, password)
		res.Kind, res.Email = KindPassword, email
		return res, nil, nil
	case email != "":
		o = o.warn(Warning{WarnEnvIncomplete, "R2R_EMAIL is set without R2R_PASSWORD; ignoring it"})
	case password != "":
		o = o.warn(Warning{WarnEnvIncomplete, "R2R_PASSWORD is set without R2R_EMAIL; ignoring it"})
	}
	res.Credentials = withOrigin(r2r.Anonymous(), o)
	return res, r, nil
}

// unusable is a credential that cannot be sent (a value with a line break): every Apply
// fails with why, so each call (and status, doctor) says it, and the source's Fix says
// what to do.
type unusable struct {
	identity string
	err      error // never quotes the value
}

func (u unusable) Apply(context.Context, http.Header) error { return u.err }
func (u unusable) Identity() string                         { return u.identity }
func (u unusable) String() string                           { return "auth.unusable(" + u.identity + ")" }
func (u unusable) GoString() string                         { return u.String() }

// credentialsFor turns a stored Secret from store into Credentials from o: an API key as
// is, a session as a TokenSource that writes renewed pairs back to store under the user's
// session lock.
func (r *resolver) credentialsFor(sec Secret, store Store, o Origin) r2r.Credentials {
	if sec.Kind == KindAPIKey {
		return withOrigin(r2r.APIKey(sec.Secret), o)
	}
	return NewStoredSource(TokenSourceOptions{Client: r.client, Logger: r.opts.Logger, LockPath: SessionLockPath(r.dir),
		Origin: o}, r.url, sec, store)
}

// Vault applies r2r-mcp's storage rules on top of the keyring and the file: the keyring
// when it works, the file when it does not (or with Insecure), and never both for one URL.
type Vault struct {
	Keyring *KeyringStore
	File    *FileStore
	// Insecure uses the file even when a keyring is reachable (--insecure-storage).
	Insecure bool
}

// NewVault returns the Vault for configDir. kr nil = SystemKeyring(), timeout 0 =
// DefaultKeyringTimeout.
func NewVault(configDir string, kr Keyring, timeout time.Duration, insecure bool) *Vault {
	return &Vault{
		Keyring:  &KeyringStore{Keyring: kr, Timeout: timeout},
		File:     &FileStore{Path: filepath.Join(configDir, CredentialsFileName)},
		Insecure: insecure,
	}
}

// Load returns the Secret for url and the Store holding it: the keyring first, then the
// file. warning is set whenever the file is involved or the keyring failed. The error
// matches ErrNoCredential when neither holds anything; when the keyring failed it matches
// that failure too (ErrKeyringTimeout, ErrNoKeyring, ...).
func (v *Vault) Load(ctx context.Context, url string) (sec Secret, store Store, warning string, err error) {
	sec, store, warn, _, err := v.load(ctx, url)
	return sec, store, warn.Text, err
}

// load is Load with its warning classified and the keyring's failure (matching
// ErrKeyringUnavailable) returned on its own as kerr, also when the file then answered.
func (v *Vault) load(ctx context.Context, url string) (sec Secret, store Store, warn Warning, kerr error, err error) {
	if !v.Insecure {
		sec, err = v.Keyring.Load(ctx, url)
		switch {
		case err == nil:
			return sec, v.Keyring, Warning{}, nil, nil
		case errors.Is(err, ErrKeyringUnavailable):
			kerr = err
		case !errors.Is(err, ErrNoCredential):
			return Secret{}, nil, Warning{}, nil, err
		}
	}
	sec, err = v.File.Load(ctx, url)
	switch {
	case err == nil:
		return sec, v.File, v.fileWarning("using the credential in", kerr), kerr, nil
	case errors.Is(err, ErrNoCredential) && kerr != nil:
		// Both match, so a caller can tell "nothing stored" from "the keyring did not
		// answer, so maybe something is stored there" (errors.Is(err, ErrKeyringTimeout)).
		return Secret{}, nil, keyringWarning(kerr), kerr, fmt.Errorf("%w: %w", ErrNoCredential, kerr)
	default:
		return Secret{}, nil, Warning{}, kerr, err
	}
}

// Save stores sec for url and returns the Store that took it. It uses the keyring unless
// Insecure or there is no keyring at all (ErrNoKeyring), and removes any copy for url from
// the other store so the two never disagree. warning is set whenever the file was used.
//
// A keyring that exists but fails (ErrKeyringTimeout: it is slow, typically waiting for
// an unlock or permission prompt; a locked collection; a dismissed prompt) is an error,
// never a silent move to the plain-text file: the user chose a keyring by having one, and
// only --insecure-storage (Insecure) overrides that.
func (v *Vault) Save(ctx context.Context, url string, sec Secret) (store Store, warning string, err error) {
	var kerr error
	if !v.Insecure {
		err := v.Keyring.Save(ctx, url, sec)
		if err == nil {
			if derr := v.File.Delete(ctx, url); derr != nil && !errors.Is(derr, ErrNoCredential) {
				return v.Keyring, fmt.Sprintf("could not remove the old copy in %s: %v", v.File.Path, derr), nil
			}
			return v.Keyring, "", nil
		}
		if !errors.Is(err, ErrNoKeyring) {
			return nil, "", err
		}
		kerr = err
	}
	if err := v.File.Save(ctx, url, sec); err != nil {
		return nil, "", err
	}
	if v.Insecure {
		// A keyring entry would shadow the file; best effort, the keyring may be absent, and
		// briefly: the user chose the file to avoid waiting on the keyring.
		quick := &KeyringStore{Keyring: v.Keyring.Keyring, Timeout: min(v.Keyring.timeout(), DefaultKeyringTimeout)}
		_ = quick.Delete(ctx, url)
	}
	return v.File, v.fileWarning("stored the credential in", kerr).Text, nil
}

// Delete removes url's entry from both stores and returns the stores it removed it from.
// A keyring that cannot be reached is reported in warning, not as an error, so logout
// still cleans the file.
func (v *Vault) Delete(ctx context.Context, url string) (removed []Source, warning string, err error) {
	kerr := v.Keyring.Delete(ctx, url)
	switch {
	case kerr == nil:
		removed = append(removed, v.Keyring.Source())
	case errors.Is(kerr, ErrNoCredential):
	case errors.Is(kerr, ErrKeyringUnavailable):
		warning = kerr.Error()
	default:
		return nil, "", kerr
	}
	switch ferr := v.File.Delete(ctx, url); {
	case ferr == nil:
		removed = append(removed, v.File.Source())
	case errors.Is(ferr, ErrNoCredential):
	default:
		return removed, warning, ferr
	}
	return removed, warning, nil
}

func (v *Vault) fileWarning(what string, kerr error) Warning {
	if kerr != nil {
		return Warning{WarnPlainTextFile, fmt.Sprintf("no usable system keyring (%v); %s the plain-text file %s (readable only by you)", kerr, what, v.File.Path)}
	}
	return Warning{WarnPlainTextFile, fmt.Sprintf("%s the plain-text file %s (readable only by you), not the system keyring", what, v.File.Path)}
}
