package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
)

// authEnv is what login and logout touch besides the IO streams; tests replace parts of it.
type authEnv struct {
	// ConfigDir is where config.json and the fallback credentials.json live;
	// "" = auth.DefaultConfigDir(deps.Getenv).
	ConfigDir string
	// Keyring is the OS keyring; nil = auth.SystemKeyring().
	Keyring auth.Keyring
	// KeyringTimeout bounds each keyring call; 0 = auth.DefaultKeyringTimeout, except in
	// login and logout, where 0 = interactiveKeyringTimeout.
	KeyringTimeout time.Duration
	// HTTPClient talks to R2R; nil = the r2r package's shared client.
	HTTPClient *http.Client
	// NoticeDir keeps the markers of standing warnings already said today;
	// "" = auth.NoticeDir(deps.Getenv).
	NoticeDir string
}

func (e authEnv) noticeDir(getenv func(string) string) string {
	if e.NoticeDir != "" {
		return e.NoticeDir
	}
	return auth.NoticeDir(getenv)
}

func (e authEnv) configDir(getenv func(string) string) (string, error) {
	if e.ConfigDir != "" {
		return e.ConfigDir, nil
	}
	return auth.DefaultConfigDir(getenv)
}

func (e authEnv) client(deps Deps, url string) (*r2r.Client, error) {
	return r2r.New(r2r.Options{BaseURL: url, HTTPClient: e.HTTPClient, UserAgent: "r2r-mcp/" + deps.Build.Version})
}

// networkTimeout bounds the R2R calls of one login or logout (several round trips).
const networkTimeout = 2 * time.Minute

// interactiveKeyringTimeout bounds each keyring call of login and logout. The user is at
// the terminal and the keyring may first show an unlock or permission prompt, so it is
// far longer than serve's auth.DefaultKeyringTimeout.
const interactiveKeyringTimeout = 2 * time.Minute

func (e authEnv) interactiveKeyringTimeout() time.Duration {
	if e.KeyringTimeout > 0 {
		return e.KeyringTimeout
	}
	return interactiveKeyringTimeout
}

// keyringTimeoutError is the error of a login or logout whose keyring did not answer
// within wait. next says what to do and what was (not) done.
func keyringTimeoutError(wait time.Duration, next string) error {
	return fmt.Errorf("the system keyring did not answer within %s (it may be locked, waiting for you to unlock it "+
		"or to allow r2r-mcp). %s", wait, next)
}

// loginKeyringAdvice is what to do when login cannot use the keyring.
const loginKeyringAdvice = "Unlock it and retry, or pass --insecure-storage to use a plain-text file instead."

// storeError explains why login could not store the credential. Only a machine without
// any keyring falls back to the file (auth.Vault.Save); every other keyring failure lands
// here.
func storeError(err error, wait time.Duration, outcome string) error {
	switch {
	case errors.Is(err, auth.ErrKeyringTimeout):
		return keyringTimeoutError(wait, loginKeyringAdvice+" "+outcome)
	case errors.Is(err, auth.ErrKeyringUnavailable):
		return fmt.Errorf("could not store the credential in the system keyring: %v. %s %s", err, loginKeyringAdvice, outcome)
	}
	return fmt.Errorf("could not store the credential: %v. Retry, or pass --insecure-storage. %s", err, outcome)
}

// maxSecretBytes caps what --password-stdin and --api-key-stdin read.
const maxSecretBytes = 64 << 10

