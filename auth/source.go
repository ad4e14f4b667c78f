package auth

import (
	"fmt"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Source is where a credential came from (one of the Source* constants, or FileSource's
// "file <path>"), with the advice that depends on it: every command and tool words a
// rejected credential's next step through Fix, so status, doctor and the tools' errors
// agree. A credential carries its Source in its Origin; nobody else keeps one.
type Source string

// Credential sources (untyped, so that reports and tests compare them with plain strings).
const (
	SourceEnvAPIKey   = "env R2R_API_KEY"
	SourceEnvPassword = "env R2R_EMAIL/R2R_PASSWORD"
	SourceKeyring     = "keyring"
	// SourceKeyringPending is the source of ResolveLazy's credential while the stored
	// credential has not been read yet; its Origin reports the real source once it has.
	SourceKeyringPending = "keyring (not read yet)"
	SourceNone           = "none"
)

// sourceFilePrefix starts the source of a credential read from the file: "file <path>".
const sourceFilePrefix = "file "

// FileSource is the source of a credential read from the plain-text file at path.
func FileSource(path string) Source { return Source(sourceFilePrefix + path) }

// File returns the path of the plain-text file s names, and whether s is a file at all.
func (s Source) File() (path string, ok bool) { return strings.CutPrefix(string(s), sourceFilePrefix) }

// FromEnv reports whether the credential came from the environment (R2R_API_KEY or
// R2R_EMAIL/R2R_PASSWORD). The environment overrides whatever login stores, so such a
// credential is fixed where the variables are set.
func (s Source) FromEnv() bool { return s == SourceEnvAPIKey || s == SourceEnvPassword }

// None reports whether there is no credential ("" counts as none).
func (s Source) None() bool { return s == "" || s == SourceNone }

// Keyring reports whether the credential is (or, not read yet, may be) in the keyring.
func (s Source) Keyring() bool { return s == SourceKeyring || s == SourceKeyringPending }

// Place names where a stored credential lives, for messages: a keyring not read yet is the
// keyring.
func (s Source) Place() string {
	if s == SourceKeyringPending {
		return SourceKeyring
	}
	return string(s)
}

// Fix is the next step, as a sentence, when R2R rejected a credential from s or it could
// not be used; for no credential at all, how to get one.
func (s Source) Fix() string {
	switch {
	case s == SourceEnvAPIKey:
		return "Fix R2R_API_KEY where it is set (for serve: in the MCP client's configuration), or unset it and run `r2r-mcp login`."
	case s == SourceEnvPassword:
		return "Fix R2R_EMAIL/R2R_PASSWORD where they are set (for serve: in the MCP client's configuration), " +
			"or unset them and run `r2r-mcp login`."
	case s.None():
		return "Run `r2r-mcp login` in a terminal (or set R2R_API_KEY)."
	}
	return "Run `r2r-mcp login` in a terminal to store a new credential (the stored one was revoked, expired, or is for another R2R)."
}

// Origin is a credential's account of itself: where it came from and what the user should
// know about it. Every credential Resolve and ResolveLazy return carries one (see
// OriginOf); a credential read on first use (LazyCredentials) reports it as known so far.
type Origin struct {
	Source Source
	// Warnings are the individual warnings, in order, each with its kind.
	Warnings []Warning
}

// Warning is the texts of Warnings joined with "; ", for the user (stderr, r2r_status);
// "" = nothing to say.
func (o Origin) Warning() string { return warningText(o.Warnings) }

// warn is o with ws added after its warnings (o's own slice is never written to).
func (o Origin) warn(ws ...Warning) Origin {
	o.Warnings = append(o.Warnings[:len(o.Warnings):len(o.Warnings)], ws...)
	return o
}

// Described is a credential that says where it came from.
type Described interface {
	r2r.Credentials
	Origin() Origin
}

// OriginOf asks c where it came from. A credential built outside this package that does
// not say (r2r.APIKey in a test) has the zero Origin, whose Source counts as none.
func OriginOf(c r2r.Credentials) Origin {
	if d, ok := c.(Described); ok {
		return d.Origin()
	}
	return Origin{}
}

// StartOrigin is what a server's start-up log line reports of c: OriginOf(c), except that
// a stored credential read in the background (LazyCredentials) reports only the
// environment's warnings, because its read logs its own when it happens; so each warning
// is logged once whichever comes first.
func StartOrigin(c r2r.Credentials) Origin {
	if l, ok := c.(*LazyCredentials); ok {
		o := l.Origin()
		o.Warnings = l.env
		return o
	}
	return OriginOf(c)
}

// fixed is a credential that cannot renew itself (an API key, none) with its Origin. A
// renewable one (TokenSource, LazyCredentials) carries its Origin itself, so that
// wrapping never hides r2r.Refresher from the client.
type fixed struct {
	r2r.Credentials
	origin Origin
}

// withOrigin gives c, which cannot renew itself, its origin.
func withOrigin(c r2r.Credentials, o Origin) r2r.Credentials { return fixed{Credentials: c, origin: o} }

// Origin says where the credential came from.
func (f fixed) Origin() Origin { return f.origin }

// String keeps secrets out of %v: the wrapped credential's own String.
func (f fixed) String() string { return fmt.Sprint(f.Credentials) }

// GoString keeps secrets out of %#v.
func (f fixed) GoString() string { return f.String() }
