package r2r

import (
	"context"
	"net/http"
	"net/url"
)

// Health checks GET /v3/health (no auth, no rate limit).
func (c *Client) Health(ctx context.Context) error {
	var out struct {
		Message string `json:"message"`
	}
	return c.results(ctx, &Call{Op: "health", Method: http.MethodGet, Path: "/v3/health",
		Idempotent: true, NoAuth: true}, &out)
}

// Login exchanges email and password for a token pair (form fields username/password).
// Unknown emails give 404 and wrong passwords 401 (conformance tests
// auth/login_unknown_email_404 and auth/login_wrong_password_401). No credentials are sent
// and a 401 never triggers a refresh.
func (c *Client) Login(ctx context.Context, email, password string) (*TokenPair, error) {
	form := url.Values{"username": {email}, "password": {password}}
	return result[TokenPair](ctx, c, &Call{Op: "login", Method: http.MethodPost, Path: "/v3/users/login",
		Body: []byte(form.Encode()), ContentType: "application/x-www-form-urlencoded", NoAuth: true})
}

// RefreshToken trades a refresh token for a new pair. Refresh tokens rotate: the one
// presented is invalidated. The body is the token as a JSON string literal, as R2R's
// Python SDK sends it.
func (c *Client) RefreshToken(ctx context.Context, refreshToken string) (*TokenPair, error) {
	const op = "refresh token"
	body, err := jsonBody(op, refreshToken)
	if err != nil {
		return nil, err
	}
	return result[TokenPair](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: "/v3/users/refresh-token",
		Body: body, ContentType: "application/json", NoAuth: true})
}

// Logout invalidates the access token the client is using (POST /v3/users/logout). R2R
// accepts only a Bearer JWT here, not an API key.
func (c *Client) Logout(ctx context.Context) error {
	var out struct {
		Message string `json:"message"`
	}
	return c.results(ctx, &Call{Op: "logout", Method: http.MethodPost, Path: "/v3/users/logout"}, &out)
}

// Me returns the user the credentials act as (GET /v3/users/me).
func (c *Client) Me(ctx context.Context) (*User, error) {
	return result[User](ctx, c, &Call{Op: "get current user", Method: http.MethodGet, Path: "/v3/users/me",
		Idempotent: true})
}

// CreateAPIKey creates an API key for userID. The raw key is in the result only.
func (c *Client) CreateAPIKey(ctx context.Context, userID, name, description string) (*CreatedAPIKey, error) {
	const op = "create API key"
	if err := requireID(op, "user id", userID); err != nil {
		return nil, err
	}
	body, err := jsonBody(op, struct {
		Name        string `json:"name,omitempty"`
		Description string `json:"description,omitempty"`
	}{name, description})
	if err != nil {
		return nil, err
	}
	return result[CreatedAPIKey](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: pathf("/users/%s/api-keys", userID),
		Body: body, ContentType: "application/json"})
}

// ListAPIKeys lists userID's API keys (no secrets).
func (c *Client) ListAPIKeys(ctx context.Context, userID string) ([]APIKeyInfo, error) {
	const op = "list API keys"
	if err := requireID(op, "user id", userID); err != nil {
		return nil, err
	}
	p, err := page[APIKeyInfo](ctx, c, &Call{Op: op, Method: http.MethodGet,
		Path: pathf("/users/%s/api-keys", userID), Idempotent: true})
	if err != nil {
		return nil, err
	}
	return p.Items, nil
}

// DeleteAPIKey revokes one of userID's keys; an unknown key gives 404 (ErrNotFound).
func (c *Client) DeleteAPIKey(ctx context.Context, userID, keyID string) error {
	const op = "delete API key"
	if err := requireID(op, "user id", userID); err != nil {
		return err
	}
	if err := requireID(op, "key id", keyID); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodDelete,
		Path: pathf("/users/%s/api-keys/%s", userID, keyID)}, nil)
}

// ListUsers lists R2R's users (GET /v3/users); only a superuser may, anyone else gets 403.
func (c *Client) ListUsers(ctx context.Context, p ListParams) (*Page[User], error) {
	return page[User](ctx, c, &Call{Op: "list users", Method: http.MethodGet, Path: "/v3/users",
		Query: listQuery(p, true), Idempotent: true})
}
