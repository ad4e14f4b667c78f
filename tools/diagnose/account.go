package diagnose

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// AccountVerdict is what GET /v3/users/me said about the credential.
type AccountVerdict int

// Account verdicts.
const (
	Accepted      AccountVerdict = iota
	NeedsLogin                   // R2R requires a credential and there is none
	Rejected                     // R2R turned the credential down (401; a login with an unknown email)
	Forbidden                    // 403: the account exists but may not act (inactive, unverified)
	NoAnswer                     // R2R did not answer, also while logging in or refreshing
	AccountFailed                // anything else
)

// Account is the answer to GET /v3/users/me.
type Account struct {
	User    *r2r.User // when accepted
	Verdict AccountVerdict
	Err     error
	// Message is R2R's answer for reports: "401 Incorrect email or password", prefixed by
	// the operation ("login: …") when the credential could not be applied; else Err's text.
	Message string
	// Status is R2R's HTTP status behind the verdict (the login's or refresh's when the
	// credential could not be applied); 0 when R2R did not answer or nothing was sent.
	Status int
	// Credential is true when the call was never sent because the credential could not be
	// applied: a password login or token refresh failed (the verdict is R2R's answer to that).
	Credential bool
	// UnknownAccount is true when R2R knows no account with the credential's email (a
	// password login answered 404).
	UnknownAccount bool
	// Latency is how long the authenticated request took (a login or refresh included).
	Latency time.Duration
}

// CheckAccount sends GET /v3/users/me within timeout with c's credential; R2R's 401 means
// a login is needed when that credential says it came from nowhere (auth.OriginOf).
func CheckAccount(ctx context.Context, c *r2r.Client, timeout time.Duration) Account {
	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	u, err := c.Me(uctx)
	took := time.Since(start)
	if err == nil {
		return Account{User: u, Verdict: Accepted, Latency: took}
	}
	a := Account{Err: err, Verdict: AccountFailed, Message: err.Error(), Latency: took}
	// A failed login or refresh comes back as an *r2r.Error that matches only
	// r2r.ErrCredentials; what R2R said to the login is inside its CredentialError.
	var cause error = err
	if ce, ok := errors.AsType[*r2r.CredentialError](err); ok {
		a.Credential, cause = true, ce
		if ce.Err != nil {
			a.Message = ce.Err.Error() // what could not be applied, without the call and identity around it
		}
	}
	re, _ := errors.AsType[*r2r.Error](cause)
	if re != nil {
		a.Status, a.Message = re.StatusCode, re.Error()
		if re.StatusCode != 0 {
			a.Message = strings.TrimSpace(fmt.Sprintf("%d %s", re.StatusCode, re.Message))
			if a.Credential {
				a.Message = re.Op + ": " + a.Message
			}
		}
	}
	switch {
	case errors.Is(cause, r2r.ErrUnauthorized) && auth.OriginOf(c.Credentials()).Source.None():
		a.Verdict = NeedsLogin
	case errors.Is(cause, r2r.ErrUnauthorized):
		a.Verdict = Rejected
	case errors.Is(cause, r2r.ErrForbidden):
		a.Verdict = Forbidden
	case a.Credential && errors.Is(cause, r2r.ErrNotFound):
		a.Verdict, a.UnknownAccount = Rejected, true
	case re != nil && re.StatusCode == 0:
		a.Verdict = NoAnswer
	}
	return a
}

// Problem words a credential R2R did not accept: what happened (a clause, starting lower
// case) and what to do (a sentence; "" when what already says it). credential names it for people with its source
// ("API key key_ab… (from env R2R_API_KEY)"); source and email are where it came from and
// the account it names.
func (a Account) Problem(credential string, source auth.Source, email string) (what, fix string) {
	msg := a.Message
	switch {
	case errors.Is(a.Err, auth.ErrSessionExpired):
		// The verdict names the one thing to do: no fix is added to it.
		if se, ok := errors.AsType[*auth.SessionExpiredError](a.Err); ok {
			return se.Error(), ""
		}
		return a.Err.Error(), ""
	case a.Verdict == NeedsLogin:
		return "R2R requires authentication and no credential was found: " + msg, source.Fix()
	case a.Verdict == Rejected && a.UnknownAccount:
		return fmt.Sprintf("R2R has no account %s (the email from %s): %s", email, source, msg), source.Fix()
	case a.Verdict == Rejected:
		return fmt.Sprintf("R2R rejected the %s: %s", credential, msg), source.Fix()
	case a.Verdict == Forbidden:
		return fmt.Sprintf("R2R refused the %s: %s", credential, msg),
			"Ask the R2R admin to activate or verify the account, or run `r2r-mcp login` with another one."
	case a.Verdict == NoAnswer:
		return "R2R stopped answering: " + msg, "Check that R2R is still running."
	case a.Credential && a.Status == 0:
		// Nothing reached R2R: the credential itself could not be applied.
		return fmt.Sprintf("the %s could not be used: %s", credential, msg), source.Fix()
	}
	return "GET /v3/users/me failed: " + msg, "Check R2R's logs."
}
