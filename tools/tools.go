// Package tools defines r2r-mcp's MCP tools and resources: one registry that the server,
// the README tools table, the schema snapshots and the tests all read. Each tool is a
// constructor returning its definition and handler; handlers parse arguments strictly,
// resolve the project's collection, call R2R and shape a compact, cited result for a model
// plus typed structured content for programs.
package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
	"github.com/r2r-mcp/r2r-mcp/tools/argcheck"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

// Tool groups.
const (
	GroupSearch      = "search"
	GroupDocuments   = "documents"
	GroupCollections = "collections"
	GroupStatus      = "status"
)

// Tool is one registry entry: a tool's definition, its handler and its policy. The policy
// fields are the only place a tool's deadline, rate class and scope rules are decided;
// nothing outside the tool's own file looks at its name.
type Tool struct {
	Def mcp.Tool // title + all four annotations set explicitly, outputSchema
	// Handler answers one call as mcp-go calls it. Registry sets the tool's own handler;
	// Chain replaces it with the whole call chain around that handler.
	Handler  server.ToolHandlerFunc
	Group    string // "search", "documents", "collections", "status"
	ReadOnly bool   // must equal Def.Annotations.ReadOnlyHint (checked by Check)
	// Cached marks tools whose reads go through the result cache: their rate limit applies
	// only to calls that miss and reach R2R.
	Cached bool
	// Aliases are other words for enum values that ValidateArgs reads as the canonical
	// value; each is named in its argument's description (checked by Check).
	Aliases argcheck.ValueAliases
	// Deadline bounds one call and names the serve flag that sets the bound ("" = none);
	// nil = every tool's call timeout (--timeout).
	Deadline func(req mcp.CallToolRequest) (time.Duration, string)
	// Rate is the class of the tool's rate limit (RateLimits.PerClass).
	Rate RateClass
	// RemoteSpansAll lets a read without collection_id on a remote server (serve --http)
	// cover every collection the user may read; other tools need a collection there.
	RemoteSpansAll bool
	// Example is a call of the tool as a model would make it; the shared tests make it on a
	// fresh project (see Example).
	Example Example

	run handler // the tool's own handler, told about its call explicitly
}

// Example is one call of a tool and what it answers on a fresh project: a git repository
// holding README.md, served by an R2R with no documents yet (the emulator, r2r/r2rtest).
type Example struct {
	Args map[string]any // the call's arguments; Check requires them (an empty map for none)
	// Error is the toolerr type of the error result the call answers with on a fresh
	// project, e.g. for a document id nothing has; "" = a successful result.
	Error string
}

// handler is a tool's own handler: c holds what the call chain established for this call.
type handler func(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, error)

// call is what the call chain tells a tool's handler about the call it answers. It is passed
// to the handler as a value, never through the context: the handler hands it on to what
// needs it (scoper.resolve, cachedLoad).
type call struct {
	// spansAll is Tool.RemoteSpansAll of the call's tool.
	spansAll bool
	// gate takes the call's rate-limit token when the call first asks R2R (tools whose
	// limit applies after the cache); a gate without a limiter admits every call.
	gate rateGate
}

// own returns t's own handler as mcp-go calls it, with a call value of t's policy and no
// rate limit.
func (t *Tool) own() server.ToolHandlerFunc {
	if t.run == nil {
		return t.Handler
	}
	run, c := t.run, &call{spansAll: t.RemoteSpansAll}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return run(ctx, c, req)
	}
}

// Cache is what the tools need from the result cache; *cache.Cache implements it (and a
// nil *cache.Cache is a valid, disabled cache). Implementations must be safe for
// concurrent use. A nil Cache disables caching.
type Cache interface {
	// Key returns the opaque key of one request under the current generation of its
	// collection (see cache.Key).
	Key(k cache.Key) (string, error)
	// GetOrLoad returns the value under key, or runs load and stores its result for the
	// TTL of kind; errors are returned, never stored. cached reports a hit. Values are
	// shared, never modified.
	GetOrLoad(ctx context.Context, kind cache.Kind, key string, load func(context.Context) (any, error)) (value any, cached bool, err error)
	// Bump makes every entry that depends on collection unreachable (a new generation);
	// called after a write to that collection. Bump("") invalidates results that span
	// collections (the collection list, documents).
	Bump(collection string)
	// BumpAll invalidates every entry.
	BumpAll()
	// Stats reports counters for r2r_status.
	Stats() cache.Stats
}

