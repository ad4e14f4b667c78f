package r2r

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors for errors.Is. An *Error matches them by status code:
// ErrNotFound 404, ErrConflict 409, ErrUnauthorized 401, ErrForbidden 403,
// ErrRateLimited 429, ErrUnavailable a transport failure (R2R unreachable, connection reset,
// timeout; not a cancellation by the caller) or 502/503/504.
var (
	ErrNotFound     = errors.New("r2r: not found")
	ErrConflict     = errors.New("r2r: conflict")
	ErrUnauthorized = errors.New("r2r: unauthorized")
	ErrForbidden    = errors.New("r2r: forbidden")
	ErrRateLimited  = errors.New("r2r: rate limited")
	ErrUnavailable  = errors.New("r2r: unavailable")
)

// ErrCredentials is matched (errors.Is) by the *Error of a call that was never sent because
// its credentials could not be applied: a password login or token refresh failed, a
// keyring did not answer, a key was empty. Error.Err is then a *CredentialError.
var ErrCredentials = errors.New("r2r: credentials could not be applied")

// CredentialError is the cause (Error.Err) of a call whose credentials could not be applied.
// The *Error around it has StatusCode 0, is not Retryable and matches only ErrCredentials
// among the sentinels: the status of a failed login (say 404 "User not found") is not the
// status of the call, so it is hidden from errors.Is and errors.As on the *Error. It stays
// reachable for diagnosis through the CredentialError: errors.As(err, &ce), then ce.Err or
// errors.Is(ce, …) / errors.As(ce, …).
type CredentialError struct {
	Identity string // the credentials' non-secret Identity()
	Err      error  // what Apply returned
}

func (e *CredentialError) Error() string {
	return "applying credentials " + e.Identity + ": " + e.Err.Error()
}

// Unwrap returns Apply's error.
func (e *CredentialError) Unwrap() error { return e.Err }

// Is makes errors.Is(ce, ErrCredentials) true.
func (e *CredentialError) Is(target error) bool { return target == ErrCredentials }

// ErrInvalidRequest is wrapped by errors a method returns before sending anything because
// its input is unusable (e.g. a DocumentCreate with both File and RawText).
var ErrInvalidRequest = errors.New("r2r: invalid request")

// ErrResponseTooLarge is wrapped by the *Error returned when a response body exceeds
// Options.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("r2r: response body too large")

const (
	maxRawMessage  = 500  // bytes of a non-JSON error body kept as the message
	maxJSONMessage = 2000 // bytes of an R2R message kept
	maxErrorBody   = 64 << 10
)

// Error is every failure of an R2R call after the request was built: non-2xx responses,
// transport failures, unreadable responses. It never contains credentials: only the
// operation, method, path (no host, no query) and R2R's message.
type Error struct {
	Op         string        // e.g. "search", "get document"
	Method     string        // HTTP method
	Path       string        // /v3/... without query
	StatusCode int           // 0 for transport errors (R2R unreachable, timeout)
	Message    string        // R2R's own message, parsed from all four body shapes
	ErrorType  string        // R2R's error_type when present
	RetryAfter time.Duration // from Retry-After when present
	Err        error         // underlying transport or decoding error, if any
}

// Error returns "R2R <op>: <status> <message>", or "R2R <op>: <cause>" for transport errors.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("R2R ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	switch {
	case e.credential() != nil:
		b.WriteString(e.Err.Error())
	case e.StatusCode == 0 && e.Message != "" && errors.Is(e.Err, ErrCircuitOpen):
		b.WriteString(e.Message)
	case e.StatusCode == 0 && e.Err != nil:
		if !isContextErr(e.Err) {
			b.WriteString("connection failed: ")
		}
		b.WriteString(e.Err.Error())
	case e.StatusCode == 0:
		b.WriteString(e.Message)
	default:
		b.WriteString(strconv.Itoa(e.StatusCode))
		msg := e.Message
		if msg == "" {
			msg = http.StatusText(e.StatusCode)
		}
		if msg != "" {
			b.WriteByte(' ')
			b.WriteString(msg)
		}
		if e.Err != nil {
			b.WriteString(": ")
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

// Unwrap returns the underlying transport or decoding error, so errors.Is(err,
// context.Canceled) works. A *CredentialError is not returned (see As): what failed while
// applying the credentials must not pass for the outcome of the call.
func (e *Error) Unwrap() error {
	if e.credential() != nil {
		return nil
	}
	return e.Err
}

// As lets errors.As reach the *CredentialError that Unwrap hides.
func (e *Error) As(target any) bool {
	ce := e.credential()
	if p, ok := target.(**CredentialError); ok && ce != nil {
		*p = ce
		return true
	}
	return false
}

func (e *Error) credential() *CredentialError {
	ce, _ := e.Err.(*CredentialError)
	return ce
}

// Is maps the status code to the package's sentinel errors; a call whose credentials could
// not be applied matches ErrCredentials and nothing else.
func (e *Error) Is(target error) bool {
	if e.credential() != nil {
		return target == ErrCredentials
	}
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrUnavailable:
		return e.unavailable()
	}
	return false
}

