package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Error codes carried in the structured content of error results (seed 000 §errors).
const (
	CodeR2RAPI        = -32001 // R2R answered with an error, or could not be reached
	CodeAuth          = -32002 // R2R rejected the credentials
	CodeBreakerOpen   = -32003 // the circuit breaker is open: R2R failed repeatedly
	CodeRateLimited   = -32004 // a rate limit: r2r-mcp's own per tool, or R2R's (429)
	CodeInvalidParams = -32602 // the arguments are wrong
)

// defaultRetryAfterSeconds is suggested after a 429 without Retry-After: R2R's limits are
// per minute and it never sends the header (r2r-api.md §5).
const defaultRetryAfterSeconds = 60

// ErrorInfo is the structured content of every error result.
type ErrorInfo struct {
	Type       string   `json:"type"`
	Code       int      `json:"code"`
	Retryable  bool     `json:"retryable"`
	RetryAfter *float64 `json:"retry_after,omitempty"` // seconds
	Status     int      `json:"status,omitempty"`      // R2R's HTTP status
	Message    string   `json:"message"`
}

// errorResult builds an isError result whose text and structured content agree.
func errorResult(info ErrorInfo) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(info.Message)},
		StructuredContent: info,
		IsError:           true,
	}
}

// invalidArgs is the result for arguments that fail validation.
func invalidArgs(err error) *mcp.CallToolResult {
	return errorResult(ErrorInfo{Type: "invalid_params", Code: CodeInvalidParams, Message: "Invalid arguments: " + err.Error()})
}

// refusal is the result for a request r2r-mcp declines to send (path confinement, limits).
func refusal(kind, msg string) *mcp.CallToolResult {
	return errorResult(ErrorInfo{Type: kind, Code: CodeInvalidParams, Message: msg})
}

// errHints says what to do when a call fails with 404, naming the tool that lists valid ids.
type errHints struct {
	// NotFound replaces the generic 404 text, e.g. "Document 1234… not found. Use
	// r2r_list_documents to see document ids."
	NotFound string
}

// r2rErrorResult maps an error from the R2R client (or the call's context) to an isError
// result with actionable text. baseURL is shown for connection failures; it never carries
// credentials (r2r.NormalizeBaseURL rejects user info).
func r2rErrorResult(ctx context.Context, err error, baseURL string, h errHints) *mcp.CallToolResult {
	var argE *ArgError
	if errors.As(err, &argE) {
		return invalidArgs(argE)
	}
	var e *r2r.Error
	isR2R := errors.As(err, &e)

	switch {
	case errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return timeoutResult(ctx, err, baseURL)
	case errors.Is(err, context.Canceled):
		return errorResult(ErrorInfo{Type: "cancelled", Code: CodeR2RAPI,
			Message: "The request was cancelled before R2R answered."})
	case errors.Is(err, r2r.ErrInvalidRequest) && !isR2R:
		return errorResult(ErrorInfo{Type: "invalid_params", Code: CodeInvalidParams,
			Message: "Invalid request: " + err.Error()})
	case !isR2R:
		return errorResult(ErrorInfo{Type: "internal", Code: CodeR2RAPI,
			Message: "Unexpected error: " + err.Error()})
	}

	if errors.Is(err, r2r.ErrCircuitOpen) {
		return breakerOpenResult(err, e, baseURL)
	}
	if ce, ok := errors.AsType[*r2r.CredentialError](err); ok {
		// Nothing was sent: the credentials could not be applied (a login or token refresh
		// failed, the keyring did not answer).
		return errorResult(ErrorInfo{Type: "authentication", Code: CodeAuth,
			Message: fmt.Sprintf("r2r-mcp could not authenticate to R2R at %s: %s. Run `r2r-mcp login`, or fix "+
				"R2R_API_KEY / R2R_EMAIL and R2R_PASSWORD; `r2r-mcp doctor` shows where the credentials come from.",
				baseURL, ce.Err)})
	}

	msg := strings.TrimSpace(e.Message)
	r2rSays := ""
	if msg != "" {
		r2rSays = " R2R says: " + msg
	}
	info := ErrorInfo{Status: e.StatusCode, Retryable: e.Retryable()}
	switch e.StatusCode {
	case 0:
		info.Type, info.Code, info.Retryable = "unreachable", CodeR2RAPI, true
		cause := "no answer"
		if e.Err != nil {
			cause = e.Err.Error()
		}
		info.Message = fmt.Sprintf("Cannot reach R2R at %s: %s. Start R2R or set --r2r-url / R2R_API_URL.", baseURL, cause)
	case http.StatusUnauthorized:
		info.Type, info.Code = "authentication", CodeAuth
		info.Message = "R2R rejected the credentials (401). Run `r2r-mcp login`." + r2rSays
	case http.StatusForbidden:
		info.Type, info.Code = "forbidden", CodeR2RAPI
		info.Message = fmt.Sprintf("R2R refused to %s (403).%s Use a collection or document your account owns "+
			"(r2r_list_collections shows them), or ask the R2R admin for access.", e.Op, r2rSays)
	case http.StatusNotFound:
		info.Type, info.Code = "not_found", CodeR2RAPI
		if h.NotFound != "" {
			info.Message = h.NotFound
		} else {
			info.Message = fmt.Sprintf("R2R could not find what %s asked for (404).%s", e.Op, r2rSays)
		}
	case http.StatusConflict:
		info.Type, info.Code = "conflict", CodeR2RAPI
		info.Message = fmt.Sprintf("R2R reported a conflict for %s (409).%s", e.Op, r2rSays)
	case http.StatusRequestEntityTooLarge:
		info.Type, info.Code = "too_large", CodeR2RAPI
		info.Message = "R2R refused the file as too large (413)." + r2rSays
	case http.StatusUnsupportedMediaType:
		info.Type, info.Code = "unsupported_type", CodeR2RAPI
		info.Message = "R2R does not accept this file type (415)." + r2rSays
	case http.StatusTooManyRequests:
		info.Type, info.Code, info.Retryable = "rate_limited", CodeRateLimited, true
		secs := float64(defaultRetryAfterSeconds)
		if e.RetryAfter > 0 {
			secs = math.Ceil(e.RetryAfter.Seconds())
		}
		info.RetryAfter = &secs
		info.Message = fmt.Sprintf("R2R's rate limit was hit (429). Wait %.0f s before trying again.%s", secs, r2rSays)
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		info.Type, info.Code = "rejected", CodeR2RAPI
		info.Message = fmt.Sprintf("R2R rejected the %s request (%d).%s Check the arguments.", e.Op, e.StatusCode, r2rSays)
	default:
		info.Type, info.Code = "server_error", CodeR2RAPI
		next := "This looks like a problem inside R2R; check its logs."
		if info.Retryable {
			next = "R2R or a proxy in front of it is unavailable; try again shortly."
		}
		info.Message = fmt.Sprintf("R2R failed to %s (%d).%s %s", e.Op, e.StatusCode, r2rSays, next)
	}
	return errorResult(info)
}