// StatusInfo holds static facts r2r_status reports.
type StatusInfo struct {
	Version   string // r2r-mcp version
	Commit    string // build commit
	URLSource string // where the R2R URL came from, e.g. "flag", "env R2R_API_URL", "default"
	ReadOnly  bool   // --read-only: write tools are not registered
	// Config returns the other effective settings and their sources (no secrets); nil: none.
	// It is asked on each r2r_status call rather than computed while serve starts.
	Config func() map[string]string
}

// Deps are what the tools need: their immutable Config and the run-time state they share.
// Client and Projects are required; the rest of the state is optional.
type Deps struct {
	Config

	Client   *r2r.Client       // always non-nil; may point at an unreachable R2R
	Projects *project.Resolver // project → collection
	Cache    Cache             // nil = no caching
	History  *SearchHistory    // last searches per project; nil = none kept
	// Analytics records what searches, RAG questions and recalls found; nil = off.
	Analytics *analytics.Recorder
	Logger    *slog.Logger     // nil = discard
	Now       func() time.Time // nil = time.Now

	// BreakerState, when set, gives r2r_status the circuit breaker's full state (state,
	// failures, time until half-open, last transitions).
	BreakerState func() r2r.BreakerState
	// HealthClient runs r2r_status's live health check; nil = Client. The server gives it
	// a client without retries and circuit breaker, so the check reports R2R as it is now
	// (also while the breaker is open) and does not count as a call of the tools.
	HealthClient *r2r.Client

	// SharedLimits, when set, holds the rate-limit buckets (keyed by credential identity
	// and tool) instead of this process; its failures fall back to the local buckets.
	SharedLimits SharedLimiter
	// SyncJobs, when set, also keeps the state of sync jobs (keyed by credential identity
	// and job id), so r2r_sync_status on another replica reports them; without it, or when
	// it fails, jobs are known to this process only.
	SyncJobs SyncJobStore

	initOnce sync.Once
	limiter  *rateLimiter
	loader   *loader
	recorder *recorder
	writes   *invalidator
	scopes   *scoper
	pending  *upload.Pending // uploads R2R has not finished with
	titles   titleMemory
	shown    shownIDs // document ids shown to the model, for short-id lookups
	syncs    *syncJobs
	views    teamViews // team projects' private collections, by team collection
	// skillsChanged, when set, is told that this session saved a team skill.
	skillsChanged func()
}

// setup builds the run-time state shared by every tool (the rate limiter from the Config,
// uploads in progress, the cached reads' loader and the cache's write side, the analytics
// recorder, the scope resolver) on first use.
func (d *Deps) setup() {
	d.initOnce.Do(func() {
		d.limiter = newRateLimiter(d.rateLimits(), d.SharedLimits, func() string { return d.Client.Identity() }, d.now, d.logger())
		d.pending = upload.NewPending()
		d.loader = &loader{cache: d.Cache, client: func() *r2r.Client { return d.Client }, pending: d.pending, now: d.now}
		d.recorder = &recorder{rec: d.Analytics, remote: func() bool { return d.Projects.Remote() }, history: d.historyKey, now: d.now}
		d.writes = &invalidator{cache: d.Cache, titles: &d.titles, pending: d.pending}
		d.scopes = &scoper{projects: func() *project.Resolver { return d.Projects }, client: func() *r2r.Client { return d.Client },
			views: &d.views, now: d.now, logger: d.logger}
		d.syncs = newSyncJobs()
	})
}

// pendingUploads returns the uploads of this server R2R has not finished with.
func (d *Deps) pendingUploads() *upload.Pending {
	d.setup()
	return d.pending
}

