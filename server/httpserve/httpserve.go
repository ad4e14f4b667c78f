// Package httpserve serves r2r-mcp to a team over HTTP (serve --http): MCP over Streamable
// HTTP at /mcp (stateless, both protocol eras), the REST gateway at /mcp/tools and
// /mcp/invoke, /healthz, /readyz and /metrics.
//
// Every request to /mcp and the gateway carries its user's own R2R credential, an API key
// or an access token (Authorization: Bearer or X-R2R-API-Key). It is checked against R2R
// (users/me) once and remembered by its SHA-256 for a short time; each R2R user gets one
// copy of the tools (server.ForCredentials), shared by all of the user's credentials, whose
// R2R requests carry the credential of the request they serve and whose cache and
// rate-limit keys name the R2R user. In the explicitly chosen shared-key mode every request
// acts with the server's own credential instead.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/server/metrics"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
)

// Auth modes.
const (
	// AuthUser: each request carries its user's R2R API key (the default).
	AuthUser = server.AuthModeUser
	// AuthShared: every request acts with the server's own credential; meant for a
	// read-only knowledge base behind a proxy that decides who may reach it.
	AuthShared = server.AuthModeShared
)

// CollectionHeader names the collection of a request's calls that pass no collection_id.
const CollectionHeader = "X-R2R-Collection"

// Options configure New. Zero values of the fields below HTTPOptions take the documented
// defaults.
type Options struct {
	// HTTPOptions are serve's --http settings, as New uses them: the auth mode, how long
	// a key R2R accepted is trusted, the Host and Origin values accepted besides loopback
	// names (requests with another get 403: DNS rebinding), the collection of calls that
	// name none. The caller listens on Addr and opens RedisURL.
	server.HTTPOptions
	// Logger receives the access log and errors; nil = discard. Keys are never logged.
	Logger *slog.Logger
	// Metrics serves /metrics and counts key checks and cache lookups; nil = no /metrics.
	// Tool calls and R2R requests are counted when base was built with it
	// (server.Config.Metrics).
	Metrics *metrics.Metrics
	// Cache wraps the result cache of every user's tools (Redis L2, metrics); nil = the
	// server's cache as it is.
	Cache tools.Cache
	// SharedLimits holds the per-user rate-limit buckets across replicas (Redis); nil =
	// each replica's own.
	SharedLimits tools.SharedLimiter
	// History keeps every user's search history across replicas (Redis); nil = each
	// replica's memory.
	History tools.HistoryStore
	// Analytics records the team's analytics across replicas (Redis); nil = the base
	// server's own recorder.
	Analytics *analytics.Recorder
	// SyncJobs keeps every user's sync jobs (progress, result) across replicas (Redis);
	// nil = each replica's memory.
	SyncJobs tools.SyncJobStore
	// Ready are further readiness checks (Redis) run by /readyz beside R2R's health.
	Ready map[string]func(context.Context) error
	// BodyTimeout bounds the time a request body takes to arrive (408 beyond it); 0 = 20 s.
	BodyTimeout time.Duration
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// MaxBodyBytes bounds a request body: a JSON-RPC message or an invoke request. Files are
// never uploaded over HTTP (ingest reads them on the server host), so messages are small.
const MaxBodyBytes = 4 << 20

// Handler is serve --http's http.Handler.
type Handler struct {
	base    *server.Server
	opts    Options
	log     *slog.Logger
	users   *users
	shared  *user // AuthShared only
	mux     *http.ServeMux
	slots   *admission // requests being served
	readers *admission // request bodies being read
}

// New builds the handler around base, a server built by server.New with Remote set. It
// does no network I/O.
func New(base *server.Server, o Options) (*Handler, error) {
	switch o.AuthMode {
	case AuthUser, AuthShared:
	default:
		return nil, fmt.Errorf("auth mode %q: want %s or %s", o.AuthMode, AuthUser, AuthShared)
	}
	if o.KeyTTL <= 0 {
		return nil, fmt.Errorf("key lifetime %s: must be positive", o.KeyTTL)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = 20 * time.Second
	}
	// The same bound as over stdio (--max-inflight), here on whole requests, and the same
	// again on bodies being read: beyond it a request gets 429 (busy) at once.
	h := &Handler{base: base, opts: o, log: o.Logger, slots: newAdmission(base.MaxInflight()), readers: newAdmission(base.MaxInflight())}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	check := base.Deps.HealthClient
	h.users = &users{ttl: o.KeyTTL, max: o.MaxKeys, now: o.Now, m: map[[32]byte]*accepted{}, byID: map[string]*user{},
		rejected: map[[32]byte]time.Time{},
		throttle: newCheckThrottle(o.Now),
		check: func(ctx context.Context, key string) (*r2r.User, error) {
			me, err := check.WithCredentials(credentialOf(key)).Me(ctx)
			h.countAuth(err)
			return me, err
		},
		build: func(id string) (*user, error) {
			k := &userKey{id: id}
			u, err := h.newUser(k, id)
			if err != nil {
				return nil, err
			}
			u.key = k
			return u, nil
		},
	}
	if o.AuthMode == AuthShared {
		u, err := h.newUser(base.Deps.Client.Credentials(), "")
		if err != nil {
			return nil, err
		}
		h.shared = u
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", h.serveUser(func(u *user, w http.ResponseWriter, r *http.Request) { u.mcp.ServeHTTP(w, r) }))
	mux.HandleFunc("/mcp/", h.serveUser(func(u *user, w http.ResponseWriter, r *http.Request) { u.gateway.ServeHTTP(w, r) }))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok\n") })
	mux.HandleFunc("GET /readyz", h.readyz)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics.Handler())
	}
	h.mux = mux
	return h, nil
}

