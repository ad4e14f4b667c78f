package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// statusToolName is the tool doctor calls once the server is up.
const statusToolName = tools.StatusToolName

// stderrTailLines is how much of the server's stderr a failed check shows.
const stderrTailLines = 15

// rpcErrorInfo is what one JSON-RPC (or r2r-mcp tool) error code means for people.
type rpcErrorInfo struct {
	Meaning   string
	Retryable bool
	Fix       string
}

// rpcErrors maps JSON-RPC error codes, and the codes r2r-mcp sends with its error
// results, to text a person can act on (seed 004's mapping table). toolErrors overrides it
// for error results of tools/call, where a code may mean something else.
var rpcErrors = map[int]rpcErrorInfo{
	mcp.PARSE_ERROR: {"parse error: the server could not parse the JSON it received", false,
		"Make sure the server is r2r-mcp of the same version as this doctor."},
	mcp.INVALID_REQUEST: {"invalid request: the server did not accept the message as a JSON-RPC request", false,
		"Make sure the server is r2r-mcp of the same version as this doctor."},
	mcp.METHOD_NOT_FOUND: {"method not found: the server does not implement this method or tool", false,
		"Point --server-command at r2r-mcp, or upgrade r2r-mcp."},
	mcp.INVALID_PARAMS: {"invalid params: the server rejected the arguments", false,
		"This is a bug in r2r-mcp or doctor; please report it with this output."},
	mcp.INTERNAL_ERROR: {"internal error in the server", true,
		"See the server's stderr below, then run doctor again."},
	toolerr.CodeR2RAPI: {"R2R API error", true,
		"See the R2R checks above and R2R's logs."},
	toolerr.CodeAuth: {"authentication failed: R2R rejected the credentials", false,
		"Run r2r-mcp login (or set R2R_API_KEY)."},
	toolerr.CodeBreakerOpen: {"circuit breaker open: R2R failed repeatedly, so r2r-mcp pauses calls to it", true,
		"Fix R2R (see the checks above); calls resume after the breaker's cool-down."},
	toolerr.CodeRateLimited: {"rate limited: by r2r-mcp's own per-tool limit, or by R2R (429)", true,
		"Wait retry_after seconds (r2r-mcp's limit: --rate-limit, --rag-rate-limit) or a minute (R2R's), then run doctor again."},
}

// toolErrors are the codes whose meaning in an r2r-mcp error result differs from the
// JSON-RPC error of the same number.
var toolErrors = map[int]rpcErrorInfo{
	// A tool result with -32603 is r2r-mcp's own verdict (toolerr.CodeInternal), not a crash:
	// a configuration problem or a bug, which the text names. Calling again changes nothing.
	toolerr.CodeInternal: {"r2r-mcp could not run the tool: a configuration problem or an internal error", false,
		"Read the text: fix what it names (often the project's " + project.ConfigFile + "), or report the bug with this output."},
}

// explainCode returns the table entry for a JSON-RPC error code; unknown codes are
// retryable, as seed 004 maps them.
func explainCode(code int) rpcErrorInfo {
	if info, ok := rpcErrors[code]; ok {
		return info
	}
	return rpcErrorInfo{Meaning: fmt.Sprintf("unexpected error (code %d)", code), Retryable: true,
		Fix: "See the server's stderr below, then run doctor again."}
}

// explainToolCode is explainCode for the code of an r2r-mcp error result.
func explainToolCode(code int) rpcErrorInfo {
	if info, ok := toolErrors[code]; ok {
		return info
	}
	return explainCode(code)
}

// sentinelCodes recovers the code of the JSON-RPC errors mcp-go's client turns into
// sentinel errors (used when the raw response was not seen).
var sentinelCodes = []struct {
	err  error
	code int
}{
	{mcp.ErrParseError, mcp.PARSE_ERROR},
	{mcp.ErrInvalidRequest, mcp.INVALID_REQUEST},
	{mcp.ErrMethodNotFound, mcp.METHOD_NOT_FOUND},
	{mcp.ErrInvalidParams, mcp.INVALID_PARAMS},
	{mcp.ErrInternalError, mcp.INTERNAL_ERROR},
}