// titleMemory returns the document titles remembered by id.
func (d *Deps) titleMemory() *titleMemory { return &d.titles }

func (d *Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deps) logger() *slog.Logger {
	if d.Logger != nil {
		return d.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Registry returns every tool in a fixed order, each with its own handler (see Chain for
// the handler every transport serves). It panics when a definition breaks the registry
// rules (see Check): that is a programmer error caught by the tests.
func Registry(deps *Deps) []Tool {
	if deps == nil || deps.Client == nil || deps.Projects == nil {
		panic("tools: Deps.Client and Deps.Projects are required")
	}
	deps.setup()
	tools := []Tool{
		searchTool(deps, deps.loader, deps.recorder, deps.scopes),
		ragQueryTool(deps, deps.loader, deps.recorder, deps.scopes),
		ingestDocumentTool(deps),
		listDocumentsTool(deps, deps.loader, deps.scopes),
		monitorTaskTool(deps, deps.writes),
		listCollectionsTool(deps, deps.loader),
		getDocumentTool(deps, deps.loader),
		deleteDocumentTool(deps, deps.writes, deps.scopes),
		syncTool(deps),
		syncStatusTool(deps, deps.scopes),
		rememberTool(deps),
		recallTool(deps, deps.recorder, deps.scopes),
		troubleshootTool(deps, deps.scopes),
		forgetTool(deps, deps.scopes),
		statusTool(deps, deps.limiter),
	}
	for i := range tools {
		tools[i].Handler = tools[i].own()
	}
	if err := Check(tools); err != nil {
		panic(err)
	}
	return tools
}

// Filter returns the tools to register: with readOnly, every write tool is dropped.
func Filter(tools []Tool, readOnly bool) []Tool {
	if !readOnly {
		return slices.Clone(tools)
	}
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if t.ReadOnly {
			out = append(out, t)
		}
	}
	return out
}

// ServerTools converts tools for mcp-go's MCPServer.AddTools.
func ServerTools(tools []Tool) []server.ServerTool {
	out := make([]server.ServerTool, len(tools))
	for i, t := range tools {
		out[i] = server.ServerTool{Tool: t.Def, Handler: t.Handler}
	}
	return out
}

// Check enforces the registry rules: unique names, a title, all four annotations set,
// ReadOnly equal to readOnlyHint, a read-only tool is never destructive, an output schema
// and an example call.
func Check(tools []Tool) error {
	seen := map[string]bool{}
	var errs []error
	for _, t := range tools {
		d := t.Def
		a := d.Annotations
		switch {
		case d.Name == "":
			errs = append(errs, errors.New("tool without a name"))
			continue
		case seen[d.Name]:
			errs = append(errs, fmt.Errorf("%s: duplicate name", d.Name))
		case d.Title == "" || a.Title == "":
			errs = append(errs, fmt.Errorf("%s: title and annotations.title are required", d.Name))
		case a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil:
			errs = append(errs, fmt.Errorf("%s: all four annotation hints must be set explicitly", d.Name))
		case *a.ReadOnlyHint != t.ReadOnly:
			errs = append(errs, fmt.Errorf("%s: ReadOnly=%v but readOnlyHint=%v", d.Name, t.ReadOnly, *a.ReadOnlyHint))
		case t.ReadOnly && *a.DestructiveHint:
			errs = append(errs, fmt.Errorf("%s: a read-only tool cannot be destructive", d.Name))
		case len(d.RawOutputSchema) == 0 && d.OutputSchema.Type == "":
			errs = append(errs, fmt.Errorf("%s: output schema missing", d.Name))
		case t.Handler == nil && t.run == nil:
			errs = append(errs, fmt.Errorf("%s: no handler", d.Name))
		case t.Group == "":
			errs = append(errs, fmt.Errorf("%s: no group", d.Name))
		case t.Example.Args == nil:
			errs = append(errs, fmt.Errorf("%s: no example call", d.Name))
		default:
			errs = append(errs, checkAliases(t)...)
		}
		seen[d.Name] = true
	}
	return errors.Join(errs...)
}

// guard bounds a call's time by t's Deadline and turns a panic into an error result (a Go
// error from a handler is reserved for programmer bugs; the server logs it).
func (d *Deps) guard(t *Tool) server.ToolHandlerMiddleware {
	name := t.Def.Name
	deadline := t.Deadline
	if deadline == nil {
		deadline = d.callDeadline
	}
	return func(h server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			timeout, flag := deadline(req)
			model, _ := req.GetArguments()["model"].(string)
			ctx = withAuth(withCall(ctx, callInfo{tool: name, timeout: timeout, flag: flag, model: strings.TrimSpace(model), joinAdvice: d.teamJoinAdvice}), d.authState)
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			defer func() {
				if r := recover(); r != nil {
					d.logger().Error("tool handler panicked", "tool", name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					res, err = internalError(fmt.Sprintf("r2r-mcp hit an internal error in %s; it has been logged. Please report it.", name)), nil
				}
			}()
			return h(ctx, req)
		}
	}
}

// callDeadline is the deadline of a tool without one of its own, and the serve flag that
// sets it.
func (d *Deps) callDeadline(mcp.CallToolRequest) (time.Duration, string) {
	return d.CallTimeout, "--timeout"
}

// callInfo describes the tool call a context belongs to, for error texts.
type callInfo struct {
	tool    string
	timeout time.Duration
	flag    string // serve flag that sets the timeout; "" = none
	model   string // the call's model argument; "" = none (R2R's configured model)
	// joinAdvice words a 403 of a team project's non-member (see Deps.teamJoinAdvice);
	// nil outside tool calls.
	joinAdvice func(context.Context) string
}

type callInfoKey struct{}

func withCall(ctx context.Context, ci callInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

func callFrom(ctx context.Context) (callInfo, bool) {
	ci, ok := ctx.Value(callInfoKey{}).(callInfo)
	return ci, ok
}

// guardResource bounds a resource handler's time like a tool call's.
func guardResource(d *Deps, h server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	timeout := d.CallTimeout
	return guardResourceRead(d, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		ctx, cancel := context.WithTimeout(withAuth(ctx, d.authState), timeout)
		defer cancel()
		return h(ctx, req)
	})
}

// annotations builds the four hints explicitly (mcp-go defaults to destructive and open
// world otherwise).
func annotations(title string, readOnly, destructive, idempotent, openWorld bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(openWorld),
	})
}

