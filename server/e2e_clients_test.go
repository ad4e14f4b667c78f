package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// session is what the scenarios need from an MCP client, so the same scenario runs with
// mcp-go's client and with the official Go SDK's.
type session interface {
	protocolVersion() string
	serverName() string
	instructions() string
	listTools(ctx context.Context) ([]toolInfo, error)
	call(ctx context.Context, name string, args map[string]any) (toolResult, error)
	listResources(ctx context.Context) ([]string, error)
	listTemplates(ctx context.Context) ([]string, error)
	readResource(ctx context.Context, uri string) (string, error)
	close() error
}

type toolInfo struct {
	Name         string
	ReadOnly     *bool
	InputSchema  map[string]any
	OutputSchema map[string]any // nil when the tool declares none
}

// toolResult is a tools/call result as both clients see it.
type toolResult struct {
	IsError    bool
	Text       string
	Structured map[string]any
	// Err is an error result's _meta["r2r-mcp/error"] ({type, code, retryable, ...}); error
	// results carry no structuredContent (it would have to match the outputSchema).
	Err map[string]any
}

// errorMeta fills r.Err from a result's _meta and rejects error results that carry
// structuredContent.
func (r *toolResult) errorMeta(meta map[string]any) error {
	if !r.IsError {
		return nil
	}
	if r.Structured != nil {
		return fmt.Errorf("error result carries structuredContent %v (text %q)", r.Structured, r.Text)
	}
	if err := remarshal(meta[toolerr.MetaKey], &r.Err); err != nil || r.Err == nil {
		return fmt.Errorf("error result without _meta[%q]: %v (text %q)", toolerr.MetaKey, meta, r.Text)
	}
	return nil
}

func (r toolResult) str(key string) string {
	s, _ := r.Structured[key].(string)
	return s
}

// clientOpts select how a client connects.
type clientOpts struct {
	// legacy pins protocol version 2025-11-25 (initialize handshake); otherwise the client
	// negotiates the newest version it knows.
	legacy bool
	// roots are file paths the client offers as MCP roots; nil = no roots capability.
	roots []string
}

func fileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// --- mark3labs/mcp-go client ---

type mcpgoSession struct {
	c    *mcpgoclient.Client
	init *mcpgo.InitializeResult
}

type mcpgoRoots []string

func (r mcpgoRoots) ListRoots(context.Context, mcpgo.ListRootsRequest) (*mcpgo.ListRootsResult, error) {
	res := &mcpgo.ListRootsResult{Roots: []mcpgo.Root{}}
	for _, p := range r {
		res.Roots = append(res.Roots, mcpgo.Root{URI: fileURI(p), Name: filepath.Base(p)})
	}
	return res, nil
}

// connectMCPGo runs mcp-go's client over p's stdio and initializes.
func connectMCPGo(ctx context.Context, t testing.TB, p *servertest.Proc, o clientOpts) session {
	t.Helper()
	var opts []mcpgoclient.ClientOption
	if o.legacy {
		opts = append(opts, mcpgoclient.WithProtocolVersion(mcpgo.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	if o.roots != nil {
		opts = append(opts, mcpgoclient.WithRootsHandler(mcpgoRoots(o.roots)))
	}
	c := servertest.NewMCPGoClient(ctx, t, p, opts...)
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "r2r-mcp-e2e-mcpgo", Version: "1.0.0"}
	init, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("mcp-go initialize: %v\nstderr:\n%s", err, p.Stderr.String())
	}
	return &mcpgoSession{c: c, init: init}
}

func (s *mcpgoSession) protocolVersion() string { return s.init.ProtocolVersion }
func (s *mcpgoSession) serverName() string      { return s.init.ServerInfo.Name }
func (s *mcpgoSession) instructions() string    { return s.init.Instructions }
func (s *mcpgoSession) close() error            { return s.c.Close() }

func (s *mcpgoSession) listTools(ctx context.Context) ([]toolInfo, error) {
	res, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	out := make([]toolInfo, 0, len(res.Tools))
	for _, tl := range res.Tools {
		var wire struct {
			InputSchema  map[string]any `json:"inputSchema"`
			OutputSchema map[string]any `json:"outputSchema"`
		}
		if err := remarshal(tl, &wire); err != nil {
			return nil, err
		}
		out = append(out, toolInfo{Name: tl.Name, ReadOnly: tl.Annotations.ReadOnlyHint,
			InputSchema: wire.InputSchema, OutputSchema: wire.OutputSchema})
	}
	return out, nil
}

func (s *mcpgoSession) call(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return toolResult{}, err
	}
	r, err := servertest.NewToolResult(res)
	if err != nil {
		return toolResult{}, err
	}
	out := toolResult{IsError: r.IsError, Text: r.Text, Structured: r.Structured}
	if err := out.errorMeta(r.Meta); err != nil {
		return toolResult{}, err
	}
	return out, nil
}