// mcpProbe is one run of the server as a child process, driven by mcp-go's client.
type mcpProbe struct {
	d       *doctor
	srv     *doctorServer
	timeout time.Duration

	stderr *tailBuffer
	rec    *recordingTransport
	client *mcpclient.Client

	mu     sync.Mutex
	cmd    *exec.Cmd
	closed bool

	schemas map[string]mcp.Tool // tools/list result, kept for the rest of the run
	modern  bool                // speak protocol 2026-07-28 (server/discover), not initialize
}

// checkServer starts the server and runs the MCP checks: initialize, tools/list,
// tools/call r2r_status. The whole phase is bounded by --timeout.
func (d *doctor) checkServer(ctx context.Context) ([]doctorCheck, *doctorServer) {
	names := []string{checkInitialize, checkToolsList, checkStatusCall, checkDiscover}
	if !d.configOK {
		return skipChecks(names, "the configuration is invalid; fix it first"), nil
	}
	exe, err := d.serverCommand()
	if err != nil {
		c := finishCheck(checkInitialize, failCheck("cannot find the r2r-mcp executable: "+err.Error(),
			"Pass the path of r2r-mcp with --server-command."), 0)
		return append([]doctorCheck{c}, skipChecks(names[1:], "the server did not start")...), nil
	}
	args := []string{"serve"}
	if d.opts.URL != "" {
		args = append(args, auth.DefaultURLFlagName, d.opts.URL)
	}
	if d.opts.ProjectDir != "" {
		args = append(args, "--project-dir", d.cfg.ProjectDir)
	}
	p := &mcpProbe{
		d:       d,
		srv:     &doctorServer{Command: exe, Args: args, Tools: []string{}},
		timeout: d.opts.Timeout,
		stderr:  &tailBuffer{max: 64 << 10},
	}
	pctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	defer p.close()

	steps := []struct {
		name string
		f    func(context.Context) doctorCheck
	}{
		{checkInitialize, p.initialize},
		{checkToolsList, p.listTools},
		{checkStatusCall, p.callStatus},
	}
	var out []doctorCheck
	failed := false
	for i, s := range steps {
		if i > 0 {
			d.note(checkTitles[s.name])
		}
		t0 := time.Now()
		c := s.f(pctx)
		out = append(out, finishCheck(s.name, c, time.Since(t0)))
		if c.Status == statusFail {
			failed = true
			for _, rest := range steps[i+1:] {
				out = append(out, finishCheck(rest.name, skipCheck("an earlier MCP check failed"), 0))
			}
			break
		}
	}
	p.close()
	if failed {
		p.srv.StderrTail = p.stderr.lines(stderrTailLines)
		return append(out, finishCheck(checkDiscover, skipCheck("an earlier MCP check failed"), 0)), p.srv
	}
	d.note(checkTitles[checkDiscover])
	t0 := time.Now()
	c := d.checkModern(pctx, exe, args, len(p.srv.Tools))
	return append(out, finishCheck(checkDiscover, c, time.Since(t0))), p.srv
}