// timeoutResult is the answer when the call's deadline passed before R2R answered. The
// caller's own cancellation is not a timeout (see r2rErrorResult).
func timeoutResult(ctx context.Context, err error, baseURL string) *mcp.CallToolResult {
	op := ""
	if e, ok := errors.AsType[*r2r.Error](err); ok && e.Op != "" {
		op = " (still waiting for its answer to " + e.Op + ")"
	}
	ci, ok := callFrom(ctx)
	if !ok {
		return errorResult(ErrorInfo{Type: "timeout", Code: CodeR2RAPI, Retryable: true,
			Message: fmt.Sprintf("R2R at %s did not answer in time%s. It may be busy: try again, "+
				"or narrow the request (smaller limit, shorter question).", baseURL, op)})
	}
	next := "Try again shortly, or narrow the request (smaller limit, shorter question); if R2R keeps hanging, check it with `r2r-mcp doctor`"
	if ci.flag != "" {
		next += ", or raise serve's " + ci.flag
	}
	return errorResult(ErrorInfo{Type: "timeout", Code: CodeR2RAPI, Retryable: true,
		Message: fmt.Sprintf("R2R at %s did not answer %s within %s%s. %s.",
			baseURL, ci.tool, secondsText(ci.timeout), op, next)})
}

// breakerOpenResult is the answer to a call the circuit breaker turned away without
// sending it: R2R failed repeatedly and gets time to recover.
func breakerOpenResult(err error, e *r2r.Error, baseURL string) *mcp.CallToolResult {
	wait := e.RetryAfter
	var rej *r2r.BreakerRejection
	if errors.As(err, &rej) && rej.RetryAfter > 0 {
		wait = rej.RetryAfter
	}
	secs := max(math.Ceil(wait.Seconds()), 1)
	var cause string
	switch {
	case rej != nil && rej.HalfOpen:
		cause = "failed repeatedly and is being probed with a few calls now"
	case rej != nil && rej.Failures == 1:
		cause = "failed again when probed after a pause"
	case rej != nil && rej.Failures > 1:
		cause = fmt.Sprintf("failed %d times in a row", rej.Failures)
	default:
		cause = "failed repeatedly"
	}
	return errorResult(ErrorInfo{Type: "breaker_open", Code: CodeBreakerOpen, Retryable: true, RetryAfter: &secs,
		Message: fmt.Sprintf("R2R at %s %s; calls are paused for %.0f s to let it recover. "+
			"Retry after that, or check R2R (`r2r-mcp doctor`); r2r_status shows the circuit breaker.", baseURL, cause, secs)})
}

// secondsText formats a duration for messages: "20 s", "1.5 s", "250 ms".
func secondsText(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d%time.Second == 0:
		return fmt.Sprintf("%d s", int64(d/time.Second))
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
