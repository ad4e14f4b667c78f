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

// Tool is one registry entry.
type Tool struct {
	Def      mcp.Tool               // title + all four annotations set explicitly, outputSchema
	Handler  server.ToolHandlerFunc // mcp-go
	Group    string                 // "search", "documents", "collections", "status"
	ReadOnly bool                   // must equal Def.Annotations.ReadOnlyHint (checked by Check)
	// Cached marks tools whose reads go through the result cache: their rate limit applies
	// only to calls that miss and reach R2R.
	Cached bool
	// Aliases are other words for enum values that ValidateArgs reads as the canonical
	// value; each is named in its argument's description (checked by Check).
	Aliases argcheck.ValueAliases
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
	Version     string            // r2r-mcp version
	Commit      string            // build commit
	AuthSource  string            // where the credentials came from, e.g. "keyring", "env R2R_API_KEY", "none"
	AuthWarning string            // a credential resolution problem for the user ("" = none)
	URLSource   string            // where the R2R URL came from, e.g. "flag", "env R2R_API_URL", "default"
	ReadOnly    bool              // --read-only: write tools are not registered
	Config      map[string]string // other effective settings and their sources (no secrets)
}

// Deps are what the tools need. Client and Projects are required; the rest is optional.
type Deps struct {
	Client   *r2r.Client       // always non-nil; may point at an unreachable R2R
	Projects *project.Resolver // project → collection
	Cache    Cache             // nil = no caching
	History  *SearchHistory    // last searches per project; nil = none kept
	Logger   *slog.Logger      // nil = discard
	Status   StatusInfo        // static facts for r2r_status
	Now      func() time.Time  // nil = time.Now

	// AuthState, when set, says where the credentials come from and any warning about
	// them, as known now; it overrides Status.AuthSource and Status.AuthWarning (a
	// credential read lazily from the keyring knows its source only after first use).
	AuthState func() (source, warning string)

	// BreakerState, when set, gives r2r_status the circuit breaker's full state (state,
	// failures, time until half-open, last transitions).
	BreakerState func() r2r.BreakerState
	// HealthClient runs r2r_status's live health check; nil = Client. The server gives it
	// a client without retries and circuit breaker, so the check reports R2R as it is now
	// (also while the breaker is open) and does not count as a call of the tools.
	HealthClient *r2r.Client

	// CallTimeout bounds a call of every tool without a timeout of its own (all but
	// r2r_search, r2r_rag_query and a waiting r2r_ingest_document) and every resource
	// read; 0 = DefaultCallTimeout.
	CallTimeout time.Duration
	// SearchTimeout bounds r2r_search; 0 = DefaultSearchTimeout.
	SearchTimeout time.Duration
	// RAGTimeout bounds r2r_rag_query; 0 = DefaultRAGTimeout.
	RAGTimeout time.Duration
	// IngestSyncTimeout bounds r2r_ingest_document with run_async=false, whose wait for
	// R2R (IngestWait) must fit inside it; 0 = DefaultIngestSyncTimeout.
	IngestSyncTimeout time.Duration
	// IngestWait bounds how long r2r_ingest_document with run_async=false waits for R2R to
	// finish; 0 = DefaultIngestWait. It is further capped by the call's deadline.
	IngestWait time.Duration
	// PollInterval is the first delay between ingestion status polls (doubling up to 2 s);
	// 0 = 250 ms.
	PollInterval time.Duration

	// RateLimits bound how often each tool may be called; the zero value sets no limit
	// (serve uses DefaultRateLimits). A call over the limit is answered at once with an
	// isError result (code -32004) that says when to retry; it never waits.
	RateLimits RateLimits
	// SharedLimits, when set, holds the rate-limit buckets (keyed by credential identity
	// and tool) instead of this process; its failures fall back to the local buckets.
	SharedLimits SharedLimiter

	// SyncStateDir keeps r2r_sync's lock and hash cache files; "" = kbsync.StateDir().
	SyncStateDir string
	// SyncJobs, when set, also keeps the state of sync jobs (keyed by credential identity
	// and job id), so r2r_sync_status on another replica reports them; without it, or when
	// it fails, jobs are known to this process only.
	SyncJobs SyncJobStore

	initOnce sync.Once
	limits   *limiters
	pending  *upload.Pending // uploads R2R has not finished with
	titles   titleMemory
	shown    shownIDs // document ids shown to the model, for short-id lookups
	syncs    *syncJobs
}

