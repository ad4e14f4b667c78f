package auth

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zalando/go-keyring"
)

// KeyringService is the service name of every r2r-mcp keyring entry; the account is the
// normalised R2R base URL, so there is one entry per R2R instance.
const KeyringService = "r2r-mcp"

// DefaultKeyringTimeout bounds every keyring call: a locked keyring waiting for a prompt
// nobody answers, or a hung D-Bus, must not hang serve.
const DefaultKeyringTimeout = 3 * time.Second

var (
	// ErrKeyringUnavailable matches every error meaning "no usable keyring" (no Secret
	// Service, D-Bus failure, locked collection, timeout), as opposed to ErrNoCredential.
	ErrKeyringUnavailable = errors.New("system keyring unavailable")
	// ErrKeyringTimeout is returned when a keyring call does not finish in time. The
	// keyring exists but is slow: typically it waits for the user to answer an unlock or
	// permission prompt. It also matches ErrKeyringUnavailable.
	ErrKeyringTimeout = errors.New("system keyring did not answer in time")
	// ErrNoKeyring matches the errors that mean there is no keyring at all on this machine:
	// no D-Bus session bus, no Secret Service on it, or a platform go-keyring does not
	// support. Only then may a secret go to the plain-text file without being asked for
	// (Vault.Save). It also matches ErrKeyringUnavailable.
	ErrNoKeyring = errors.New("no system keyring on this machine")
)

// Keyring is the part of an OS keyring r2r-mcp uses. Get returns go-keyring's
// keyring.ErrNotFound when there is no entry. An implementation reports "there is no
// keyring at all" with an error matching ErrNoKeyring; SystemKeyring classifies
// go-keyring's and D-Bus's errors that way.
type Keyring interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// SystemKeyring is the OS keyring through zalando/go-keyring (macOS Keychain, Windows
// Credential Manager, Secret Service on Linux/BSD). Tests switch it to memory with
// keyring.MockInit.
func SystemKeyring() Keyring { return systemKeyring{} }

type systemKeyring struct{}

// mockedKeyring is set by MockKeyring: the session bus check reads the real environment
// and must not stand between tests and go-keyring's in-memory mock.
var mockedKeyring atomic.Bool

// MockKeyring switches SystemKeyring to go-keyring's in-memory mock (keyring.MockInit),
// for tests. It is process-wide.
func MockKeyring() {
	keyring.MockInit()
	mockedKeyring.Store(true)
}

// MockKeyringWithError makes every SystemKeyring call fail with err
// (keyring.MockInitWithError), for tests of the no-keyring fallback. It is process-wide.
func MockKeyringWithError(err error) {
	keyring.MockInitWithError(err)
	mockedKeyring.Store(true)
}

func (systemKeyring) Get(service, account string) (string, error) {
	if err := busCheck(); err != nil {
		return "", classify(err)
	}
	v, err := keyring.Get(service, account)
	return v, classify(err)
}

func (systemKeyring) Set(service, account, secret string) error {
	if err := busCheck(); err != nil {
		return classify(err)
	}
	return classify(keyring.Set(service, account, secret))
}

func (systemKeyring) Delete(service, account string) error {
	if err := busCheck(); err != nil {
		return classify(err)
	}
	return classify(keyring.Delete(service, account))
}

// noKeyringError marks a backend error that means "no keyring at all" (ErrNoKeyring),
// keeping the backend's text and chain.
type noKeyringError struct{ err error }

func (e *noKeyringError) Error() string        { return e.err.Error() }
func (e *noKeyringError) Unwrap() error        { return e.err }
func (e *noKeyringError) Is(target error) bool { return target == ErrNoKeyring }

// classify marks err as ErrNoKeyring when it means there is no keyring on this machine.
func classify(err error) error {
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return err
	}
	if errors.Is(err, keyring.ErrUnsupportedPlatform) || noKeyring(err) {
		return &noKeyringError{err}
	}
	return err
}

func busCheck() error {
	if mockedKeyring.Load() {
		return nil
	}
	return checkSessionBus()
}

// KeyringError is a keyring failure other than "not found". It matches
// ErrKeyringUnavailable, and ErrKeyringTimeout when that was the cause.
type KeyringError struct {
	Op  string // "read", "write", "delete"
	Err error
}

func (e *KeyringError) Error() string {
	return fmt.Sprintf("system keyring %s failed: %v", e.Op, e.Err)
}
func (e *KeyringError) Unwrap() error        { return e.Err }
func (e *KeyringError) Is(target error) bool { return target == ErrKeyringUnavailable }

// KeyringStore keeps one Secret per R2R URL in a Keyring, every call bounded by Timeout.
type KeyringStore struct {
	Keyring Keyring       // nil = SystemKeyring()
	Timeout time.Duration // 0 = DefaultKeyringTimeout
}

// Source is the credential source name of this store.
func (s *KeyringStore) Source() Source { return SourceKeyring }

// Load returns the Secret stored for url, ErrNoCredential, or a *KeyringError.
func (s *KeyringStore) Load(ctx context.Context, url string) (Secret, error) {
	raw, err := withTimeout(ctx, s.timeout(), func() (string, error) {
		return s.keyring().Get(KeyringService, url)
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return Secret{}, ErrNoCredential
	}
	if err != nil {
		return Secret{}, s.wrap("read", err)
	}
	return decodeSecret(raw)
}

// Save stores sec for url, replacing what was there.
func (s *KeyringStore) Save(ctx context.Context, url string, sec Secret) error {
	raw, err := encodeSecret(sec)
	if err != nil {
		return err
	}
	_, err = withTimeout(ctx, s.timeout(), func() (struct{}, error) {
		return struct{}{}, s.keyring().Set(KeyringService, url, raw)
	})
	if err != nil {
		return s.wrap("write", err)
	}
	return nil
}

// Delete removes the entry for url; ErrNoCredential when there was none.
func (s *KeyringStore) Delete(ctx context.Context, url string) error {
	_, err := withTimeout(ctx, s.timeout(), func() (struct{}, error) {
		return struct{}{}, s.keyring().Delete(KeyringService, url)
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNoCredential
	}
	if err != nil {
		return s.wrap("delete", err)
	}
	return nil
}

func (s *KeyringStore) wrap(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &KeyringError{Op: op, Err: err}
}

func (s *KeyringStore) keyring() Keyring {
	if s.Keyring == nil {
		return SystemKeyring()
	}
	return s.Keyring
}

func (s *KeyringStore) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultKeyringTimeout
	}
	return s.Timeout
}

// withTimeout runs f in a goroutine and gives up after d or when ctx ends. A keyring call
// cannot be cancelled, so on timeout the goroutine is left to finish on its own; the
// buffered channel lets it exit whenever the backend returns.
func withTimeout[T any](ctx context.Context, d time.Duration, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var zero T
	select {
	case r := <-done:
		return r.v, r.err
	case <-timer.C:
		return zero, ErrKeyringTimeout
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
