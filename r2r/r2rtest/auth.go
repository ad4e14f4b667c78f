package r2rtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"slices"
	"sort"
	"strings"
	"time"
)

const noCredentialsMsg = "No credentials provided. Create an account at https://app.sciphi.ai and set your API key using `r2r configure key` OR change your base URL to a custom deployment."

var b64 = base64.RawURLEncoding

// issueTokenLocked builds an HS256 JWT like R2R's: sub, token_type, exp, iat, nbf (float epoch
// seconds), jti and nonce.
func (e *Emulator) issueTokenLocked(email, typ string, ttl time.Duration) string {
	now := e.timeLocked()
	claims := map[string]any{
		"sub":        email,
		"token_type": typ,
		"exp":        epoch(now.Add(ttl)),
		"iat":        epoch(now),
		"nbf":        epoch(now),
		"jti":        b64.EncodeToString(randomBytes(16)),
		"nonce":      b64.EncodeToString(randomBytes(16)),
	}
	head := b64.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := b64.EncodeToString(mustJSON(claims))
	return head + "." + body + "." + e.sign(head+"."+body)
}

func epoch(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

func (e *Emulator) sign(s string) string {
	m := hmac.New(sha256.New, e.secret)
	m.Write([]byte(s))
	return b64.EncodeToString(m.Sum(nil))
}

type tokenClaims struct {
	Sub       string   `json:"sub"`
	TokenType string   `json:"token_type"`
	Exp       *float64 `json:"exp"`
	Iat       float64  `json:"iat"`
	Nbf       float64  `json:"nbf"`
	Jti       string   `json:"jti"`
}

var (
	errTokenInvalid     = errors.New("Invalid or expired token")
	errTokenExpired     = errors.New("Token has expired")
	errTokenBlacklisted = errors.New("Token has been invalidated")
	errTokenClaims      = errors.New("Invalid token claims")
)

// decodeTokenLocked verifies a JWT the way R2R's decode_token does, in the same order.
func (e *Emulator) decodeTokenLocked(tok string) (*tokenClaims, error) {
	if e.st.blacklist[tok] {
		return nil, errTokenBlacklisted
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || !hmac.Equal([]byte(e.sign(parts[0]+"."+parts[1])), []byte(parts[2])) {
		return nil, errTokenInvalid
	}
	raw, err := b64.DecodeString(parts[1])
	if err != nil {
		return nil, errTokenInvalid
	}
	var cl tokenClaims
	if err := json.Unmarshal(raw, &cl); err != nil {
		return nil, errTokenInvalid
	}
	now := e.timeLocked()
	if cl.Nbf > epoch(now)+1 {
		return nil, errTokenInvalid
	}
	if cl.Sub == "" || cl.TokenType == "" || cl.Exp == nil {
		return nil, errTokenClaims
	}
	if *cl.Exp < epoch(now) {
		return nil, errTokenExpired
	}
	if cl.TokenType == "access" && !e.accessNotBefore.IsZero() && cl.Iat <= epoch(e.accessNotBefore) {
		return nil, errTokenExpired
	}
	return &cl, nil
}

// apiKeyUserLocked resolves "key_XXXX.raw" to its user.
func (e *Emulator) apiKeyUserLocked(key string) *user {
	pub, raw, ok := strings.Cut(key, ".")
	if !ok {
		return nil
	}
	k := e.st.apiKeys[pub]
	if k == nil || !hmac.Equal(k.hash, sha256Sum(raw)) {
		return nil
	}
	return e.st.users[k.userID]
}

func sha256Sum(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// bearer returns the Bearer credential, if the Authorization header carries one.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(cred) == "" {
		return "", false
	}
	return strings.TrimSpace(cred), true
}

// authenticate mirrors R2R's auth_wrapper. On failure it writes the error and returns false.
func (c *call) authenticate() bool {
	e := c.e
	tok, hasBearer := bearer(c.r)
	key := c.r.Header.Get("X-API-Key")
	e.mu.Lock()
	defer e.mu.Unlock()
	if !hasBearer && key == "" {
		if e.opts.RequireAuth {
			c.fail(http.StatusUnauthorized, noCredentialsMsg)
			return false
		}
		c.user = e.adminLocked()
		return true
	}
	if hasBearer && key != "" {
		c.fail(http.StatusBadRequest, "Cannot have both Bearer token and API key")
		return false
	}
	if hasBearer {
		if cl, err := e.decodeTokenLocked(tok); err == nil {
			if u := e.st.byEmail[strings.ToLower(cl.Sub)]; u != nil {
				c.user = u
				return true
			}
		}
		if u := e.apiKeyUserLocked(tok); u != nil {
			c.user = u
			return true
		}
	}
	if key != "" {
		if u := e.apiKeyUserLocked(key); u != nil {
			c.user = u
			return true
		}
	}
	c.fail(http.StatusUnauthorized, "Invalid token or API key")
	return false
}

// rateLimited applies R2R's per-minute limit for non-superusers. Like R2R, every guarded
// route is checked but only POST and DELETE requests are logged, a request is rejected once
// more than RateLimit requests were logged in the past minute (so RateLimit+1 pass), and
// rejected requests are not logged.
func (c *call) rateLimited() bool {
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	limit := e.opts.RateLimit
	if limit <= 0 || c.user.superuser {
		return false
	}
	now := time.Now()
	log := e.rateLog[c.user.id]
	kept := log[:0]
	for _, t := range log {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	e.rateLog[c.user.id] = kept
	if len(kept) > limit {
		c.detail(http.StatusTooManyRequests, "Global per-minute rate limit exceeded")
		return true
	}
	if c.r.Method == http.MethodPost || c.r.Method == http.MethodDelete {
		e.rateLog[c.user.id] = append(kept, now)
	}
	return false
}

// guard runs authentication and rate limiting; false means a response was written.
func (c *call) guard() bool {
	return c.authenticate() && !c.rateLimited()
}

func (e *Emulator) tokenPairLocked(email string) map[string]any {
	return map[string]any{
		"access_token":  map[string]any{"token": e.issueTokenLocked(email, "access", e.opts.TokenTTL), "token_type": "access"},
		"refresh_token": map[string]any{"token": e.issueTokenLocked(email, "refresh", e.opts.RefreshTTL), "token_type": "refresh"},
	}
}

func (c *call) handleLogin() {
	form := c.rec.Form
	var missing []validationError
	for _, f := range []string{"username", "password"} {
		if len(form[f]) == 0 {
			missing = append(missing, validationError{Type: "missing", Loc: []any{"body", f}, Msg: "Field required", Input: nil})
		}
	}
	if len(missing) > 0 {
		c.invalid(missing...)
		return
	}
	if gt := form["grant_type"]; len(gt) > 0 && gt[0] != "" && gt[0] != "password" {
		c.invalid(validationError{Type: "string_pattern_mismatch", Loc: []any{"body", "grant_type"},
			Msg: "String should match pattern '^password$'", Input: gt[0], Ctx: map[string]any{"pattern": "^password$"}})
		return
	}
	email := strings.ToLower(form["username"][0])
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.st.byEmail[email]
	if u == nil {
		c.fail(http.StatusNotFound, "User not found")
		return
	}
	if !u.checkPassword(form["password"][0]) {
		c.fail(http.StatusUnauthorized, "Incorrect email or password")
		return
	}
	c.ok(e.tokenPairLocked(u.email))
}

// refreshTokenBody extracts the token from the single-Body-parameter request: a JSON string
// literal with a JSON content type, raw text otherwise.
func (c *call) refreshTokenBody() (string, bool) {
	if strings.Contains(contentType(c.r), "json") {
		var s string
		if err := json.Unmarshal(c.body, &s); err != nil {
			var input any
			_ = json.Unmarshal(c.body, &input)
			c.invalid(validationError{Type: "string_type", Loc: []any{"body"}, Msg: "Input should be a valid string", Input: input})
			return "", false
		}
		return s, true
	}
	if len(c.body) == 0 {
		c.invalid(validationError{Type: "missing", Loc: []any{"body"}, Msg: "Field required", Input: nil})
		return "", false
	}
	return string(c.body), true
}

func (c *call) handleRefresh() {
	tok, ok := c.refreshTokenBody()
	if !ok {
		return
	}
	// R2R strips these wrappers before decoding (decode_token).
	if _, after, found := strings.Cut(tok, "token="); found {
		tok = after
	}
	tok, _, _ = strings.Cut(tok, "&tokenType=refresh")
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	cl, err := e.decodeTokenLocked(tok)
	if err != nil {
		c.fail(http.StatusUnauthorized, "%s", err.Error())
		return
	}
	if cl.TokenType != "refresh" {
		c.fail(http.StatusUnauthorized, "Invalid refresh token")
		return
	}
	e.st.blacklist[tok] = true
	c.ok(e.tokenPairLocked(strings.ToLower(cl.Sub)))
}

func (c *call) handleMe() {
	if !c.guard() {
		return
	}
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	c.ok(c.e.userJSONLocked(c.user))
}

func (c *call) handleLogout() {
	tok, ok := bearer(c.r)
	if !ok {
		c.w.Header().Set("WWW-Authenticate", "Bearer")
		c.detail(http.StatusUnauthorized, "Not authenticated")
		return
	}
	if !c.authenticate() {
		return
	}
	c.e.mu.Lock()
	c.e.st.blacklist[tok] = true
	c.e.mu.Unlock()
	c.ok(map[string]any{"message": "Logged out successfully"})
}

// jsonContentOK reports whether the body may be read as JSON: FastAPI parses JSON bodies
// when the content type is absent or a JSON type, and otherwise treats the body as bytes,
// which fails validation.
func (c *call) jsonContentOK() bool {
	ct := contentType(c.r)
	if ct == "" || ct == "application/json" || strings.HasSuffix(ct, "+json") {
		return true
	}
	c.invalid(validationError{Type: "model_attributes_type", Loc: []any{"body"},
		Msg: "Input should be a valid dictionary or object to extract fields from", Input: string(c.body)})
	return false
}

// decodeJSONObject decodes a JSON object body. On failure it writes FastAPI's 422.
func (c *call) decodeJSONObject() (map[string]any, bool) {
	if !c.jsonContentOK() {
		return nil, false
	}
	var m map[string]any
	if len(strings.TrimSpace(string(c.body))) == 0 {
		return map[string]any{}, true
	}
	if err := jsonUnmarshal(c.body, &m); err != nil {
		c.invalid(validationError{Type: "json_invalid", Loc: []any{"body", 0}, Msg: "JSON decode error", Input: map[string]any{},
			Ctx: map[string]any{"error": err.Error()}})
		return nil, false
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, true
}

func (c *call) handleRegister() {
	if !c.authenticate() {
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	var errs []validationError
	email, _ := body["email"].(string)
	password, _ := body["password"].(string)
	if body["email"] == nil {
		errs = append(errs, validationError{Type: "missing", Loc: []any{"body", "email"}, Msg: "Field required"})
	} else if a, err := mail.ParseAddress(email); err != nil || a.Address != email || !strings.Contains(email, "@") {
		errs = append(errs, validationError{Type: "value_error", Loc: []any{"body", "email"},
			Msg: "value is not a valid email address: The email address is not valid.", Input: body["email"]})
	}
	if body["password"] == nil {
		errs = append(errs, validationError{Type: "missing", Loc: []any{"body", "password"}, Msg: "Field required"})
	}
	if len(errs) > 0 {
		c.invalid(errs...)
		return
	}
	if v, _ := body["is_verified"].(bool); v && !c.user.superuser {
		c.fail(http.StatusForbidden, "Non-superuser cannot verify users during registration.")
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.byEmail[strings.ToLower(email)] != nil {
		c.fail(http.StatusBadRequest, "User with this email already exists")
		return
	}
	u := e.createUserLocked(email, password, false, strPtr(body["name"]))
	u.bio, u.picture = strPtr(body["bio"]), strPtr(body["profile_picture"])
	c.ok(e.userJSONLocked(u))
}

func strPtr(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

// selfOrSuper checks the {id} path parameter against the caller.
func (c *call) selfOrSuper(action string) (string, bool) {
	id, ok := c.uuidParam("id")
	if !ok {
		return "", false
	}
	if id != c.user.id && !c.user.superuser {
		c.fail(http.StatusForbidden, "Only the user themselves or a superuser can %s.", action)
		return "", false
	}
	return id, true
}

func (c *call) handleCreateAPIKey() {
	if !c.guard() {
		return
	}
	id, ok := c.selfOrSuper("create API keys for this user")
	if !ok {
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	name, _ := body["name"].(string)
	desc, _ := body["description"].(string)
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.st.users[id] == nil {
		c.fail(http.StatusNotFound, "User not found")
		return
	}
	// URL-safe base64 with padding in both parts, as R2R mints them (conformance test
	// TestLive/api_keys/create).
	pub := "key_" + base64.URLEncoding.EncodeToString(randomBytes(16))
	raw := base64.URLEncoding.EncodeToString(randomBytes(32))
	k := &apiKey{
		keyID:       newUUID(),
		publicKey:   pub,
		hash:        sha256Sum(raw),
		userID:      id,
		name:        name,
		description: desc,
		updatedAt:   e.nowLocked(),
	}
	e.st.apiKeys[pub] = k
	c.ok(map[string]any{"api_key": pub + "." + raw, "key_id": k.keyID, "public_key": pub, "name": name})
}

func (c *call) handleListAPIKeys() {
	if !c.guard() {
		return
	}
	id, ok := c.selfOrSuper("list API keys for this user")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	var keys []*apiKey
	for _, k := range e.st.apiKeys {
		if k.userID == id {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].updatedAt.After(keys[j].updatedAt) })
	out := make([]map[string]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"public_key": k.publicKey, "key_id": k.keyID, "name": k.name,
			"description": k.description, "updated_at": e.tsLocked(k.updatedAt)})
	}
	c.page(out, len(out))
}

func (c *call) handleDeleteAPIKey() {
	if !c.guard() {
		return
	}
	id, ok := c.selfOrSuper("delete this API key")
	if !ok {
		return
	}
	keyID, ok := c.uuidParam("key_id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for pub, k := range e.st.apiKeys {
		if k.keyID == keyID && k.userID == id {
			delete(e.st.apiKeys, pub)
			c.ok(map[string]any{"success": true})
			return
		}
	}
	// The database layer raises 404 before the router's own 400 could (conformance test
	// TestLive/api_keys/revoke_unknown_404).
	c.fail(http.StatusNotFound, "API key not found")
}

// newUUID returns a random (v4) UUID string.
func newUUID() string {
	b := randomBytes(16)
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[x>>4], hexd[x&0xf])
	}
	return string(out)
}

// handleDeleteUser deletes a user, its API keys and its default collection; its documents
// stay. Others need the user's password, a superuser does not.
func (c *call) handleDeleteUser() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	if id != c.user.id && !c.user.superuser {
		c.fail(http.StatusForbidden, "Only a superuser can delete other users.")
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	password, _ := body["password"].(string)
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	u := e.st.users[id]
	switch {
	case u == nil:
		c.fail(http.StatusNotFound, "User not found")
		return
	case !c.user.superuser && password == "":
		c.fail(http.StatusUnprocessableEntity, "Password is required for deletion")
		return
	case !c.user.superuser && !u.checkPassword(password):
		c.fail(http.StatusBadRequest, "Incorrect password")
		return
	}
	delete(e.st.users, id)
	delete(e.st.byEmail, u.email)
	for pub, k := range e.st.apiKeys {
		if k.userID == id {
			delete(e.st.apiKeys, pub)
		}
	}
	def := uuid5(id)
	delete(e.st.collections, def)
	for _, d := range e.st.docs {
		d.collectionIDs = slices.DeleteFunc(d.collectionIDs, func(s string) bool { return s == def })
	}
	c.ok(map[string]any{"success": true})
}
