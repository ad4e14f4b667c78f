package httpserve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// TestMalformedResourceURIIsInvalidParams: over HTTP as over stdio, a document URI whose id
// is no UUID is the caller's error (-32602), not an internal one.
func TestMalformedResourceURIIsInvalidParams(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(c *server.Config, o *httpserve.Options) {
		c.Credentials, c.ReadOnly = r2r.APIKey(tm.Bob.Key), true
		o.AuthMode = httpserve.AuthShared
	})
	c := mcpClient(t, rep.URL, nil)
	_, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "r2r://documents/not-a-uuid"}})
	if !errors.Is(err, mcp.ErrInvalidParams) || !strings.Contains(err.Error(), "must be a UUID") {
		t.Fatalf("malformed URI: %#v", err)
	}
	if _, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: tools.SearchHistoryURI}}); err != nil {
		t.Fatalf("a good URI: %v", err)
	}
}