// newTool is mcp.NewTool that also records the order in which properties are declared, so
// tools/list (and the README) show them in that order instead of alphabetically.
func newTool(name string, opts ...mcp.ToolOption) mcp.Tool {
	// additionalProperties:false: clients and ValidateArgs reject unknown arguments.
	t := mcp.NewTool(name, mcp.WithSchemaAdditionalProperties(false))
	var order []string
	for _, o := range opts {
		o(&t)
		// An option that declares several properties (inputSchema) gives their order.
		for _, k := range append(slices.Clone(t.InputSchema.PropertyOrder), sortedKeys(t.InputSchema.Properties)...) {
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
	}
	t.InputSchema.PropertyOrder = order
	return t
}

// readTool starts the options of a read-only tool.
func readTool(title, desc string, output map[string]any) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithToolTitle(title),
		mcp.WithDescription(desc),
		annotations(title, true, false, true, false),
		withOutputSchema(output),
	}
}

// withOutputSchema sets a tool's output schema from an objectSchema. It is kept as a Go
// value and encoded when a client lists the tools, not while the server starts.
func withOutputSchema(schema map[string]any) mcp.ToolOption {
	return func(t *mcp.Tool) {
		props, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]string)
		t.OutputSchema = mcp.ToolOutputSchema{Type: "object", Properties: props, Required: required}
	}
}

// result builds a successful result with text for the model (capped at MaxTextBytes) and
// structured content.
func result(text string, structured any) *mcp.CallToolResult {
	return resultCap(text, MaxTextBytes, structured)
}

// resultCap is result with a different text cap, for output the caller explicitly asked
// to be large.
func resultCap(text string, limit int, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(capText(text, limit))},
		StructuredContent: structured,
	}
}
