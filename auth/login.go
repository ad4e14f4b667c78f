package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// LoginResult is what a login obtained: the Secret to store and the user it acts as.
type LoginResult struct {
	Secret Secret
	User   *r2r.User
	// Fallback is set when Secret is a refresh token because R2R could not create an API
	// key; it holds R2R's answer (never a secret).
	Fallback string
}

// LoginError says which step of a login failed, so the command can give a precise hint.
type LoginError struct {
	Step string // "log in", "check account", "create API key", "check API key"
	Err  error
}

func (e *LoginError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *LoginError) Unwrap() error { return e.Err }

// PasswordLogin logs in as email, checks the account with GET /v3/users/me and creates an
// API key named keyName for this machine, then checks that key with GET /v3/users/me too.
// The password is used for these calls only. When R2R cannot create API keys (403, 404 or
// 405 on that route) the result holds the login's refresh token instead, and Fallback says
// why; any other failure, a 500 included, is an error, so a passing R2R hiccup never
// silently trades a key for a rotating 7-day token. c's own credentials are not used.
// Every call is bounded by ctx; pass one with a deadline.
func PasswordLogin(ctx context.Context, c *r2r.Client, email, password, keyName, keyDescription string) (LoginResult, error) {
	anon := c.WithCredentials(r2r.Anonymous())
	pair, err := anon.Login(ctx, email, password)
	if err != nil {
		return LoginResult{}, &LoginError{Step: "log in", Err: err}
	}
	if pair.AccessToken.Token == "" || pair.RefreshToken.Token == "" {
		return LoginResult{}, &LoginError{Step: "log in", Err: errors.New("R2R returned no tokens")}
	}
	withToken := c.WithCredentials(r2r.Bearer(pair.AccessToken.Token))
	user, err := withToken.Me(ctx)
	if err != nil {
		return LoginResult{}, &LoginError{Step: "check account", Err: err}
	}
	now := time.Now().UTC().Truncate(time.Second)
	key, err := withToken.CreateAPIKey(ctx, user.ID, keyName, keyDescription)
	if err != nil {
		if !apiKeysUnsupported(err) {
			return LoginResult{}, &LoginError{Step: "create API key", Err: err}
		}
		return LoginResult{
			Secret: Secret{Kind: KindRefreshToken, Secret: pair.RefreshToken.Token, UserID: user.ID,
				Email: user.Email, CreatedAt: now},
			User:     user,
			Fallback: err.Error(),
		}, nil
	}
	if key.APIKey == "" {
		return LoginResult{}, &LoginError{Step: "create API key", Err: errors.New("R2R returned no key")}
	}
	sec := Secret{Kind: KindAPIKey, Secret: key.APIKey, UserID: user.ID, Email: user.Email,
		KeyID: key.KeyID, CreatedAt: now}
	if _, err := c.WithCredentials(r2r.APIKey(key.APIKey)).Me(ctx); err != nil {
		// Do not leave an unusable key behind; the token still works for the delete. It
		// runs even when ctx was cancelled, but within its own deadline.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupTimeout)
		_ = withToken.DeleteAPIKey(dctx, user.ID, key.KeyID)
		cancel()
		return LoginResult{}, &LoginError{Step: "check API key", Err: err}
	}
	return LoginResult{Secret: sec, User: user}, nil
}

// apiKeysUnsupported reports answers that mean "this R2R does not let you create keys"
// (forbidden for this user, or no such route) rather than "your request was wrong" or
// "R2R failed just now".
func apiKeysUnsupported(err error) bool {
	var e *r2r.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.StatusCode {
	case http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
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
// authenticates its own deletion); a refresh token is exchanged, which invalidates it, and
// the access token obtained is logged out. A key the user supplied is left alone. Every
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
		// POST /v3/users/logout blacklists the access token; best effort, it expires anyway.
		_ = c.WithCredentials(r2r.Bearer(pair.AccessToken.Token)).Logout(ctx)
		return RevokedToken, nil
	}
	return "", fmt.Errorf("unknown credential kind %q", sec.Kind)
}
