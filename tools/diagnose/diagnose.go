// Package diagnose checks R2R live and words what it finds, once, for r2r_status,
// `r2r-mcp status` and `r2r-mcp doctor`: whether R2R answers its health check (healthy,
// failing, unreachable) and what R2R says about the credential (accepted, rejected, none
// where one is needed, ...). Each verdict comes as what happened and what to do; the
// callers arrange the two for their own reports.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// StartR2R is the next step when R2R cannot be reached. urlSource names where the URL
// came from ("" = not said).
func StartR2R(urlSource string) string {
	s := "Start R2R, or point r2r-mcp at it with --url, R2R_API_URL or r2r-mcp login --url URL"
	if urlSource != "" {
		s += " (the URL now comes from " + urlSource + ")"
	}
	return s + "."
}

// CannotReach is the verdict on R2R at url not answering at all; cause is the transport's
// error text.
func CannotReach(url, cause string) string { return "cannot reach R2R at " + url + ": " + cause }

// NotAnswering words R2R at url giving no answer, the transport failing with cause: what
// happened (a clause, starting lower case) and what to do (a sentence). An https:// URL
// whose server answered in plain HTTP is not down: its URL's scheme is wrong.
func NotAnswering(url, urlSource string, cause error) (what, fix string) {
	text := "no answer"
	if cause != nil {
		text = cause.Error()
	}
	if plain, ok := strings.CutPrefix(url, "https://"); ok && strings.Contains(text, "server gave HTTP response to HTTPS client") {
		plain = "http://" + plain
		return "R2R at " + url + " answers plain HTTP, not HTTPS",
			"Use " + plain + " instead: with --url " + plain + ", R2R_API_URL, or r2r-mcp login --url " + plain + "."
	}
	return CannotReach(url, text), StartR2R(urlSource)
}

// Sentence joins a verdict's what and fix into one report line: "Cannot reach R2R at …:
// … . Start R2R, …".
func Sentence(what, fix string) string {
	what = strings.TrimRight(what, ".") // R2R's own message may end with one ("No credentials provided.")
	s := what + "."
	if what != "" {
		s = strings.ToUpper(what[:1]) + what[1:] + "."
	}
	if fix != "" {
		s += " " + fix
	}
	return s
}

// HealthVerdict is R2R's state by its health check; the values are the words r2r_status and
// `status --json` report.
type HealthVerdict string

// Health verdicts.
const (
	Healthy     HealthVerdict = "ok"          // GET /v3/health answered 200
	Failing     HealthVerdict = "error"       // R2R answered with an error status
	Unreachable HealthVerdict = "unreachable" // no answer: refused, timed out, DNS, ...
)

// Health is the answer to GET /v3/health.
type Health struct {
	Verdict HealthVerdict
	Err     error // nil when healthy
	Latency time.Duration
	// Timeout is the time the check was given.
	Timeout time.Duration
	// Status is the HTTP status R2R answered an error with; 0 when it did not answer (or
	// Err is nil).
	Status int
	// Cause is the transport failure when R2R did not answer.
	Cause error
}

// HealthChecker is what CheckHealth asks: an *r2r.Client.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// CheckHealth sends GET /v3/health within timeout.
func CheckHealth(ctx context.Context, c HealthChecker, timeout time.Duration) Health {
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := c.Health(hctx)
	h := Health{Verdict: Healthy, Err: err, Latency: time.Since(start), Timeout: timeout}
	if err == nil {
		return h
	}
	if re, ok := errors.AsType[*r2r.Error](err); ok {
		h.Status, h.Cause = re.StatusCode, re.Err
	}
	if h.Status == 0 && h.Cause == nil {
		h.Cause = err
	}
	h.Verdict = Failing
	if h.Status == 0 {
		h.Verdict = Unreachable
	}
	return h
}

// Problem words a failed health check of R2R at url: what happened (a clause, starting
// lower case) and what to do (a sentence). urlSource is where the URL came from.
func (h Health) Problem(url, urlSource string) (what, fix string) {
	switch {
	case h.Verdict == Unreachable && errors.Is(h.Err, context.DeadlineExceeded):
		return fmt.Sprintf("R2R at %s did not answer GET /v3/health within %s", url, h.Timeout), StartR2R(urlSource)
	case h.Verdict == Unreachable:
		return NotAnswering(url, urlSource, h.Cause)
	case h.Status == http.StatusNotFound || h.Status == http.StatusMethodNotAllowed:
		return fmt.Sprintf("%s does not look like an R2R v3 server (%d on GET /v3/health)", url, h.Status),
			"Check the URL (from " + urlSource + "): it must be R2R's base address, e.g. http://localhost:7272."
	case h.Status >= 500:
		return fmt.Sprintf("R2R at %s is not healthy: %v", url, h.Err), "Check R2R's logs (and its database)."
	}
	return fmt.Sprintf("GET %s/v3/health failed: %v", url, h.Err), "Check the URL and that it is R2R."
}