// terminalFd returns the file descriptor of r when it is a terminal.
func terminalFd(r io.Reader) (int, bool) {
	f, ok := r.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// readLine reads one line from r a byte at a time, so nothing after the newline is
// consumed (a later password read on the same terminal gets its own input).
func readLine(r io.Reader) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < maxSecretBytes {
		n, err := r.Read(one)
		if n == 1 {
			if one[0] == '\n' {
				break
			}
			b = append(b, one[0])
		}
		if err == io.EOF {
			if len(b) == 0 {
				return "", io.ErrUnexpectedEOF
			}
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimRight(string(b), "\r"), nil
}

// prompt writes question to w and reads a line from in; def is returned for an empty answer.
func prompt(in io.Reader, w io.Writer, question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(w, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(w, "%s: ", question)
	}
	s, err := readLine(in)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", strings.ToLower(question), err)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return def, nil
	}
	return s, nil
}

// promptSecret asks for a secret on the terminal fd with echo off.
func promptSecret(fd int, w io.Writer, question string) (string, error) {
	fmt.Fprintf(w, "%s: ", question)
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(w) // the user's Enter was not echoed either
	if err != nil {
		return "", fmt.Errorf("read %s: %w", strings.ToLower(question), err)
	}
	return string(b), nil
}

// readSecretStdin reads a secret piped to stdin: everything up to EOF, without the
// trailing newline (and, for keys, surrounding spaces).
func readSecretStdin(in io.Reader, what string) (string, error) {
	b, err := io.ReadAll(io.LimitReader(in, maxSecretBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the %s from stdin: %w", what, err)
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("the %s on stdin is longer than %d bytes", what, maxSecretBytes)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return "", fmt.Errorf("no %s on stdin", what)
	}
	return string(b), nil
}

// explainLoginError turns a failed login step into a message that names the cause and
// the next step. It never includes the password or key.
func explainLoginError(url, email string, err error) error {
	var le *auth.LoginError
	step := ""
	if errors.As(err, &le) {
		step = le.Step
	}
	var re *r2r.Error
	errors.As(err, &re)
	msg := ""
	if re != nil {
		msg = re.Message
	}
	const nothing = " Nothing was stored."
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("login cancelled." + nothing)
	case re != nil && re.StatusCode == 0:
		what, fix := diagnose.NotAnswering(url, "", re.Err)
		return fmt.Errorf("%s. %s%s", what, fix, nothing)
	case errors.Is(err, r2r.ErrUnavailable):
		return fmt.Errorf("R2R at %s is unavailable right now (%d %s). Try again later.%s", url, re.StatusCode, msg, nothing)
	case step == "log in" && re != nil && re.StatusCode == http.StatusUnauthorized && strings.Contains(strings.ToLower(msg), "not verified"):
		return fmt.Errorf("the R2R account %s is not verified yet (R2R: %s). Verify it, then run r2r-mcp login again.%s", email, msg, nothing)
	case step == "log in" && re != nil && re.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("wrong password for %s at %s (R2R: %s). Run r2r-mcp login again.%s", email, url, msg, nothing)
	case step == "log in" && re != nil && re.StatusCode == http.StatusNotFound && strings.Contains(strings.ToLower(msg), "user not found"):
		return fmt.Errorf("there is no R2R account %s at %s (R2R: %s). Check the email, or ask the R2R admin to create the account.%s", email, url, msg, nothing)
	case re != nil && (re.StatusCode == http.StatusNotFound || re.StatusCode == http.StatusMethodNotAllowed):
		return fmt.Errorf("%s does not look like an R2R v3 server (%d on %s %s). Check the URL.%s", url, re.StatusCode, re.Method, re.Path, nothing)
	case re != nil && re.StatusCode >= 500:
		return fmt.Errorf("R2R at %s failed while trying to %s (%d %s). Try again in a moment; if it keeps failing, check R2R's logs.%s",
			url, stepOr(step, "log in"), re.StatusCode, msg, nothing)
	case step == "check API key" && re != nil && re.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("R2R at %s rejected the API key (%s). Check the key, or run r2r-mcp login without --api-key-stdin to have one created.%s", url, msg, nothing)
	}
	return fmt.Errorf("login to %s failed: %v.%s", url, err, nothing)
}

func stepOr(step, def string) string {
	if step == "" {
		return def
	}
	return step
}

// storageName says where a credential went, for people.
func storageName(store auth.Store) string {
	if store == nil {
		return "nowhere"
	}
	src := store.Source()
	if path, ok := src.File(); ok {
		return path + " (plain-text file)"
	}
	if src == auth.SourceKeyring {
		return "the system keyring"
	}
	return string(src)
}

// describeSecret names a stored credential without revealing it: "API key key_ab…",
// "R2R session", or "credential" for any other kind.
func describeSecret(sec auth.Secret) string {
	switch sec.Kind {
	case auth.KindAPIKey:
		return credentialText(sec.Kind, auth.ShortKey(sec.Secret), "")
	case auth.KindRefreshToken:
		return credentialText(sec.Kind, "", "")
	}
	return "credential"
}
