package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

func TestPasswordLoginCreatesAPIKey(t *testing.T) {
	srv, c := newEmulator(t)
	uid := srv.CreateUser("dev@example.com", "pw-123", false)
	ctx := context.Background()
	res, err := PasswordLogin(ctx, c, "dev@example.com", "pw-123", "r2r-mcp@box", "desc")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Secret
	if s.Kind != KindAPIKey || s.UserID != uid || s.Email != "dev@example.com" || s.KeyID == "" || s.CreatedAt.IsZero() || res.Fallback != "" {
		t.Fatalf("secret %v fallback %q", s, res.Fallback)
	}
	if s.Secret == "pw-123" || PublicKeyOf(s.Secret) == "" {
		t.Fatalf("stored secret is not an API key")
	}
	// The key exists on the server under this machine's name and works.
	keys, err := c.WithCredentials(r2r.APIKey(s.Secret)).ListAPIKeys(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, k := range keys {
		if k.KeyID == s.KeyID && k.Name == "r2r-mcp@box" && k.PublicKey == s.PublicKey() {
			found = true
		}
	}
	if !found {
		t.Errorf("key %s not listed as r2r-mcp@box: %+v", s.KeyID, keys)
	}
	if n := srv.Count(routeMe); n != 2 {
		t.Errorf("GET /users/me calls = %d, want 2 (token, then the new key)", n)
	}

	outcome, err := Revoke(ctx, c, s)
	if err != nil || outcome != RevokedKey {
		t.Fatalf("Revoke = %q, %v", outcome, err)
	}
	if _, err := c.WithCredentials(r2r.APIKey(s.Secret)).Me(ctx); !errors.Is(err, r2r.ErrUnauthorized) {
		t.Errorf("revoked key still works: %v", err)
	}
}

func TestPasswordLoginFallsBackToRefreshToken(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv, c := newEmulator(t)
			srv.CreateUser("dev@example.com", "pw", false)
			srv.ForceStatus(routeNewKey, status, 1)
			res, err := PasswordLogin(context.Background(), c, "dev@example.com", "pw", "n", "d")
			if err != nil {
				t.Fatal(err)
			}
			if res.Secret.Kind != KindRefreshToken || res.Fallback == "" || res.Secret.KeyID != "" {
				t.Fatalf("got %v fallback %q", res.Secret, res.Fallback)
			}
			// The stored refresh token is live.
			if _, err := c.RefreshToken(context.Background(), res.Secret.Secret); err != nil {
				t.Errorf("refresh token unusable: %v", err)
			}
		})
	}
	// A 500 is R2R failing just now, not R2R lacking API keys: retrying is the answer, not
	// a silent downgrade to a rotating refresh token.
	for _, status := range []int{http.StatusBadRequest, http.StatusInternalServerError, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprintf("%d is an error", status), func(t *testing.T) {
			srv, c := newEmulator(t)
			srv.CreateUser("dev@example.com", "pw", false)
			srv.ForceStatus(routeNewKey, status, 1)
			res, err := PasswordLogin(context.Background(), c, "dev@example.com", "pw", "n", "d")
			var le *LoginError
			var re *r2r.Error
			if !errors.As(err, &le) || le.Step != "create API key" || !errors.As(err, &re) || re.StatusCode != status {
				t.Fatalf("got %v %v", res.Secret, err)
			}
		})
	}
}