// Deadlines: every tool answers within 50 s, since clients give up around 60 s.
const (
	DefaultCallTimeout   = 15 * time.Second
	DefaultSearchTimeout = 20 * time.Second
	DefaultRAGTimeout    = 45 * time.Second
	// DefaultIngestSyncTimeout bounds a waiting ingest: the upload, then up to
	// DefaultIngestWait of polling, with room to answer.
	DefaultIngestSyncTimeout = 45 * time.Second
	DefaultIngestWait        = 40 * time.Second
)

// setup builds the run-time state shared by every tool (rate limiters from RateLimits,
// uploads in progress) on first use; later changes to RateLimits have no effect.
func (d *Deps) setup() {
	d.initOnce.Do(func() {
		d.limits = newLimiters(d.RateLimits)
		d.pending = upload.NewPending()
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

// Registry returns every tool in a fixed order. It panics when a definition breaks the
// registry rules (see Check): that is a programmer error caught by the tests.
func Registry(deps *Deps) []Tool {
	if deps == nil || deps.Client == nil || deps.Projects == nil {
		panic("tools: Deps.Client and Deps.Projects are required")
	}
	tools := []Tool{
		searchTool(deps),
		ragQueryTool(deps),
		ingestDocumentTool(deps),
		listDocumentsTool(deps),
		monitorTaskTool(deps),
		listCollectionsTool(deps),
		getDocumentTool(deps),
		deleteDocumentTool(deps),
		syncTool(deps),
		syncStatusTool(deps),
		statusTool(deps),
	}
	if err := Check(tools); err != nil {
		panic(err)
	}
	deps.setup()
	for i := range tools {
		name := tools[i].Def.Name
		tools[i].Handler = cleanResults(deps.limits.wrap(deps, name, tools[i].Cached, guard(deps, name, tools[i].Handler)))
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
// ReadOnly equal to readOnlyHint, a read-only tool is never destructive, and an output
// schema.
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
		case t.Handler == nil:
			errs = append(errs, fmt.Errorf("%s: no handler", d.Name))
		case t.Group == "":
			errs = append(errs, fmt.Errorf("%s: no group", d.Name))
		default:
			errs = append(errs, checkAliases(t)...)
		}
		seen[d.Name] = true
	}
	return errors.Join(errs...)
}

// guard bounds a handler's time (see timeoutFor) and turns a panic into an error result (a
// Go error from a handler is reserved for programmer bugs; the server logs it).
func guard(d *Deps, name string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		timeout, flag := d.timeoutFor(name, req)
		model, _ := req.GetArguments()["model"].(string)
		ctx = withAuth(withCall(ctx, callInfo{tool: name, timeout: timeout, flag: flag, model: strings.TrimSpace(model)}), d.authState)
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

// timeoutFor returns the deadline of one call of tool name and the serve flag that sets it.
func (d *Deps) timeoutFor(name string, req mcp.CallToolRequest) (time.Duration, string) {
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	switch name {
	case "r2r_search":
		return pick(d.SearchTimeout, DefaultSearchTimeout), "--timeout-search"
	case "r2r_rag_query":
		return pick(d.RAGTimeout, DefaultRAGTimeout), "--timeout-rag"
	case "r2r_ingest_document":
		if async, ok := req.GetArguments()["run_async"].(bool); ok && !async {
			return pick(d.IngestSyncTimeout, DefaultIngestSyncTimeout), ""
		}
	}
	return pick(d.CallTimeout, DefaultCallTimeout), "--timeout"
}

// callInfo describes the tool call a context belongs to, for error texts.
type callInfo struct {
	tool    string
	timeout time.Duration
	flag    string // serve flag that sets the timeout; "" = none
	model   string // the call's model argument; "" = none (R2R's configured model)
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
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
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
		for _, k := range sortedKeys(t.InputSchema.Properties) {
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
