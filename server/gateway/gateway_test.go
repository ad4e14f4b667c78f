package gateway_test

import (
	"net/http"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// Every error code of a tool result has its HTTP status, and the statuses the transport
// answers itself map back to a code.
func TestStatusOfEachErrorClass(t *testing.T) {
	for _, tc := range []struct {
		code, status int
	}{
		{tools.CodeInvalidParams, http.StatusBadRequest},
		{tools.CodeAuth, http.StatusUnauthorized},
		{tools.CodeRateLimited, http.StatusTooManyRequests},
		{tools.CodeBreakerOpen, http.StatusServiceUnavailable},
		{tools.CodeR2RAPI, http.StatusBadGateway},
		{tools.CodeInternal, http.StatusInternalServerError},
		{-1, http.StatusInternalServerError},
	} {
		if got := gateway.StatusOf(tc.code); got != tc.status {
			t.Errorf("StatusOf(%d) = %d, want %d", tc.code, got, tc.status)
		}
	}
	for _, tc := range []struct {
		status, code int
	}{
		{http.StatusBadRequest, tools.CodeInvalidParams},
		{http.StatusNotFound, tools.CodeInvalidParams},
		{http.StatusUnauthorized, tools.CodeAuth},
		{http.StatusForbidden, tools.CodeAuth},
		{http.StatusTooManyRequests, tools.CodeRateLimited},
		{http.StatusServiceUnavailable, tools.CodeR2RAPI},
		{http.StatusTeapot, tools.CodeInternal},
	} {
		if got := gateway.CodeOf(tc.status); got != tc.code {
			t.Errorf("CodeOf(%d) = %d, want %d", tc.status, got, tc.code)
		}
	}
}
