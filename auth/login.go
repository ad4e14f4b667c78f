package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// LoginResult is what a login obtained: the Secret to store and the user it acts as.
type LoginResult struct {
	Secret Secret
	User   *r2r.User
}

// LoginError says which step of a login failed, so the command can give a precise hint.
type LoginError struct {
	Step string // "log in", "check account", "check API key"
	Err  error
}

func (e *LoginError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *LoginError) Unwrap() error { return e.Err }

// PasswordLogin logs in as email and checks the account with GET /v3/users/me. The result
// is the R2R session (refresh token and access token, Kind KindRefreshToken); the password
// is used for these calls only. A session rather than an API key because R2R 3.6.6 checks
// an API key with bcrypt on every request (about half a second, holding its event loop),
// while a JWT costs milliseconds. c's own credentials are not used. Every call is bounded
// by ctx; pass one with a deadline.
func PasswordLogin(ctx context.Context, c *r2r.Client, email, password string) (LoginResult, error) {
	anon := c.WithCredentials(r2r.Anonymous())
	pair, err := anon.Login(ctx, email, password)
	got := time.Now()
	if err != nil {
		return LoginResult{}, &LoginError{Step: "log in", Err: err}
	}
	if pair.AccessToken.Token == "" || pair.RefreshToken.Token == "" {
		return LoginResult{}, &LoginError{Step: "log in", Err: errors.New("R2R returned no tokens")}
	}
	user, err := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token)).Me(ctx)
	if err != nil {
		return LoginResult{}, &LoginError{Step: "check account", Err: err}
	}
	return LoginResult{
		Secret: Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, AccessToken: pair.AccessToken.Token,
			ReceivedAt: got.UTC(), UserID: user.ID, Email: user.Email, CreatedAt: time.Now().UTC().Truncate(time.Second)},
		User: user,
	}, nil
}

// CleanupTimeout bounds a clean-up call to R2R that must run even after the caller's
// context ended (deleting a key that could not be checked or stored).
const CleanupTimeout = 15 * time.Second

// APIKeyLogin checks an API key the user supplied with GET /v3/users/me. The Secret has no
// KeyID: logout leaves a key it did not create alone.
func APIKeyLogin(ctx context.Context, c *r2r.Client, key string) (LoginResult, error) {
	user, err := c.WithCredentials(r2r.APIKey(key)).Me(ctx)
	if err != nil {
		return LoginResult{}, &LoginError{Step: "check API key", Err: err}
	}
	return LoginResult{
		Secret: Secret{Kind: KindAPIKey, Secret: key, UserID: user.ID, Email: user.Email,
			CreatedAt: time.Now().UTC().Truncate(time.Second)},
		User: user,
	}, nil
}

// Revocation outcomes of Revoke.
const (
	// RevokedKey: the API key was deleted on the server.
	RevokedKey = "revoked"
	// RevokedToken: the refresh token was rotated away (R2R invalidates a refresh token
	// when it is used) and the access token obtained with it was logged out when possible.
	RevokedToken = "invalidated"
	// NotRevocable: a key the user supplied; r2r-mcp leaves it valid on the server.
	NotRevocable = "kept"
)

// Revoke invalidates sec on the server: an API key r2r-mcp created is deleted (the key
// authenticates its own deletion); a session's refresh token is exchanged, which
// invalidates it, and both the access token obtained and the stored one are logged out. A key the user supplied is left alone. Every
// call is bounded by ctx; pass one with a deadline.
func Revoke(ctx context.Context, c *r2r.Client, sec Secret) (string, error) {
	switch sec.Kind {
	case KindAPIKey:
		if sec.KeyID == "" || sec.UserID == "" {
			return NotRevocable, nil
		}
		if err := c.WithCredentials(r2r.APIKey(sec.Secret)).DeleteAPIKey(ctx, sec.UserID, sec.KeyID); err != nil {
			return "", err
		}
		return RevokedKey, nil
	case KindRefreshToken:
		pair, err := c.WithCredentials(r2r.Anonymous()).RefreshToken(ctx, sec.Secret)
		if err != nil {
			return "", err
		}
		// POST /v3/users/logout blacklists an access token; best effort, they expire anyway.
		_ = c.WithCredentials(r2r.Bearer(pair.AccessToken.Token)).Logout(ctx)
		if sec.AccessToken != "" {
			_ = c.WithCredentials(r2r.Bearer(sec.AccessToken)).Logout(ctx)
		}
		return RevokedToken, nil
	}
	return "", fmt.Errorf("unknown credential kind %q", sec.Kind)
}
