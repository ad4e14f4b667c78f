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

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/diagnose"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// defaultRetryAfterSeconds is suggested after a 429 without Retry-After: R2R's limits are
// per minute and it never sends the header.
const defaultRetryAfterSeconds = 60

// invalidArgs is the result for arguments that fail validation.
func invalidArgs(err error) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Info{Type: "invalid_params", Code: toolerr.CodeInvalidParams, Message: "Invalid arguments: " + err.Error()})
}

// invalidRequest is the result for a call whose arguments are well formed but name
// nothing r2r-mcp can answer for, such as a sync job it does not know: the caller changes
// the call (-32602), as with invalidArgs; R2R was not asked, so it is no "not_found" of R2R's.
func invalidRequest(msg string) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Info{Type: "invalid_params", Code: toolerr.CodeInvalidParams, Message: msg})
}

// refusal is the result for a request r2r-mcp declines to send (path confinement, limits).
func refusal(kind, msg string) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Info{Type: kind, Code: toolerr.CodeInvalidParams, Message: msg})
}

// configError is the result for a configuration problem the user must fix, such as an
// unusable .r2r-mcp.json; msg names the file and the fix. The call's arguments were fine,
// so it is not -32602, and R2R did not fail, so it is not -32001.
func configError(msg string) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Info{Type: "configuration", Code: toolerr.CodeInternal, Message: msg})
}

// internalError is the result for a failure inside r2r-mcp (a bug, a panic).
func internalError(msg string) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Info{Type: "internal", Code: toolerr.CodeInternal, Message: msg})
}

// errHints tailor r2rErrorResult's text to the call.
type errHints struct {
	// NotFound replaces the generic 404 text, e.g. "Document 1234… not found. Use
	// r2r_list_documents to see document ids."
	NotFound string
	// Timeout replaces the generic next step when the call's deadline passed, for calls
	// whose outcome is unknown then (an upload R2R may still be processing). A result
	// with it is not marked retryable: the hint says what to do instead.
	Timeout string
}

// stillIngesting adds to h the next step for an upload of document docID that hit the
// call's deadline: R2R may have taken the file and still be processing it, so a retry
// would only meet "already ingested"; following the document is what helps.
func stillIngesting(h errHints, docID string) errHints {
	h.Timeout = fmt.Sprintf("R2R may still be ingesting the file: follow it with r2r_monitor_task document_id=%s "+
		"(r2r_list_documents also shows it once R2R has it); if R2R never got it, ingest it again", docID)
	return h
}

// r2rErrorResult maps an error from the R2R client (or the call's context) to an isError
// result with actionable text. baseURL is shown for connection failures; it never carries
// credentials (r2r.NormalizeBaseURL rejects user info). Advice about credentials depends
// on where they came from, which the tool's context carries (see withAuth).
func r2rErrorResult(ctx context.Context, err error, baseURL string, h errHints) *mcp.CallToolResult {
	var argE *ArgError
	if errors.As(err, &argE) {
		return invalidArgs(argE)
	}
	if refusal, ok := errors.AsType[*rateRefusal](err); ok {
		return refusal.result()
	}
	var e *r2r.Error
	isR2R := errors.As(err, &e)

	switch {
	case errors.Is(err, r2r.ErrCredentials):
		// Before the deadline's case: the call was never sent, so R2R did not fail to answer.
		return credentialResult(ctx, err, baseURL)
	case errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)):
		return timeoutResult(ctx, err, baseURL, h)
	case errors.Is(err, context.Canceled):
		return toolerr.Result(toolerr.Info{Type: "cancelled", Code: toolerr.CodeInternal,
			Message: "The request was cancelled before R2R answered."})
	case errors.Is(err, r2r.ErrInvalidRequest) && !isR2R:
		return toolerr.Result(toolerr.Info{Type: "invalid_params", Code: toolerr.CodeInvalidParams,
			Message: "Invalid request: " + err.Error()})
	case !isR2R:
		return internalError("Unexpected error: " + err.Error() + ". Please report it.")
	}

	if errors.Is(err, r2r.ErrCircuitOpen) {
		return breakerOpenResult(err, e, baseURL)
	}

	if res := responseSizeResult(err, e); res != nil {
		return res
	}
	return toolerr.Result(httpErrorInfo(ctx, e, baseURL, h))
}

