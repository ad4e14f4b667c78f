package gateway_test

import (
	"net/http"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// Every error code of a tool result has its HTTP status, and the statuses the transport
// answers itself map back to a code.
func TestStatusOfEachErrorClass(t *testing.T) {
	for _, tc := range []struct {
		code, status int
	}{
		{toolerr.CodeInvalidParams, http.StatusBadRequest},
		{toolerr.CodeAuth, http.StatusUnauthorized},
		{toolerr.CodeRateLimited, http.StatusTooManyRequests},
		{toolerr.CodeBreakerOpen, http.StatusServiceUnavailable},
		{toolerr.CodeR2RAPI, http.StatusBadGateway},
		{toolerr.CodeInternal, http.StatusInternalServerError},
		{-1, http.StatusInternalServerError},
	} {
		if got := gateway.StatusOf(tc.code); got != tc.status {
			t.Errorf("StatusOf(%d) = %d, want %d", tc.code, got, tc.status)
		}
	}
	for _, tc := range []struct {
		status, code int
	}{
		{http.StatusBadRequest, toolerr.CodeInvalidParams},
		{http.StatusNotFound, toolerr.CodeInvalidParams},
		{http.StatusUnauthorized, toolerr.CodeAuth},
		{http.StatusForbidden, toolerr.CodeAuth},
		{http.StatusTooManyRequests, toolerr.CodeRateLimited},
		{http.StatusServiceUnavailable, toolerr.CodeR2RAPI},
		{http.StatusTeapot, toolerr.CodeInternal},
	} {
		if got := gateway.CodeOf(tc.status); got != tc.code {
			t.Errorf("CodeOf(%d) = %d, want %d", tc.status, got, tc.code)
		}
	}
}
