// Package auth finds the R2R URL and credentials r2r-mcp uses, and stores the ones
// `r2r-mcp login` obtains.
//
// Credentials resolve in this order, each reporting its source: env R2R_API_KEY > env
// R2R_EMAIL + R2R_PASSWORD > the OS keyring (service "r2r-mcp", account = normalised R2R
// URL) > a 0600 JSON file in the user config dir, used only without a reachable keyring or
// after `login --insecure-storage`, always with a warning. Every keyring call is bounded by
// a timeout so a locked or hung keyring never hangs serve.
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

// Credential sources reported by Resolve.
const (
	SourceEnvAPIKey   = "env R2R_API_KEY"
	SourceEnvPassword = "env R2R_EMAIL/R2R_PASSWORD"
	SourceKeyring     = "keyring"
	// SourceFilePrefix starts the source of a credential read from the file: "file <path>".
	SourceFilePrefix = "file "
	SourceNone       = "none"
)

// KindPassword is Resolved.Kind for R2R_EMAIL/R2R_PASSWORD.
const KindPassword = "password"

// Options say where Resolve looks. Zero values mean the real environment.
type Options struct {
	// URLFlag is the --url flag value; "" = not given.
	URLFlag string
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
	// without authentication).
	Credentials r2r.Credentials
	// Source is one of the Source* constants, or "file <path>".
	Source string
	// Warning is for the user (stderr, r2r_status): plain-text storage, unreachable keyring,
	// an unusable stored entry. "" = nothing to say.
	Warning string
	// Kind is KindAPIKey, KindRefreshToken, KindPassword, or "" with no credential.
	Kind string
	// Email, UserID and KeyID describe the stored credential when known (never secrets).
	Email  string
	UserID string
	KeyID  string
}

// Resolve finds the R2R URL and credential. It never prompts and never talks to R2R
// (token sources log in lazily on first use). It fails only when the URL is invalid or
// the config dir cannot be determined; a missing or unusable stored credential resolves
// to Anonymous with a Warning, so serve can start and explain how to log in.
func Resolve(ctx context.Context, opts Options) (Resolved, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.ConfigDir
	if dir == "" {
		d, err := DefaultConfigDir(getenv)
		if err != nil {
			return Resolved{}, err
		}
		dir = d
	}
	u, urlSource, err := ResolveURL(opts.URLFlag, getenv, dir)
	if err != nil {
		return Resolved{}, err
	}
	res := Resolved{URL: u, URLSource: urlSource, Credentials: r2r.Anonymous(), Source: SourceNone}
	var warnings []string

	if key := strings.TrimSpace(getenv("R2R_API_KEY")); key != "" {
		res.Credentials, res.Source, res.Kind = r2r.APIKey(key), SourceEnvAPIKey, KindAPIKey
		return res, nil
	}
	email, password := strings.TrimSpace(getenv("R2R_EMAIL")), getenv("R2R_PASSWORD")
	switch {
	case email != "" && password != "":
		client, err := r2r.New(r2r.Options{BaseURL: u, HTTPClient: opts.HTTPClient, UserAgent: opts.UserAgent, Logger: opts.Logger})
		if err != nil {
			return Resolved{}, err
		}
		res.Credentials = NewPasswordSource(TokenSourceOptions{Client: client, Logger: opts.Logger}, email, password)
		res.Source, res.Kind, res.Email = SourceEnvPassword, KindPassword, email
		return res, nil
	case email != "":
		warnings = append(warnings, "R2R_EMAIL is set without R2R_PASSWORD; ignoring it")
	case password != "":
		warnings = append(warnings, "R2R_PASSWORD is set without R2R_EMAIL; ignoring it")
	}

	v := NewVault(dir, opts.Keyring, opts.KeyringTimeout, opts.InsecureStorage)
	sec, store, warn, err := v.Load(ctx, u)
	if warn != "" {
		warnings = append(warnings, warn)
	}
	switch {
	case errors.Is(err, ErrNoCredential):
	case err != nil:
		warnings = append(warnings, fmt.Sprintf("stored credential for %s unusable: %v", u, err))
	default:
		res.Source, res.Kind = store.Source(), sec.Kind
		res.Email, res.UserID, res.KeyID = sec.Email, sec.UserID, sec.KeyID
		if sec.Kind == KindAPIKey {
			res.Credentials = r2r.APIKey(sec.Secret)
		} else {
			client, err := r2r.New(r2r.Options{BaseURL: u, HTTPClient: opts.HTTPClient, UserAgent: opts.UserAgent, Logger: opts.Logger})
			if err != nil {
				return Resolved{}, err
			}
			res.Credentials = NewStoredSource(TokenSourceOptions{Client: client, Logger: opts.Logger}, u, sec, store)
		}
	}
	res.Warning = strings.Join(warnings, "; ")
	return res, nil
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
// file. warning is set whenever the file is involved or the keyring failed. The error is
// ErrNoCredential when neither holds anything.
func (v *Vault) Load(ctx context.Context, url string) (sec Secret, store Store, warning string, err error) {
	var kerr error
	if !v.Insecure {
		sec, err = v.Keyring.Load(ctx, url)
		switch {
		case err == nil:
			return sec, v.Keyring, "", nil
		case errors.Is(err, ErrKeyringUnavailable):
			kerr = err
		case !errors.Is(err, ErrNoCredential):
			return Secret{}, nil, "", err
		}
	}
	sec, err = v.File.Load(ctx, url)
	switch {
	case err == nil:
		return sec, v.File, v.fileWarning("using the credential in", kerr), nil
	case errors.Is(err, ErrNoCredential) && kerr != nil:
		return Secret{}, nil, kerr.Error(), ErrNoCredential
	default:
		return Secret{}, nil, "", err
	}
}

// Save stores sec for url and returns the Store that took it. It uses the keyring unless
// Insecure or the keyring is unreachable, and removes any copy for url from the other
// store so the two never disagree. warning is set whenever the file was used.
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
		if !errors.Is(err, ErrKeyringUnavailable) {
			return nil, "", err
		}
		kerr = err
	}
	if err := v.File.Save(ctx, url, sec); err != nil {
		return nil, "", err
	}
	if v.Insecure {
		// A keyring entry would shadow the file; best effort, the keyring may be absent.
		_ = v.Keyring.Delete(ctx, url)
	}
	return v.File, v.fileWarning("stored the credential in", kerr), nil
}

// Delete removes url's entry from both stores and returns the sources it removed it from.
// A keyring that cannot be reached is reported in warning, not as an error, so logout
// still cleans the file.
func (v *Vault) Delete(ctx context.Context, url string) (removed []string, warning string, err error) {
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

func (v *Vault) fileWarning(what string, kerr error) string {
	if kerr != nil {
		return fmt.Sprintf("no usable system keyring (%v); %s the plain-text file %s (readable only by you)", kerr, what, v.File.Path)
	}
	return fmt.Sprintf("%s the plain-text file %s (readable only by you), not the system keyring", what, v.File.Path)
}