func (s *mcpgoSession) listResources(ctx context.Context) ([]string, error) {
	res, err := s.c.ListResources(ctx, mcpgo.ListResourcesRequest{})
	if err != nil {
		return nil, err
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	return uris, nil
}

func (s *mcpgoSession) listTemplates(ctx context.Context) ([]string, error) {
	res, err := s.c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res.ResourceTemplates {
		out = append(out, r.URITemplate.Raw())
	}
	return out, nil
}

func (s *mcpgoSession) readResource(ctx context.Context, uri string) (string, error) {
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, c := range res.Contents {
		if tc, ok := c.(mcpgo.TextResourceContents); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// --- modelcontextprotocol/go-sdk client ---

type sdkSession struct {
	cs *sdk.ClientSession
}

// connectSDK runs the official Go SDK client over p's stdio and initializes.
func connectSDK(ctx context.Context, t testing.TB, p *servertest.Proc, o clientOpts) session {
	t.Helper()
	opts := &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}}
	if o.roots != nil {
		opts.Capabilities.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "r2r-mcp-e2e-gosdk", Version: "1.0.0"}, opts)
	for _, r := range o.roots {
		c.AddRoots(&sdk.Root{URI: fileURI(r), Name: filepath.Base(r)})
	}
	var so *sdk.ClientSessionOptions
	if o.legacy {
		so = &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	}
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: p.Stdout, Writer: p.Stdin}, so)
	if err != nil {
		t.Fatalf("go-sdk connect: %v\nstderr:\n%s", err, p.Stderr.String())
	}
	return &sdkSession{cs: cs}
}

func (s *sdkSession) protocolVersion() string { return s.cs.InitializeResult().ProtocolVersion }
func (s *sdkSession) serverName() string      { return s.cs.InitializeResult().ServerInfo.Name }
func (s *sdkSession) instructions() string    { return s.cs.InitializeResult().Instructions }
func (s *sdkSession) close() error            { return s.cs.Close() }

func (s *sdkSession) listTools(ctx context.Context) ([]toolInfo, error) {
	var out []toolInfo
	for tl, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		var schema, output map[string]any
		if err := remarshal(tl.InputSchema, &schema); err != nil {
			return nil, err
		}
		if tl.OutputSchema != nil {
			if err := remarshal(tl.OutputSchema, &output); err != nil {
				return nil, err
			}
		}
		ti := toolInfo{Name: tl.Name, InputSchema: schema, OutputSchema: output}
		if tl.Annotations != nil {
			ro := tl.Annotations.ReadOnlyHint
			ti.ReadOnly = &ro
		}
		out = append(out, ti)
	}
	return out, nil
}

func (s *sdkSession) call(ctx context.Context, name string, args map[string]any) (toolResult, error) {
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return toolResult{}, err
	}
	out := toolResult{IsError: res.IsError}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	out.Text = strings.Join(texts, "\n")
	if res.StructuredContent != nil {
		if err := remarshal(res.StructuredContent, &out.Structured); err != nil {
			return toolResult{}, fmt.Errorf("structuredContent: %w", err)
		}
	}
	if err := out.errorMeta(res.Meta); err != nil {
		return toolResult{}, err
	}
	return out, nil
}

func (s *sdkSession) listResources(ctx context.Context) ([]string, error) {
	var uris []string
	for r, err := range s.cs.Resources(ctx, nil) {
		if err != nil {
			return nil, err
		}
		uris = append(uris, r.URI)
	}
	return uris, nil
}

func (s *sdkSession) listTemplates(ctx context.Context) ([]string, error) {
	var out []string
	for r, err := range s.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, r.URITemplate)
	}
	return out, nil
}

func (s *sdkSession) readResource(ctx context.Context, uri string) (string, error) {
	res, err := s.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var texts []string
	for _, c := range res.Contents {
		texts = append(texts, c.Text)
	}
	return strings.Join(texts, "\n"), nil
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