func TestPasswordLoginFailures(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "right", false)
	ctx := context.Background()
	tests := []struct {
		name, email, password string
		status                int
		message               string
	}{
		{"wrong password", "dev@example.com", "wrong", http.StatusUnauthorized, "Incorrect email or password"},
		{"unknown email", "nobody@example.com", "right", http.StatusNotFound, "User not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PasswordLogin(ctx, c, tt.email, tt.password, "n", "d")
			var le *LoginError
			var re *r2r.Error
			if !errors.As(err, &le) || le.Step != "log in" || !errors.As(err, &re) || re.StatusCode != tt.status || re.Message != tt.message {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv.Down(true)
		defer srv.Down(false)
		_, err := PasswordLogin(ctx, c, "dev@example.com", "right", "n", "d")
		var re *r2r.Error
		if !errors.As(err, &re) || re.StatusCode != 0 || !errors.Is(err, r2r.ErrUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
	if n := srv.Count(routeNewKey); n != 0 {
		t.Errorf("keys created on failed logins: %d", n)
	}
}

// rejectKeyTransport stands between the client and the emulator: it answers 401 to
// GET /v3/users/me sent with an API key (a new key R2R does not accept yet) and records
// whether each DELETE carried a deadline and a live context.
type rejectKeyTransport struct {
	next http.RoundTripper

	mu      sync.Mutex
	deletes []deleteSeen
}

type deleteSeen struct {
	deadline  bool
	cancelled bool
}

func (rt *rejectKeyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.URL.Path == "/v3/users/me" && req.Header.Get("X-API-Key") != "" {
		body := `{"detail":{"message":"Invalid API key","error_type":"unauthorized"}}`
		return &http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
	if req.Method == http.MethodDelete {
		_, ok := req.Context().Deadline()
		rt.mu.Lock()
		rt.deletes = append(rt.deletes, deleteSeen{deadline: ok, cancelled: req.Context().Err() != nil})
		rt.mu.Unlock()
	}
	return rt.next.RoundTrip(req)
}

func TestPasswordLoginDeletesAKeyThatDoesNotWork(t *testing.T) {
	srv := r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true})
	uid := srv.CreateUser("dev@example.com", "pw", false)
	rt := &rejectKeyTransport{next: http.DefaultTransport}
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = PasswordLogin(context.Background(), c, "dev@example.com", "pw", "n", "d")
	var le *LoginError
	if !errors.As(err, &le) || le.Step != "check API key" || !errors.Is(err, r2r.ErrUnauthorized) {
		t.Fatalf("got %v", err)
	}
	rt.mu.Lock()
	deletes := rt.deletes
	rt.mu.Unlock()
	// The clean-up runs with a deadline of its own (the caller's context had none), so a
	// stuck R2R cannot hang login.
	if len(deletes) != 1 || !deletes[0].deadline || deletes[0].cancelled || srv.Count(routeDelKey) != 1 {
		t.Fatalf("deletes %+v, emulator saw %d", deletes, srv.Count(routeDelKey))
	}
	tok := loginPair(t, c, "dev@example.com", "pw").AccessToken.Token
	keys, err := c.WithCredentials(r2r.Bearer(tok)).ListAPIKeys(context.Background(), uid)
	if err != nil || len(keys) != 0 {
		t.Errorf("keys left on the server: %+v, %v", keys, err)
	}
}

func TestAPIKeyLoginAndRevoke(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	ctx := context.Background()
	made, err := PasswordLogin(ctx, c, "dev@example.com", "pw", "made-elsewhere", "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := APIKeyLogin(ctx, c, made.Secret.Secret)
	if err != nil {
		t.Fatal(err)
	}
	if res.Secret.Kind != KindAPIKey || res.Secret.Email != "dev@example.com" || res.Secret.KeyID != "" {
		t.Fatalf("got %v", res.Secret)
	}
	// A key the user supplied is not revoked.
	if outcome, err := Revoke(ctx, c, res.Secret); err != nil || outcome != NotRevocable {
		t.Fatalf("Revoke = %q, %v", outcome, err)
	}
	if srv.Count(routeDelKey) != 0 {
		t.Error("user-supplied key deleted")
	}
	if _, err := c.WithCredentials(r2r.APIKey(made.Secret.Secret)).Me(ctx); err != nil {
		t.Errorf("user-supplied key stopped working: %v", err)
	}

	_, err = APIKeyLogin(ctx, c, "key_bogus.nothing")
	var le *LoginError
	if !errors.As(err, &le) || le.Step != "check API key" || !errors.Is(err, r2r.ErrUnauthorized) {
		t.Fatalf("bad key: %v", err)
	}
	if strings.Contains(err.Error(), "nothing") {
		t.Errorf("key in error: %v", err)
	}
}

func TestRevokeRefreshToken(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	ctx := context.Background()
	tok := loginPair(t, c, "dev@example.com", "pw").RefreshToken.Token
	outcome, err := Revoke(ctx, c, Secret{Kind: KindRefreshToken, Secret: tok})
	if err != nil || outcome != RevokedToken {
		t.Fatalf("Revoke = %q, %v", outcome, err)
	}
	if _, err := c.RefreshToken(ctx, tok); !errors.Is(err, r2r.ErrUnauthorized) {
		t.Errorf("revoked refresh token still works: %v", err)
	}
}