// checkModern starts the server once more and talks to it as today's clients (Claude Code
// among them) do: protocol 2026-07-28, opened with server/discover instead of the
// initialize handshake, then tools/list, which must list the same tools.
func (d *doctor) checkModern(ctx context.Context, exe string, args []string, legacyTools int) doctorCheck {
	p := &mcpProbe{d: d, srv: &doctorServer{Command: exe, Args: args}, timeout: d.opts.Timeout,
		stderr: &tailBuffer{max: 64 << 10}, modern: true}
	defer p.close()
	if err := p.start(ctx); err != nil {
		return failCheck(fmt.Sprintf("cannot start %s: %v", p.srv.Command, err), "Reinstall r2r-mcp.")
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "r2r-mcp-doctor", Version: d.opts.Deps.Build.Version}
	res, err := p.client.Initialize(ctx, req)
	sent := p.rec.methods()
	switch {
	case err != nil:
		return p.explain(ctx, "server/discover", err)
	case len(sent) == 0 || sent[0] != string(mcp.MethodServerDiscover) || !mcp.IsModernProtocol(res.ProtocolVersion):
		return failCheck(fmt.Sprintf("the server did not take up protocol %s: the client sent %v and settled on %s",
			mcp.LATEST_PROTOCOL_VERSION, sent, res.ProtocolVersion), "Upgrade r2r-mcp: clients of 2026 open with server/discover.")
	}
	list, err := p.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return p.explain(ctx, "tools/list", err)
	}
	if len(list.Tools) != legacyTools {
		return failCheck(fmt.Sprintf("tools/list on protocol %s lists %d tools, on the initialize path %d",
			res.ProtocolVersion, len(list.Tools), legacyTools), "A bug in r2r-mcp; please report it.")
	}
	return okCheck(fmt.Sprintf("protocol %s; handshake: %s; %d tools", res.ProtocolVersion, strings.Join(sent, " → "), len(list.Tools)))
}

func skipChecks(names []string, why string) []doctorCheck {
	out := make([]doctorCheck, len(names))
	for i, n := range names {
		out[i] = finishCheck(n, skipCheck(why), 0)
	}
	return out
}

// serverCommand is --server-command, else this executable.
func (d *doctor) serverCommand() (string, error) {
	if d.opts.ServerCommand != "" {
		return d.opts.ServerCommand, nil
	}
	exe := d.opts.Executable
	if exe == nil {
		exe = os.Executable
	}
	return exe()
}

func (p *mcpProbe) environ() []string {
	if p.d.opts.Environ != nil {
		return p.d.opts.Environ()
	}
	return os.Environ()
}

// start launches the child with the doctor's environment, its stderr going to a bounded
// buffer. exec.CommandContext kills it when the phase's time is up.
func (p *mcpProbe) start(ctx context.Context) error {
	tr := transport.NewStdioWithOptions(p.srv.Command, nil, p.srv.Args,
		transport.WithCommandLogger(slog.New(slog.DiscardHandler)),
		transport.WithCommandFunc(func(ctx context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = p.environ()
			cmd.Stderr = p.stderr
			// A grandchild holding stderr open must not make Wait hang.
			cmd.WaitDelay = 2 * time.Second
			p.mu.Lock()
			p.cmd = cmd
			p.mu.Unlock()
			return cmd, nil
		}))
	p.rec = &recordingTransport{Interface: tr}
	// Pinning the newest version that still has the initialize handshake keeps mcp-go
	// from probing server/discover first; the modern probe (checkModern) asks for it.
	version := mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if p.modern {
		version = mcp.LATEST_PROTOCOL_VERSION
	}
	p.client = mcpclient.NewClient(p.rec, mcpclient.WithProtocolVersion(version))
	return p.client.Start(ctx)
}

// close ends the child (stdin closed, then SIGTERM, then kill) and waits for it.
func (p *mcpProbe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.client == nil {
		return
	}
	p.closed = true
	_ = p.client.Close()
}

// exitStatus describes how the child ended; "" while it runs or when unknown.
func (p *mcpProbe) exitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.ProcessState == nil {
		return ""
	}
	return p.cmd.ProcessState.String()
}