func (e *Error) unavailable() bool {
	switch e.StatusCode {
	case 0:
		return e.Err != nil && !errors.Is(e.Err, context.Canceled)
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Retryable reports whether sending the same request again right away may succeed:
// transport errors (but not the caller's cancellation or deadline, nor an open circuit
// breaker, which says when to come back in RetryAfter, nor credentials that could not be
// applied), 429, 502, 503 and 504.
func (e *Error) Retryable() bool {
	if e.credential() != nil {
		return false
	}
	switch e.StatusCode {
	case 0:
		return e.Err != nil && !isContextErr(e.Err) && !errors.Is(e.Err, ErrCircuitOpen)
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// newStatusError builds the *Error of a non-2xx response from its status, headers and
// (already capped) body.
func newStatusError(call *Call, status int, h http.Header, body []byte) *Error {
	msg, typ := parseErrorBody(status, h.Get("Content-Type"), body)
	msg = withoutHostedAdvice(msg)
	return &Error{
		Op:         call.Op,
		Method:     call.Method,
		Path:       call.Path,
		StatusCode: status,
		Message:    msg,
		ErrorType:  typ,
		RetryAfter: parseRetryAfter(h.Get("Retry-After"), time.Now()),
	}
}

// withoutHostedAdvice drops the sentences of an R2R message that advise its hosted service
// (R2R 3.6.6's 401 says "No credentials provided. Create an account at https://app.sciphi.ai
// and set your API key using `r2r configure key` OR change your base URL to a custom
// deployment."): wrong for a self-hosted R2R, and r2r-mcp gives its own next step.
func withoutHostedAdvice(msg string) string {
	if !strings.Contains(msg, "sciphi.ai") && !strings.Contains(msg, "r2r configure key") {
		return msg
	}
	var kept []string
	for rest := msg; rest != ""; {
		i := strings.Index(rest, ". ")
		sentence := rest
		if i >= 0 {
			sentence, rest = rest[:i+1], rest[i+2:]
		} else {
			rest = ""
		}
		if !strings.Contains(sentence, "sciphi.ai") && !strings.Contains(sentence, "r2r configure key") {
			kept = append(kept, sentence)
		}
	}
	if len(kept) == 0 {
		return "No usable credentials."
	}
	return strings.Join(kept, " ")
}

// parseErrorBody extracts R2R's message from its four body shapes (conformance tests
// errors/*):
// {"message","error_type"}; {"detail": "..."}; {"detail": {"message","error_type"}};
// the FastAPI 422 list {"detail": [{"loc","msg"}]}. Anything else: HTML (a proxy's error
// page) gives the status text, other text is kept trimmed and capped, and an empty body
// gives the status text.
func parseErrorBody(status int, contentType string, body []byte) (msg, errType string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return http.StatusText(status), ""
	}
	if body[0] == '{' {
		var env struct {
			Message   *string         `json:"message"`
			ErrorType string          `json:"error_type"`
			Detail    json.RawMessage `json:"detail"`
		}
		if json.Unmarshal(body, &env) == nil {
			if env.Message != nil && *env.Message != "" {
				return capText(*env.Message, maxJSONMessage), env.ErrorType
			}
			if m, t, ok := parseDetail(env.Detail); ok {
				if t == "" {
					t = env.ErrorType
				}
				return capText(m, maxJSONMessage), t
			}
		}
	}
	if isHTML(contentType, body) {
		return http.StatusText(status), ""
	}
	return capText(string(body), maxRawMessage), ""
}

func parseDetail(raw json.RawMessage) (msg, errType string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return "", "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s, "", true
		}
	case '{':
		var d struct {
			Message   string `json:"message"`
			Error     string `json:"error"`
			ErrorType string `json:"error_type"`
		}
		if json.Unmarshal(raw, &d) == nil {
			if d.Message != "" {
				return d.Message, d.ErrorType, true
			}
			if d.Error != "" {
				return d.Error, d.ErrorType, true
			}
		}
	case '[':
		var items []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		}
		if json.Unmarshal(raw, &items) == nil && len(items) > 0 {
			parts := make([]string, 0, len(items))
			for _, it := range items {
				loc := make([]string, 0, len(it.Loc))
				for _, l := range it.Loc {
					loc = append(loc, fmt.Sprint(l))
				}
				if len(loc) == 0 {
					parts = append(parts, it.Msg)
					continue
				}
				parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
			}
			return strings.Join(parts, "; "), "", true
		}
	}
	return "", "", false
}

func isHTML(contentType string, body []byte) bool {
	if strings.Contains(strings.ToLower(contentType), "html") {
		return true
	}
	return len(body) > 0 && body[0] == '<'
}

// capText makes s valid UTF-8, trims it and cuts it to at most n bytes on a rune boundary.
func capText(s string, n int) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// parseRetryAfter reads a Retry-After header: delta-seconds or an HTTP date. Zero when
// absent or unparsable; never negative.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		const maxSecs = int64(24 * time.Hour / time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
