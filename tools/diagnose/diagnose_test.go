package diagnose

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// healthAnswer is a HealthChecker that answers err.
type healthAnswer struct{ err error }

func (h healthAnswer) Health(context.Context) error { return h.err }

// TestHealthVerdicts: one classification and one wording of R2R's health for r2r_status,
// status and doctor.
func TestHealthVerdicts(t *testing.T) {
	refused := errors.New("dial tcp 127.0.0.1:7272: connect: connection refused")
	tests := []struct {
		name      string
		err       error
		verdict   HealthVerdict
		what, fix string
	}{
		{name: "healthy", verdict: Healthy},
		{name: "refused", err: &r2r.Error{Op: "health", Err: refused}, verdict: Unreachable,
			what: "cannot reach R2R at http://r2r:7272: dial tcp", fix: "Start R2R, or point r2r-mcp at it with --url, R2R_API_URL or r2r-mcp login --url URL (the URL now comes from env R2R_API_URL)."},
		{name: "no answer in time", err: &r2r.Error{Op: "health", Err: context.DeadlineExceeded}, verdict: Unreachable,
			what: "did not answer GET /v3/health within 2s", fix: "Start R2R"},
		{name: "an error that is no R2R error", err: refused, verdict: Unreachable, what: "connection refused", fix: "Start R2R"},
		{name: "failing", err: &r2r.Error{Op: "health", StatusCode: 503, Message: "db down"}, verdict: Failing,
			what: "R2R at http://r2r:7272 is not healthy: R2R health: 503", fix: "Check R2R's logs"},
		{name: "not R2R", err: &r2r.Error{Op: "health", StatusCode: 404}, verdict: Failing,
			what: "does not look like an R2R v3 server (404 on GET /v3/health)", fix: "Check the URL (from env R2R_API_URL)"},
		{name: "other answer", err: &r2r.Error{Op: "health", StatusCode: 401}, verdict: Failing,
			what: "GET http://r2r:7272/v3/health failed", fix: "Check the URL and that it is R2R."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := CheckHealth(context.Background(), healthAnswer{tt.err}, 2*time.Second)
			if h.Verdict != tt.verdict || h.Err != tt.err {
				t.Fatalf("verdict %q err %v, want %q", h.Verdict, h.Err, tt.verdict)
			}
			if tt.verdict == Healthy {
				return
			}
			what, fix := h.Problem("http://r2r:7272", "env R2R_API_URL")
			if !strings.Contains(what, tt.what) || !strings.Contains(fix, tt.fix) {
				t.Errorf("Problem = %q, %q; want %q, %q", what, fix, tt.what, tt.fix)
			}
		})
	}
}

// TestAccountProblems: the verdict on a credential R2R did not accept, and the fix for
// its source (auth.Source.Fix), worded once for status and doctor.
func TestAccountProblems(t *testing.T) {
	expired := &auth.SessionExpiredError{URL: "http://r2r:7272"}
	tests := []struct {
		name      string
		acct      Account
		source    string
		what, fix string
	}{
		{name: "no credential", acct: Account{Verdict: NeedsLogin, Message: "401 Authentication required"}, source: auth.SourceNone,
			what: "no credential was found: 401", fix: "Run `r2r-mcp login` in a terminal (or set R2R_API_KEY)."},
		{name: "env key rejected", acct: Account{Verdict: Rejected, Message: "401 Invalid API key"}, source: auth.SourceEnvAPIKey,
			what: "R2R rejected the API key key_ab… (from env R2R_API_KEY): 401", fix: "Fix R2R_API_KEY where it is set"},
		{name: "unknown email", acct: Account{Verdict: Rejected, UnknownAccount: true, Message: "login: 404 User not found"},
			source: auth.SourceEnvPassword, what: "R2R has no account a@example.com (the email from env R2R_EMAIL/R2R_PASSWORD)",
			fix: "Fix R2R_EMAIL/R2R_PASSWORD where they are set"},
		{name: "stored key revoked", acct: Account{Verdict: Rejected, Message: "401"}, source: auth.SourceKeyring,
			what: "R2R rejected the API key", fix: "to store a new credential"},
		{name: "session ended: the verdict says what to do", acct: Account{Err: expired, Verdict: Rejected}, source: auth.SourceKeyring,
			what: auth.SessionExpiredText("http://r2r:7272")},
		{name: "forbidden", acct: Account{Verdict: Forbidden, Message: "403 User is not verified"}, source: auth.SourceKeyring,
			what: "R2R refused the API key", fix: "Ask the R2R admin"},
		{name: "stopped answering", acct: Account{Verdict: NoAnswer, Message: "connection refused"}, source: auth.SourceKeyring,
			what: "R2R stopped answering: connection refused", fix: "Check that R2R is still running."},
		{name: "credential could not be applied", acct: Account{Verdict: AccountFailed, Credential: true, Message: "keyring locked"},
			source: auth.SourceKeyring, what: "could not be used: keyring locked", fix: "r2r-mcp login"},
		{name: "other failure", acct: Account{Verdict: AccountFailed, Message: "500 boom"}, source: auth.SourceKeyring,
			what: "GET /v3/users/me failed: 500 boom", fix: "Check R2R's logs."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			what, fix := tt.acct.Problem("API key key_ab… (from "+tt.source+")", auth.Source(tt.source), "a@example.com")
			if !strings.Contains(what, tt.what) || !strings.Contains(fix, tt.fix) || (tt.fix == "") != (fix == "") {
				t.Errorf("Problem = %q, %q; want %q, %q", what, fix, tt.what, tt.fix)
			}
		})
	}
}

func TestSentence(t *testing.T) {
	for _, tt := range []struct{ what, fix, want string }{
		{"cannot reach R2R at u: refused", "Start R2R.", "Cannot reach R2R at u: refused. Start R2R."},
		{"the session ended; log in again", "", "The session ended; log in again."},
	} {
		if got := Sentence(tt.what, tt.fix); got != tt.want {
			t.Errorf("Sentence(%q, %q) = %q, want %q", tt.what, tt.fix, got, tt.want)
		}
	}
}

// A verdict is one sentence with one full stop, also when R2R's own words end with one.
func TestSentenceEndsOnce(t *testing.T) {
	tests := []struct{ what, fix, want string }{
		{"R2R requires authentication and no credential was found: 401 No credentials provided.", "Run `r2r-mcp login`.",
			"R2R requires authentication and no credential was found: 401 No credentials provided. Run `r2r-mcp login`."},
		{"cannot reach R2R", "", "Cannot reach R2R."},
	}
	for _, tt := range tests {
		if got := Sentence(tt.what, tt.fix); got != tt.want {
			t.Errorf("Sentence(%q, %q) = %q, want %q", tt.what, tt.fix, got, tt.want)
		}
	}
}