// newUser builds the tools of one R2R user (id; "" in shared-key mode) acting with creds,
// and their two front doors.
func (h *Handler) newUser(creds r2r.Credentials, id string) (*user, error) {
	srv, err := h.base.ForCredentials(creds, server.UserOptions{Cache: h.opts.Cache, SharedLimits: h.opts.SharedLimits, History: h.opts.History, SyncJobs: h.opts.SyncJobs,
		Analytics: h.opts.Analytics, Scope: collectionDefault})
	if err != nil {
		return nil, err
	}
	st := mcpserver.NewStreamableHTTPServer(srv.MCP,
		mcpserver.WithStateLess(true),
		// Handler checks Host and Origin itself, against the configured allow-lists.
		mcpserver.WithDisableLocalhostProtection(true),
		mcpserver.WithStreamableHTTPLogger(h.log.With("component", "streamable-http")),
	)
	return &user{id: id, srv: srv, mcp: st, gateway: gateway.New(srv.MCP, srv.ToolDefs())}, nil
}

// ServeHTTP checks Host and Origin, logs the request and routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.opts.Now()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		h.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", rec.status,
			"duration_ms", float64(h.opts.Now().Sub(start).Microseconds())/1000, "user", rec.user,
			"remote", r.RemoteAddr, "bytes", rec.bytes)
	}()
	if msg := h.checkOrigin(r); msg != "" {
		writeError(rec, http.StatusForbidden, "forbidden", msg)
		return
	}
	h.mux.ServeHTTP(rec, r)
}

// serveUser authenticates a request, reads its body and hands it to its user's handler f
// once it has a slot.
func (h *Handler) serveUser(f func(*user, http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, r, ok := h.authenticate(w, r)
		if !ok {
			return
		}
		if rec, ok := w.(*recorder); ok {
			rec.user = u.id
		}
		// Slots are shared out per R2R user; in shared-key mode every request is the same
		// user, so per client address.
		caller := "user:" + u.id
		if u.id == "" {
			caller = "addr:" + clientAddr(r)
		}
		if !readBody(w, r, h.readers, caller, h.opts.BodyTimeout) {
			return
		}
		release, ok := admit(w, h.slots, caller)
		if !ok {
			return
		}
		defer release()
		if c := h.collectionOf(r); c != "" {
			r = r.WithContext(withCollection(r.Context(), c))
		}
		f(u, w, r)
	}
}

