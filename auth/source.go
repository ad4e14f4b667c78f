package auth

// Source is where a credential came from, as Resolved.Source and LazyCredentials.Source
// report it (one of the Source* constants or "file <path>"), with the advice that depends
// on it: every command and tool words a rejected credential's next step through Fix, so
// status, doctor and the tools' errors agree.
type Source string

// FromEnv reports whether the credential came from the environment (R2R_API_KEY or
// R2R_EMAIL/R2R_PASSWORD). The environment overrides whatever login stores, so such a
// credential is fixed where the variables are set.
func (s Source) FromEnv() bool { return s == SourceEnvAPIKey || s == SourceEnvPassword }

// None reports whether there is no credential ("" counts as none).
func (s Source) None() bool { return s == "" || s == SourceNone }

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
