package r2r_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// passwordCreds logs in on every Apply, like a password source whose login keeps failing.
type passwordCreds struct {
	c               *r2r.Client
	email, password string
	applied         atomic.Int32
}

func (p *passwordCreds) Apply(ctx context.Context, h http.Header) error {
	p.applied.Add(1)
	pair, err := p.c.Login(ctx, p.email, p.password)
	if err != nil {
		return err
	}
	h.Set("Authorization", "Bearer "+pair.AccessToken.Token)
	return nil
}

func (p *passwordCreds) Identity() string { return "password:test" }

// TestCredentialFailureIsNotTheCallsStatus: a login that fails with 404 "User not found"
// while applying credentials must not look like the document being missing, must not be
// retried, and must not count against R2R in the circuit breaker.
func TestCredentialFailureIsNotTheCallsStatus(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	breaker := r2r.NewBreaker(srv.URL, r2r.BreakerSettings{Failures: 2}, nil)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Middleware: r2r.Resilient(r2r.ResilienceOptions{
		Breaker: breaker, Retry: r2r.RetryPolicy{MaxRetries: 3, InitialInterval: time.Millisecond}})})
	if err != nil {
		t.Fatal(err)
	}
	creds := &passwordCreds{c: c, email: "nobody@example.com", password: "pw"}
	authed := c.WithCredentials(creds)

	for range 3 { // more than BreakerSettings.Failures
		_, err = authed.GetDocument(t.Context(), "9f3c2a52-0000-5000-8000-000000000000")
		e, ok := errors.AsType[*r2r.Error](err)
		if !ok {
			t.Fatalf("%T %v is not an *r2r.Error", err, err)
		}
		if e.Op != "get document" || e.StatusCode != 0 || e.Retryable() {
			t.Fatalf("error %+v (retryable %v)", e, e.Retryable())
		}
		if !errors.Is(err, r2r.ErrCredentials) {
			t.Fatalf("errors.Is(%v, ErrCredentials) = false", err)
		}
		for _, s := range []error{r2r.ErrNotFound, r2r.ErrUnavailable, r2r.ErrUnauthorized, r2r.ErrCircuitOpen} {
			if errors.Is(err, s) {
				t.Fatalf("errors.Is(%v, %v) = true", err, s)
			}
		}
		msg := err.Error()
		if !strings.Contains(msg, "applying credentials password:test") || !strings.Contains(msg, "User not found") ||
			strings.Contains(msg, "connection failed") {
			t.Fatalf("message %q", msg)
		}
	}
	// The login's own error stays reachable for diagnosis, through the CredentialError only.
	ce, ok := errors.AsType[*r2r.CredentialError](err)
	if !ok || ce.Identity != "password:test" || !errors.Is(ce, r2r.ErrCredentials) {
		t.Fatalf("CredentialError %+v", ce)
	}
	login, ok := errors.AsType[*r2r.Error](ce.Err)
	if !ok || login.Op != "login" || login.StatusCode != http.StatusNotFound || !errors.Is(ce, r2r.ErrNotFound) {
		t.Fatalf("login error %+v", login)
	}

	if n := srv.Count("GET /v3/documents/{id}"); n != 0 {
		t.Errorf("the call was sent %d times without credentials", n)
	}
	if n, applied := srv.Count("POST /v3/users/login"), creds.applied.Load(); n != 3 || applied != 3 {
		t.Errorf("logins %d, Apply calls %d; want 3 each (no retries)", n, applied)
	}
	if st := breaker.State(); st.State != "closed" || st.ConsecutiveFailures != 0 {
		t.Errorf("breaker %s after credential failures", st)
	}
}

// blockingCreds blocks in Apply until the call's context ends.
type blockingCreds struct{}

func (blockingCreds) Apply(ctx context.Context, _ http.Header) error {
	<-ctx.Done()
	return errors.New("login interrupted")
}
func (blockingCreds) Identity() string { return "blocking" }

func TestCancelledWhileApplyingCredentials(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Credentials: blockingCreds{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go cancel()
	_, err = c.Me(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, r2r.ErrCredentials) {
		t.Fatalf("err = %v; want a cancellation, not a credential failure", err)
	}
	if e, ok := errors.AsType[*r2r.Error](err); !ok || e.Op != "get current user" || e.Retryable() {
		t.Fatalf("err %#v", err)
	}
}

// deadlineCreds wait in Apply until the call's deadline and then say what they waited for.
type deadlineCreds struct{}

func (deadlineCreds) Apply(ctx context.Context, _ http.Header) error {
	<-ctx.Done()
	return errors.New("waited for another process's renewal")
}
func (deadlineCreds) Identity() string { return "waiting" }

// TestDeadlineWhileApplyingCredentials: a deadline that passes while the credential waits
// (for another process's renewal, say) is reported in the credential's words, as a call
// that was never sent, not as R2R failing to answer in time.
func TestDeadlineWhileApplyingCredentials(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{})
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Credentials: deadlineCreds{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = c.Me(ctx)
	if !errors.Is(err, r2r.ErrCredentials) || errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "waited for another process's renewal") {
		t.Fatalf("err = %v; want the credential's own words", err)
	}
	if n := len(srv.Counts()); n != 0 {
		t.Errorf("the call reached R2R: %v", srv.Counts())
	}
}

// TestUnsendableSecretIsACredentialError: a key or token with a line break never reaches
// Go's HTTP client (which would refuse it as if R2R were unreachable): it is a credential
// problem, not retried, and the breaker does not count it.
func TestUnsendableSecretIsACredentialError(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	breaker := r2r.NewBreaker(srv.URL, r2r.BreakerSettings{Failures: 2}, nil)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Middleware: r2r.Resilient(r2r.ResilienceOptions{
		Breaker: breaker, Retry: r2r.RetryPolicy{MaxRetries: 3, InitialInterval: time.Millisecond}})})
	if err != nil {
		t.Fatal(err)
	}
	for _, creds := range []r2r.Credentials{r2r.APIKey("key_abc\ndef.ghi"), r2r.Bearer("eyJ.a\r\n.b")} {
		for range 3 { // more than BreakerSettings.Failures
			_, err := c.WithCredentials(creds).Me(t.Context())
			if !errors.Is(err, r2r.ErrCredentials) || errors.Is(err, r2r.ErrUnavailable) || !strings.Contains(err.Error(), "line break") {
				t.Fatalf("Me = %v", err)
			}
		}
	}
	if st := breaker.State(); st.State != "closed" || st.ConsecutiveFailures != 0 {
		t.Errorf("breaker %s after unsendable credentials", st)
	}
	if n := len(srv.Counts()); n != 0 {
		t.Errorf("requests reached R2R: %v", srv.Counts())
	}
}