// httpErrorInfo describes an error R2R answered (or a request that got no answer) by
// status: the cause, R2R's own words, and the next step.
func httpErrorInfo(ctx context.Context, e *r2r.Error, baseURL string, h errHints) toolerr.Info {
	// R2R's error text is untrusted and may be long: cleaned and clipped before it is shown.
	msg := cleantext.Clip(cleantext.Line(strings.TrimSpace(e.Message)), maxR2RMessageBytes)
	r2rSays := ""
	if msg != "" {
		r2rSays = " R2R says: " + strings.TrimRight(msg, ".") + "."
	}
	info := toolerr.Info{Status: e.StatusCode, Retryable: e.Retryable()}
	if ci, _ := callFrom(ctx); modelRefused(ci, e) {
		info.Type, info.Code, info.Retryable = "invalid_params", toolerr.CodeInvalidParams, false
		info.Message = fmt.Sprintf("R2R cannot generate with model %s (%d): it serves no such model.%s "+
			"Omit model to use the model R2R is configured with, or name one its providers serve, as provider/model "+
			"(e.g. openai/gpt-4.1-mini).", quoteForText(ci.model, 120), e.StatusCode, r2rSays)
		return info
	}
	switch e.StatusCode {
	case 0:
		info.Type, info.Code, info.Retryable = "unreachable", toolerr.CodeR2RAPI, true
		var cause error
		if e.Err != nil {
			cause = errors.New(cleantext.Clip(cleantext.Line(e.Err.Error()), maxR2RMessageBytes))
		}
		info.Message = diagnose.Sentence(diagnose.NotAnswering(baseURL, "", cause))
	case http.StatusUnauthorized:
		info.Type, info.Code = "authentication", toolerr.CodeAuth
		info.Message = unauthorizedText(authFrom(ctx), r2rSays, fromCommand(ctx))
	case http.StatusForbidden:
		info.Type, info.Code = "forbidden", toolerr.CodeR2RAPI
		info.Message = fmt.Sprintf("R2R refused to %s (403).%s Use a collection or document your account owns "+
			"(r2r_list_collections shows them), or ask the R2R admin for access.", e.Op, r2rSays)
		if ci, ok := callFrom(ctx); ok && ci.joinAdvice != nil {
			if advice := ci.joinAdvice(context.WithoutCancel(ctx)); advice != "" {
				info.Message = fmt.Sprintf("R2R refused to %s (403).%s %s", e.Op, r2rSays, Sanitize(advice))
			}
		}
	case http.StatusNotFound:
		info.Type, info.Code = "not_found", toolerr.CodeR2RAPI
		if h.NotFound != "" {
			info.Message = h.NotFound
		} else {
			info.Message = fmt.Sprintf("R2R could not find what %s asked for (404).%s", e.Op, r2rSays)
		}
	case http.StatusConflict:
		info.Type, info.Code = "conflict", toolerr.CodeR2RAPI
		info.Message = fmt.Sprintf("R2R reported a conflict for %s (409).%s", e.Op, r2rSays)
	case http.StatusRequestEntityTooLarge:
		info.Type, info.Code = "too_large", toolerr.CodeR2RAPI
		info.Message = "R2R refused the file as too large (413)." + r2rSays
	case http.StatusUnsupportedMediaType:
		info.Type, info.Code = "unsupported_type", toolerr.CodeR2RAPI
		info.Message = "R2R does not accept this file type (415)." + r2rSays
	case http.StatusTooManyRequests:
		info.Type, info.Code, info.Retryable = "rate_limited", toolerr.CodeRateLimited, true
		secs := float64(defaultRetryAfterSeconds)
		if e.RetryAfter > 0 {
			secs = math.Ceil(e.RetryAfter.Seconds())
		}
		info.RetryAfter = &secs
		info.Message = fmt.Sprintf("R2R's rate limit was hit (429). Wait %.0f s before trying again.%s", secs, r2rSays)
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		info.Type, info.Code = "rejected", toolerr.CodeR2RAPI
		info.Message = fmt.Sprintf("R2R rejected the %s request (%d).%s Check the arguments.", e.Op, e.StatusCode, r2rSays)
	default:
		info.Type, info.Code = "server_error", toolerr.CodeR2RAPI
		next := "This looks like a problem inside R2R; check its logs."
		if info.Retryable {
			next = "R2R or a proxy in front of it is unavailable; try again shortly."
		}
		info.Message = fmt.Sprintf("R2R failed to %s (%d).%s %s", e.Op, e.StatusCode, r2rSays, next)
	}
	return info
}

