package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// rootsTimeout bounds a roots/list request: a client that declares roots but never
// answers must not stall the tool call that needed the project.
const rootsTimeout = 3 * time.Second

var errNoRoots = errors.New("the client does not offer roots")

var errModernRoots = errors.New("roots are not requested on protocol 2026-07-28 and later")

// rootsBridge feeds the client's MCP roots to the project resolver.
//
// Clients on protocol versions up to 2025-11-25 that declare the roots capability are asked
// with a server-initiated roots/list request the first time a tool or resource needs the
// project, and again after notifications/roots/list_changed. Protocol 2026-07-28 forbids
// server-initiated requests and deprecates roots (SEP-2577); asking through a multi
// round-trip tools/call (SEP-2322) is possible in principle, but the Go SDK v1.8.0 client
// fails to decode mcp-go's parameterless roots input request and would see every first
// tool call fail. So on 2026-07-28 the project comes from the working directory
// (--project-dir), which is where MCP clients start stdio servers anyway.
type rootsBridge struct {
	srv      *mcpserver.MCPServer
	projects *project.Resolver
	logger   *slog.Logger
}

// request is the resolver's roots provider: one roots/list round trip on a legacy session.
func (b *rootsBridge) request(ctx context.Context) ([]string, error) {
	if !clientOffersRoots(ctx) {
		return nil, errNoRoots
	}
	if mcpserver.IsModernRequest(ctx) {
		return nil, errModernRoots
	}
	ctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := b.srv.RequestRoots(ctx, mcp.ListRootsRequest{Request: mcp.Request{Method: string(mcp.MethodListRoots)}})
	if err != nil {
		b.logger.WarnContext(ctx, "roots/list failed; inferring the project from the working directory", "error", err)
		return nil, err
	}
	uris := rootURIs(res)
	b.logger.Debug("client roots", "roots", uris)
	return uris, nil
}

// invalidate handles notifications/roots/list_changed.
func (b *rootsBridge) invalidate() {
	b.projects.InvalidateRoots()
	b.logger.Debug("client roots changed")
}

// clientOffersRoots reports whether the client declared the roots capability, per request
// on modern protocol versions and at initialize on older ones.
func clientOffersRoots(ctx context.Context) bool {
	if info := mcpserver.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Roots != nil
	}
	s, ok := mcpserver.ClientSessionFromContext(ctx).(mcpserver.SessionWithClientInfo)
	return ok && s.GetClientCapabilities().Roots != nil
}

func rootURIs(res *mcp.ListRootsResult) []string {
	if res == nil {
		return nil
	}
	uris := make([]string, 0, len(res.Roots))
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return uris
}
