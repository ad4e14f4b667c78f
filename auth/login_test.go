package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

func TestPasswordLoginStoresSession(t *testing.T) {
	srv, c := newEmulator(t)
	uid := srv.CreateUser("dev@example.com", "pw-123", false)
	ctx := context.Background()
	res, err := PasswordLogin(ctx, c, "dev@example.com", "pw-123")
	if err != nil {
		t.Fatal(err)
	}
	s := res.Secret
	if s.Kind != KindRefreshToken || s.UserID != uid || s.Email != "dev@example.com" || s.KeyID != "" || s.CreatedAt.IsZero() ||
		s.AccessToken == "" || s.Secret == "" {
		t.Fatalf("secret %v", s)
	}
	if strings.Contains(s.Secret+s.AccessToken, "pw-123") {
		t.Fatal("the password is stored")
	}
	// No API key: R2R 3.6.6 bcrypt-checks one on every request.
	if n := srv.Count(routeNewKey); n != 0 {
		t.Errorf("API keys created: %d", n)
	}
	if _, err := c.WithCredentials(r2r.Bearer(s.AccessToken)).Me(ctx); err != nil {
		t.Errorf("stored access token unusable: %v", err)
	}
	if _, err := c.RefreshToken(ctx, s.Secret); err != nil {
		t.Errorf("stored refresh token unusable: %v", err)
	}
}

// makeAPIKey creates an API key for email the way `r2r-mcp login` did before sessions,
// for tests of stored API keys (which keep working).
func makeAPIKey(t *testing.T, c *r2r.Client, email, password, name string) LoginResult {
	t.Helper()
	ctx := context.Background()
	tok := loginPair(t, c, email, password).AccessToken.Token
	withToken := c.WithCredentials(r2r.Bearer(tok))
	user, err := withToken.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	key, err := withToken.CreateAPIKey(ctx, user.ID, name, "test")
	if err != nil {
		t.Fatal(err)
	}
	return LoginResult{Secret: Secret{Kind: KindAPIKey, Secret: key.APIKey, UserID: user.ID, Email: user.Email, KeyID: key.KeyID}, User: user}
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
			_, err := PasswordLogin(ctx, c, tt.email, tt.password)
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
		_, err := PasswordLogin(ctx, c, "dev@example.com", "right")
		var re *r2r.Error
		if !errors.As(err, &re) || re.StatusCode != 0 || !errors.Is(err, r2r.ErrUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
	if n := srv.Count(routeNewKey); n != 0 {
		t.Errorf("keys created on failed logins: %d", n)
	}
}

func TestAPIKeyLoginAndRevoke(t *testing.T) {
	srv, c := newEmulator(t)
	srv.CreateUser("dev@example.com", "pw", false)
	ctx := context.Background()
	made := makeAPIKey(t, c, "dev@example.com", "pw", "made-elsewhere")
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
