package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/knob"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// defaultConfig is serve's default configuration of the tools.
func defaultConfig() Config {
	var c Config
	knob.Defaults(&c)
	return c
}

// testConfig is defaultConfig without rate limits (the tests make many calls at once)
// and with fast ingestion polls.
func testConfig() Config {
	c := defaultConfig()
	c.RateLimit, c.RAGRateLimit, c.PollInterval = 0, 0, 5*time.Millisecond
	return c
}

// rated is testConfig with every tool, r2r_rag_query included, limited to rate calls per
// second with bursts of burst.
func rated(rate float64, burst int) Config {
	c := testConfig()
	c.RateLimit, c.RateBurst, c.RAGRateLimit, c.RAGRateBurst = rate, burst, rate, burst
	return c
}

// env is one test setup: an emulated R2R, a project directory (a git root) and the tools.
type env struct {
	t       *testing.T
	r2r     *r2rtest.Server
	client  *r2r.Client
	project string // real path of the project root
	deps    *Deps
	tools   map[string]Tool
	list    []Tool
	cliOnce sync.Once
	cli     *client.Client // for call, made on first use
}

type envOption func(*envConfig)

type envConfig struct {
	emu        r2rtest.Options
	name       string
	extraRoots []string
	creds      r2r.Credentials
	middleware []r2r.Middleware
	deps       []func(*Deps)
}

// withDeps adjusts the Deps before the registry is built (rate limits are read then).
func withDeps(f func(*Deps)) envOption { return func(c *envConfig) { c.deps = append(c.deps, f) } }

// withMiddleware wraps the R2R client (e.g. with r2r.Resilient).
func withMiddleware(mw ...r2r.Middleware) envOption {
	return func(c *envConfig) { c.middleware = append(c.middleware, mw...) }
}

func withEmulator(o r2rtest.Options) envOption { return func(c *envConfig) { c.emu = o } }
func withProjectName(n string) envOption       { return func(c *envConfig) { c.name = n } }

func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	cfg := envConfig{name: "demo-app"}
	for _, o := range opts {
		o(&cfg)
	}
	srv := r2rtest.NewServer(t, cfg.emu)
	c, err := r2r.New(r2r.Options{BaseURL: srv.URL, Credentials: cfg.creds, Middleware: cfg.middleware})
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, cfg.name)
	mustMkdir(t, filepath.Join(proj, ".git"))
	deps := &Deps{
		Config:   testConfig(),
		Client:   c,
		Projects: project.NewResolver(project.Options{WorkDir: proj, CacheFile: filepath.Join(base, "cfg", "projects.json"), ExtraRoots: cfg.extraRoots}),
		History:  NewSearchHistory(0),
	}
	deps.Status = StatusInfo{Version: "test", URLSource: "test"}
	for _, f := range cfg.deps {
		f(deps)
	}
	e := &env{t: t, r2r: srv, client: c, project: proj, deps: deps, tools: map[string]Tool{}}
	e.list = Registry(deps)
	for _, tl := range e.list {
		e.tools[tl.Def.Name] = tl
	}
	return e
}

// call invokes a tool through the in-process client, as a client of the server would:
// its arguments are validated by the middleware the server runs (ValidateArgs).
func (e *env) call(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	return e.callCtx(context.Background(), name, args)
}

// callCtx is call with the request's context.
func (e *env) callCtx(ctx context.Context, name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	if _, ok := e.tools[name]; !ok {
		e.t.Fatalf("no tool %s", name)
	}
	res, err := e.invoke(ctx, name, args)
	if err != nil {
		e.t.Fatalf("%s returned a protocol error: %v", name, err)
	}
	return res
}

// invoke is callCtx for any goroutine: it reports a protocol error instead of failing the
// test.
func (e *env) invoke(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	e.cliOnce.Do(func() { e.cli = e.mcpClient() })
	return invoke(ctx, e.cli, name, args)
}

// invoke calls tool name through c.
func invoke(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err == nil && res == nil {
		err = fmt.Errorf("%s returned no result", name)
	}
	return res, err
}

// ok calls a tool and fails the test on an error result.
func (e *env) ok(name string, args map[string]any) *mcp.CallToolResult {
	e.t.Helper()
	res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	return res
}

// fail calls a tool and fails the test unless it returns an error result.
func (e *env) fail(name string, args map[string]any) (*mcp.CallToolResult, toolerr.Info) {
	e.t.Helper()
	res := e.call(name, args)
	if !res.IsError {
		e.t.Fatalf("%s(%v) succeeded, want an error result: %s", name, args, text(res))
	}
	if res.StructuredContent != nil {
		e.t.Fatalf("error result with structured content (it must match the outputSchema): %#v", res.StructuredContent)
	}
	info, ok := toolerr.Of(res)
	if !ok {
		e.t.Fatalf("error result without toolerr.Info in _meta: %#v", res.Meta)
	}
	if info.Message == "" || text(res) != info.Message {
		e.t.Fatalf("error text %q does not match structured message %q", text(res), info.Message)
	}
	return res, info
}

// write creates a file in the project.
func (e *env) write(rel, content string) string {
	e.t.Helper()
	p := filepath.Join(e.project, filepath.FromSlash(rel))
	mustMkdir(e.t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// mcpClient serves the registry through a real mcp-go server (see serve).
func (e *env) mcpClient(opts ...server.ServerOption) *client.Client {
	e.t.Helper()
	return serve(e.t, e.list, e.deps, opts...)
}

// serve serves tools ts, in the call chain the server serves them in (Chain: argument
// validation, deadlines, rate limits), and the resources of d through a real mcp-go server
// (with mcp-go's output schema validation) and returns a connected in-process client.
func serve(t *testing.T, ts []Tool, d *Deps, opts ...server.ServerOption) *client.Client {
	t.Helper()
	base := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, false),
		server.WithStrictInputSchemaDefault(),
		server.WithOutputSchemaValidation(),
		server.WithRecovery(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(PromptCompletions(d, false)),
		server.WithResourceCompletionProvider(ResourceCompletions(d)),
	}
	s := server.NewMCPServer("r2r-mcp-test", "test", append(base, opts...)...)
	s.AddPrompts(Prompts(d, false)...)
	s.AddTools(ServerTools(Chain(d, ts, Layers{}))...)
	s.AddResources(Resources(d)...)
	s.AddResourceTemplates(ResourceTemplates(d)...)
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "tools-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// text is the concatenated text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// structured decodes a result's structured content into out (via JSON, as a client sees it).
func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}