// modelProblems are the words of R2R's 500 when the model a call named cannot be used
// (R2R 3.6.6 wraps LiteLLM's error in "Internal RAG Error"): LiteLLM knows no provider for
// the name, or the provider has no API key in R2R, or the provider has no such model.
var modelProblems = []string{"llm provider not provided", "api key not found", "does not exist", "model_not_found", "notfounderror"}

// modelRefused reports whether e is R2R failing on the model the call named: R2R answers
// 500, but the caller's argument caused it, so it is the caller's to change.
func modelRefused(ci callInfo, e *r2r.Error) bool {
	if ci.model == "" || e.StatusCode != http.StatusInternalServerError {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, p := range modelProblems {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// maxR2RMessageBytes is how much of R2R's own error text a result repeats.
const maxR2RMessageBytes = 400

// responseSizeResult is the result for an R2R answer r2r-mcp would not hold in memory: too
// large by itself, or too large beside the answers being read at the same moment; nil for
// other errors.
func responseSizeResult(err error, e *r2r.Error) *mcp.CallToolResult {
	switch {
	case errors.Is(err, r2r.ErrBodyBudget):
		secs := 1.0
		return toolerr.Result(toolerr.Info{Type: "busy", Code: toolerr.CodeRateLimited, Retryable: true, RetryAfter: &secs,
			Message: fmt.Sprintf("r2r-mcp is busy: R2R's answers to the calls in flight fill its memory budget, so the answer to %s was not read. Retry in 1 s.", e.Op)})
	case errors.Is(err, r2r.ErrResponseTooLarge):
		return toolerr.Result(toolerr.Info{Type: "too_large", Code: toolerr.CodeR2RAPI, Status: e.StatusCode,
			Message: fmt.Sprintf("R2R's answer to %s is larger than r2r-mcp reads (%s). Ask for less: a smaller limit, a page, or a narrower filter.", e.Op, e.Message)})
	}
	return nil
}

type authKey struct{}

// withAuth makes where the credentials came from (evaluated when an error needs it: a
// lazily read credential's source is only known after its first use) available to
// r2rErrorResult.
func withAuth(ctx context.Context, origin func() auth.Origin) context.Context {
	return context.WithValue(ctx, authKey{}, origin)
}

func authFrom(ctx context.Context) auth.Origin {
	if f, ok := ctx.Value(authKey{}).(func() auth.Origin); ok && f != nil {
		return f()
	}
	return auth.Origin{}
}

// authState is where the credentials the tools send come from, as they say now
// (auth.OriginOf; a source "" counts as none).
func (d *Deps) authState() auth.Origin { return auth.OriginOf(d.Client.Credentials()) }

// unauthorizedText is the text for a 401: what to change depends on where the rejected
// credential came from (auth.Source.Fix). The server reads the stored credential again
// after a 401, so a fresh login helps the next call; the environment is read only at
// start-up. A command (command true) reads the credential afresh each run.
func unauthorizedText(a auth.Origin, r2rSays string, command bool) string {
	src := a.Source
	again := "call again"
	if command {
		again = "run the command again"
	}
	switch {
	case src.None() && strings.TrimSpace(a.Warning()) != "":
		// Lead with why nothing was sent (an unusable credentials file, a keyring that did
		// not answer): "run login" alone would not fix a file that only needs chmod.
		return "R2R requires authentication (401), and r2r-mcp has no usable credential: " +
			strings.TrimRight(strings.TrimSpace(a.Warning()), ".") + ". Fix that, or run `r2r-mcp login` in a terminal, then " + again + "."
	case src.None() && command:
		return "R2R requires authentication (401)." + r2rSays + " " + src.Fix() + " Then run the command again."
	case src.None():
		return "R2R requires authentication (401)." + r2rSays + " " + src.Fix() + " Then call again: the server reads the " +
			"stored credential after a 401 (R2R_API_KEY set in your MCP client's configuration takes effect when the client " +
			"restarts the server)."
	}
	msg := fmt.Sprintf("R2R rejected the credential (from %s) (401).%s %s", src.Place(), r2rSays, src.Fix())
	switch {
	case command:
		msg += " Then run the command again."
	case !src.FromEnv():
		msg += " Then call again: the server reads the stored credential again after a 401."
	}
	return msg + warningText(a)
}

func warningText(a auth.Origin) string {
	if w := strings.TrimSpace(a.Warning()); w != "" {
		return " Credentials warning: " + strings.TrimRight(w, ".") + "."
	}
	return ""
}

// credentialResult is the answer when the credentials could not be applied, so nothing
// was sent: a password login or token refresh failed, the keyring did not answer. When
// the login itself could not reach R2R (or R2R failed), that is reported as such.
func credentialResult(ctx context.Context, err error, baseURL string) *mcp.CallToolResult {
	cause := err
	if ce, ok := errors.AsType[*r2r.CredentialError](err); ok && ce.Err != nil {
		cause = ce.Err
		if inner, ok := errors.AsType[*r2r.Error](ce.Err); ok && !credentialsRefused(inner) {
			return r2rErrorResult(ctx, inner, baseURL, errHints{})
		}
	}
	a := authFrom(ctx)
	info := toolerr.Info{Type: "authentication", Code: toolerr.CodeAuth}
	if errors.Is(cause, auth.ErrSessionExpired) {
		// The verdict names the one thing to do; nothing else is added to it.
		info.Message = "r2r-mcp is no longer logged in: " + strings.TrimRight(cause.Error(), ".") +
			", then call again (no restart needed)." + warningText(a)
		return toolerr.Result(info)
	}
	if errors.Is(cause, auth.ErrSessionBusy) {
		info.Type, info.Code, info.Retryable = "busy", toolerr.CodeRateLimited, true
		info.Message = "r2r-mcp " + strings.TrimRight(cause.Error(), ".") + "."
		return toolerr.Result(info)
	}
	src := a.Source
	var next string
	switch {
	case errors.Is(cause, auth.ErrKeyringTimeout):
		info.Retryable = true
		next = "Unlock the system keyring (answer its prompt) and call again."
	case errors.Is(cause, auth.ErrKeyringUnavailable):
		next = "Start or unlock the system keyring and call again (a failed read is retried), or set R2R_API_KEY in your MCP " +
			"client's configuration."
	case src.FromEnv():
		next = src.Fix()
	default:
		next = src.Fix() + " Then call again."
	}
	info.Message = fmt.Sprintf("r2r-mcp could not authenticate to R2R at %s: %s. %s `r2r-mcp doctor` shows where "+
		"the credentials come from.%s", baseURL, strings.TrimRight(cause.Error(), "."), next, warningText(a))
	return toolerr.Result(info)
}

// credentialsRefused reports whether a login/refresh failure means R2R turned the
// credentials down (a 4xx other than 408 and 429), as opposed to R2R being unreachable,
// overloaded or failing.
func credentialsRefused(e *r2r.Error) bool {
	s := e.StatusCode
	return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
}

// timeoutResult is the answer when the call's deadline passed before R2R answered. The
// caller's own cancellation is not a timeout (see r2rErrorResult).
func timeoutResult(ctx context.Context, err error, baseURL string, h errHints) *mcp.CallToolResult {
	op := ""
	if e, ok := errors.AsType[*r2r.Error](err); ok && e.Op != "" {
		op = " (still waiting for its answer to " + e.Op + ")"
	}
	info := toolerr.Info{Type: "timeout", Code: toolerr.CodeR2RAPI, Retryable: h.Timeout == ""}
	ci, ok := callFrom(ctx)
	if !ok {
		next := "It may be busy: try again, or narrow the request (smaller limit, shorter question)"
		if h.Timeout != "" {
			next = h.Timeout
		}
		info.Message = fmt.Sprintf("R2R at %s did not answer in time%s. %s.", baseURL, op, next)
		return toolerr.Result(info)
	}
	next := "Try again shortly, or narrow the request (smaller limit, shorter question); if R2R keeps hanging, check it with `r2r-mcp doctor`"
	if ci.flag != "" {
		next += ", or raise serve's " + ci.flag
	}
	if h.Timeout != "" {
		next = h.Timeout
	}
	info.Message = fmt.Sprintf("R2R at %s did not answer %s within %s%s. %s.",
		baseURL, ci.tool, secondsText(ci.timeout), op, next)
	return toolerr.Result(info)
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
	return toolerr.Result(toolerr.Info{Type: "breaker_open", Code: toolerr.CodeBreakerOpen, Retryable: true, RetryAfter: &secs,
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