// authenticate finds the user of a request's credential and returns the request carrying
// that credential for its call's R2R requests, or answers and returns false.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (*user, *http.Request, bool) {
	if h.shared != nil {
		return h.shared, r, true
	}
	key, ok := apiKey(r)
	if !ok {
		unauthorized(w, "", "This endpoint needs your R2R credential: send Authorization: Bearer <token> with the access token "+
			"`r2r-mcp auth header` prints, or an R2R API key (Bearer or X-R2R-API-Key).")
		return nil, nil, false
	}
	addr := clientAddr(r)
	u, err := h.users.get(r.Context(), key, addr)
	var throttled *throttledError
	switch {
	case err == nil:
		return u, r.WithContext(withCredential(r.Context(), u.id, key)), true
	case errors.As(err, &throttled):
		if throttled.first {
			h.log.Warn("too many refused credentials: refusing to check more from this address for now",
				"remote", addr, "retry_after_s", throttled.wait.Round(time.Second).Seconds())
		}
		tooMany(w, "rate_limited", "Too many refused credentials from your address; check your R2R credential and try again later.", throttled.wait)
	case errors.Is(err, errMalformed):
		unauthorized(w, `, error="invalid_token"`, "This R2R credential cannot be used: "+strings.TrimPrefix(err.Error(), errMalformed.Error()+": ")+".")
	case errors.Is(err, errRejected):
		if !errors.Is(err, errRejectedBefore) {
			h.log.Warn("R2R rejected a credential", "remote", addr, "path", r.URL.Path)
		}
		unauthorized(w, `, error="invalid_token"`, "R2R rejected this credential. Send a fresh access token (`r2r-mcp auth header` prints one) "+
			"or a valid R2R API key as Authorization: Bearer <token>.")
	default:
		h.log.Warn("cannot check a credential with R2R", "error", err)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "r2r_unreachable",
			"R2R could not check the credential right now ("+r2rProblem(err)+"); try again shortly.")
	}
	return nil, nil, false
}

// collectionOf is the collection of a request's calls without collection_id.
func (h *Handler) collectionOf(r *http.Request) string {
	if c := strings.TrimSpace(r.Header.Get(CollectionHeader)); c != "" {
		return c
	}
	return h.opts.Collection
}

// readyz reports whether R2R (and every further dependency) answers.
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]func(context.Context) error{"r2r": h.base.Deps.HealthClient.Health}
	maps.Copy(checks, h.opts.Ready)
	var b strings.Builder
	status := http.StatusOK
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		if err := checks[name](ctx); err != nil {
			status = http.StatusServiceUnavailable
			fmt.Fprintf(&b, "%s: %s\n", name, r2rProblem(err))
			continue
		}
		fmt.Fprintf(&b, "%s: ok\n", name)
	}
	writeText(w, status, b.String())
}

// countAuth counts one key check by its result.
func (h *Handler) countAuth(err error) {
	if h.opts.Metrics == nil {
		return
	}
	switch {
	case err == nil:
		h.opts.Metrics.AuthCheck("ok")
	case refused(err):
		h.opts.Metrics.AuthCheck("rejected")
	default:
		h.opts.Metrics.AuthCheck("error")
	}
}

// r2rProblem describes an error for a response; R2R's message is untrusted text.
func r2rProblem(err error) string {
	return tools.Sanitize(err.Error())
}

// unauthorized answers 401 with a WWW-Authenticate challenge.
func unauthorized(w http.ResponseWriter, params, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="r2r-mcp"`+params)
	writeError(w, http.StatusUnauthorized, "authentication", msg)
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	gateway.WriteError(w, status, gateway.Error{Type: typ, Code: gateway.CodeOf(status), Message: msg,
		Retryable: status == http.StatusServiceUnavailable})
}

func writeText(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s))
}