// initialize performs the handshake: initialize, then notifications/initialized (mcp-go
// sends it inside Initialize; the recording transport proves it), and validates the
// result.
func (p *mcpProbe) initialize(ctx context.Context) doctorCheck {
	if err := p.start(ctx); err != nil {
		fix := "Reinstall r2r-mcp, or pass the path of an r2r-mcp binary with --server-command."
		return failCheck(fmt.Sprintf("cannot start %s: %v", p.srv.Command, err), fix)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "r2r-mcp-doctor", Version: p.d.opts.Deps.Build.Version}
	res, err := p.client.Initialize(ctx, req)
	p.srv.Handshake = p.rec.methods()
	if err != nil {
		var uv mcp.UnsupportedProtocolVersionError
		if errors.As(err, &uv) {
			return failCheck(fmt.Sprintf("the server answered with protocol version %q, which mcp-go does not support (it supports %s)",
				uv.Version, strings.Join(mcp.ValidProtocolVersions, ", ")), "Upgrade r2r-mcp (or the server given with --server-command).")
		}
		return p.explain(ctx, "initialize", err)
	}
	p.srv.Name, p.srv.Version, p.srv.ProtocolVersion = res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion
	p.srv.Capabilities = capabilityNames(res.Capabilities)
	who := strings.TrimSpace(res.ServerInfo.Name + " " + res.ServerInfo.Version)

	if res.Capabilities.Tools == nil {
		fix := "This r2r-mcp binary is broken; reinstall it."
		if p.d.opts.ServerCommand != "" {
			fix = "--server-command " + p.d.opts.ServerCommand + " is not r2r-mcp's server; point it at r2r-mcp."
		}
		return failCheck(fmt.Sprintf("the server %s does not declare the tools capability (it declares: %s), so MCP clients will neither list nor call its tools",
			who, orNone(p.srv.Capabilities)), fix)
	}
	if !mcp.IsValidProtocolVersion(res.ProtocolVersion) {
		return failCheck(fmt.Sprintf("the server %s negotiated protocol version %q, which mcp-go does not support (it supports %s)",
			who, res.ProtocolVersion, strings.Join(mcp.ValidProtocolVersions, ", ")), "Upgrade r2r-mcp.")
	}
	if len(p.srv.Handshake) < 2 || p.srv.Handshake[0] != string(mcp.MethodInitialize) ||
		p.srv.Handshake[1] != string(mcp.MethodNotificationInitialized) {
		return failCheck(fmt.Sprintf("the client sent %v instead of initialize then notifications/initialized", p.srv.Handshake),
			"A bug in the mcp-go client doctor is built with; please report it.")
	}
	detail := fmt.Sprintf("%s, protocol %s; capabilities: %s\nhandshake: initialize → notifications/initialized",
		who, res.ProtocolVersion, orNone(p.srv.Capabilities))
	if res.ProtocolVersion != req.Params.ProtocolVersion {
		return warnCheck(detail+fmt.Sprintf("\nasked for protocol %s, the server chose %s", req.Params.ProtocolVersion, res.ProtocolVersion),
			"The server is older than this doctor; upgrade it.")
	}
	return okCheck(detail)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// capabilityNames lists the capabilities the server declared, sorted.
func capabilityNames(c mcp.ServerCapabilities) []string {
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// listTools runs tools/list, keeps the schemas for the rest of the run and checks that
// every tool has an object inputSchema.
func (p *mcpProbe) listTools(ctx context.Context) doctorCheck {
	res, err := p.client.ListTools(ctx, mcp.ListToolsRequest{})
	p.srv.Handshake = p.rec.methods()
	if err != nil {
		return p.explain(ctx, "tools/list", err)
	}
	p.schemas = make(map[string]mcp.Tool, len(res.Tools))
	var bad []string
	for _, t := range res.Tools {
		p.srv.Tools = append(p.srv.Tools, t.Name)
		p.schemas[t.Name] = t
		if t.InputSchema.Type != "object" {
			typ := t.InputSchema.Type
			if typ == "" {
				typ = "missing"
			}
			bad = append(bad, fmt.Sprintf("%s (inputSchema type %s)", t.Name, typ))
		}
	}
	switch {
	case len(res.Tools) == 0:
		return failCheck("the server declares the tools capability but lists no tools",
			"Check --read-only and the server's stderr; reinstall r2r-mcp if it persists.")
	case len(bad) > 0:
		return failCheck(fmt.Sprintf("%d tools listed, but not every inputSchema is an object: %s", len(res.Tools), strings.Join(bad, "; ")),
			"MCP clients reject such tools; upgrade r2r-mcp.")
	}
	return okCheck(fmt.Sprintf("%d tools, each with an object inputSchema: %s", len(res.Tools), strings.Join(p.srv.Tools, ", ")))
}

// callStatus calls r2r_status with no arguments and shows the R2R health the server sees.
func (p *mcpProbe) callStatus(ctx context.Context) doctorCheck {
	tool, found := p.schemas[statusToolName]
	if !found {
		return failCheck("the server does not offer "+statusToolName, "Point --server-command at r2r-mcp, or upgrade r2r-mcp.")
	}
	if len(tool.InputSchema.Required) > 0 {
		return failCheck(fmt.Sprintf("%s requires arguments %v; doctor calls it with none", statusToolName, tool.InputSchema.Required),
			"Use a doctor of the same version as the server.")
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = statusToolName
	req.Params.Arguments = map[string]any{}
	res, err := p.client.CallTool(ctx, req)
	p.srv.Handshake = p.rec.methods()
	if err != nil {
		return p.explain(ctx, "tools/call "+statusToolName, err)
	}
	text := resultText(res)
	if res.IsError {
		if info, ok := toolerr.Of(res); ok && info.Code != 0 {
			e := explainToolCode(info.Code)
			fix := e.Fix
			if info.RetryAfter != nil {
				fix = fmt.Sprintf("Retry after %s s. %s", strconv.FormatFloat(*info.RetryAfter, 'f', -1, 64), fix)
			}
			c := failCheck(fmt.Sprintf("%s returned an error: %s (code %d): %s", statusToolName, e.Meaning, info.Code, text), fix)
			c.Code, c.Retryable = info.Code, &info.Retryable
			return c
		}
		return failCheck(statusToolName+" returned an error: "+text, "See the server's stderr below.")
	}
	var st tools.StatusOutput
	if !decodeStructured(res.StructuredContent, &st) || st.R2RURL == "" {
		first, _, _ := strings.Cut(text, "\n")
		return okCheck("answered (no structured content): " + first)
	}
	return p.compareStatus(st)
}

// compareStatus reports what r2r_status says and warns when the server sees a different
// world than doctor did (another URL, credentials or R2R health).
func (p *mcpProbe) compareStatus(st tools.StatusOutput) doctorCheck {
	d := p.d
	health := st.Health.Status
	if st.Health.OK {
		health = fmt.Sprintf("ok (%d ms)", st.Health.LatencyMS)
	} else if st.Health.Error != "" {
		health += ": " + st.Health.Error
	}
	lines := []string{
		"R2R health as the server sees it: " + health,
		fmt.Sprintf("server uses %s (from %s), credentials: %s", st.R2RURL, st.URLSource, st.AuthSource),
	}
	if pr := st.Project; pr.Name != "" {
		coll := collectionLabel(pr.CollectionName, pr.CollectionID)
		switch {
		case pr.Error != "":
			lines = append(lines, fmt.Sprintf("project %s → %s: %s", pr.Name, coll, pr.Error))
		case pr.CollectionExists:
			lines = append(lines, fmt.Sprintf("project %s → collection %s (id %s)", pr.Name, coll, pr.CollectionID))
		default:
			lines = append(lines, fmt.Sprintf("project %s → collection %s (not created yet)", pr.Name, coll))
		}
	}
	detail := strings.Join(lines, "\n")
	src := d.res.Origin().Source
	const sameEnv = "doctor passes the server its own environment and --url; look for a wrapper script or a different r2r-mcp on PATH."
	switch {
	case st.R2RURL != d.res.URL:
		return warnCheck(detail+"\ndoctor checked "+d.res.URL+", the server uses "+st.R2RURL, sameEnv)
	case st.AuthSource == auth.SourceKeyringPending:
		// serve reads the keyring on first use; r2r_status asks it to, and it did not answer.
		return warnCheck(detail+"\nthe server could not read the system keyring yet (doctor found credentials in "+string(src)+")",
			"Unlock the system keyring (answer its prompt); serve reads it again on the next tool call.")
	case auth.Source(st.AuthSource) != src:
		return warnCheck(detail+"\ndoctor found credentials in "+string(src)+", the server in "+st.AuthSource, sameEnv)
	case d.reachable && !st.Health.OK:
		return warnCheck(detail+"\ndoctor reached R2R, but the server could not",
			"Check proxy settings (HTTP_PROXY, NO_PROXY) and firewalls that treat the server process differently.")
	}
	return okCheck(detail)
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// decodeStructured converts structuredContent (decoded JSON: maps and slices) into v.
func decodeStructured(sc any, v any) bool {
	if sc == nil {
		return false
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// explain turns a failed MCP request into a check: the server exited (with its exit
// status), the phase timed out, or a JSON-RPC error mapped through rpcErrors.
func (p *mcpProbe) explain(ctx context.Context, step string, err error) doctorCheck {
	stderrHint := "See the server's stderr below."
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The child may have been killed at the deadline before the request noticed it.
		return failCheck(fmt.Sprintf("the server did not answer %s within %s", step, p.timeout),
			stderrHint+" If R2R is slow, allow more time with --timeout.")
	case ctx.Err() != nil:
		return failCheck("interrupted during "+step, "")
	case serverGone(err):
		p.close() // it is gone; reap it to learn how it ended
		how := "the server exited"
		if s := p.exitStatus(); s != "" {
			how += " (" + s + ")"
		}
		return failCheck(fmt.Sprintf("%s during %s; transport closed", how, step), stderrHint+" Run `"+p.commandLine()+"` yourself to see it fail.")
	}
	code, msg := 0, err.Error()
	if e := p.rec.lastError(); e != nil {
		code, msg = e.Code, e.Message
	} else {
		for _, s := range sentinelCodes {
			if errors.Is(err, s.err) {
				code = s.code
			}
		}
	}
	if code == 0 {
		return failCheck(fmt.Sprintf("%s failed: %v", step, err), stderrHint)
	}
	info := explainCode(code)
	c := failCheck(fmt.Sprintf("%s failed: %s (JSON-RPC %d: %s)", step, info.Meaning, code, msg), info.Fix)
	c.Code, c.Retryable = code, &info.Retryable
	return c
}

func (p *mcpProbe) commandLine() string {
	return strings.Join(append([]string{p.srv.Command}, p.srv.Args...), " ")
}

// serverGone reports whether err means the child closed its stdout or stdin: it exited.
func serverGone(err error) bool {
	return errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed)
}

// recordingTransport wraps the stdio transport to record the methods the client sends
// (to verify the handshake order) and keep the last JSON-RPC error with its code and
// message, which mcp-go's client replaces with a sentinel error.
type recordingTransport struct {
	transport.Interface

	mu      sync.Mutex
	sent    []string
	lastErr *mcp.JSONRPCErrorDetails
}

func (r *recordingTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	r.mu.Lock()
	r.sent = append(r.sent, req.Method)
	r.lastErr = nil
	r.mu.Unlock()
	resp, err := r.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error != nil {
		e := *resp.Error
		r.mu.Lock()
		r.lastErr = &e
		r.mu.Unlock()
	}
	return resp, err
}

func (r *recordingTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	r.mu.Lock()
	r.sent = append(r.sent, n.Method)
	r.mu.Unlock()
	return r.Interface.SendNotification(ctx, n)
}

// SetRequestHandler keeps server-to-client requests (ping, roots) working through the
// wrapper.
func (r *recordingTransport) SetRequestHandler(h transport.RequestHandler) {
	if b, ok := r.Interface.(transport.BidirectionalInterface); ok {
		b.SetRequestHandler(h)
	}
}

func (r *recordingTransport) methods() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

func (r *recordingTransport) lastError() *mcp.JSONRPCErrorDetails {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lines returns the last n non-empty lines.
func (t *tailBuffer) lines(n int) []string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
