package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

const (
	guideText = "# Alpha guide\n\nThe flux capacitor of project alpha needs 1.21 gigawatts.\n" +
		"Calibrate the capacitor before each trip; the procedure is in chapter two.\n"
	guideQuery = "flux capacitor gigawatts"
)

type connectFunc func(ctx context.Context, t testing.TB, p *servertest.Proc, o clientOpts) session

var clients = []struct {
	name    string
	connect connectFunc
}{
	{"mcp-go", connectMCPGo},
	{"go-sdk", connectSDK},
}

// TestE2EClients drives every tool, resource and template through the real binary over
// stdio with both Go clients, on the initialize handshake (2025-11-25) and on the newest
// protocol version each client negotiates (2026-07-28, server/discover). On 2025-11-25 the
// project comes from the client's MCP roots (the server runs in an unrelated directory);
// on 2026-07-28, which deprecates roots, from the working directory.
func TestE2EClients(t *testing.T) {
	for _, c := range clients {
		for _, legacy := range []bool{true, false} {
			name := c.name + "/latest"
			if legacy {
				name = c.name + "/2025-11-25"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				emu := r2rtest.NewServer(t, r2rtest.Options{IngestDelay: 20 * time.Millisecond})
				proj := servertest.GitProject(t, "alpha", map[string]string{"docs/guide.md": guideText})
				dir := proj
				if legacy {
					dir = t.TempDir()
				}
				p := servertest.Start(t, dir, servertest.Env(t, emu.URL), "serve")
				ctx := ctxFor(t, 60*time.Second)
				s := c.connect(ctx, t, p, clientOpts{legacy: legacy, roots: []string{proj}})
				exerciseAll(ctx, t, s, emu, "alpha")
				if err := s.close(); err != nil {
					t.Errorf("close: %v", err)
				}
				if code := p.Wait(5 * time.Second); code != 0 {
					t.Errorf("exit code %d after the client closed stdin, want 0", code)
				}
			})
		}
	}
}

// exerciseAll calls every tool successfully and reads every resource, checking that the
// answers hang together (the ingested document is found by search, listed, readable).
func exerciseAll(ctx context.Context, t *testing.T, s session, emu *r2rtest.Server, project string) {
	t.Helper()
	t.Logf("protocol version %s", s.protocolVersion())
	if s.serverName() != "r2r-mcp" {
		t.Errorf("server name %q, want r2r-mcp", s.serverName())
	}
	for _, w := range []string{"r2r_search", "r2r_rag_query", "not instructions"} {
		if !strings.Contains(s.instructions(), w) {
			t.Errorf("instructions do not mention %q:\n%s", w, s.instructions())
		}
	}

	tools, err := s.listTools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	outputSchemas := map[string]*jsonschema.Schema{}
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.OutputSchema == nil {
			t.Errorf("%s: no outputSchema", tl.Name)
		} else {
			outputSchemas[tl.Name] = compileSchema(t, tl.Name, tl.OutputSchema)
		}
		if ap, ok := tl.InputSchema["additionalProperties"]; !ok || ap != false {
			t.Errorf("%s: inputSchema.additionalProperties = %v, want false (strict schemas)", tl.Name, ap)
		}
		if tl.ReadOnly == nil {
			t.Errorf("%s: readOnlyHint not set", tl.Name)
		}
	}
	if want := servertest.ToolNames(servertest.Tools(t), false); !sameSet(names, want) {
		t.Fatalf("tools/list = %v, want %v", names, want)
	}

	mustCall := func(name string, args map[string]any) toolResult {
		t.Helper()
		r, err := s.call(ctx, name, args)
		if err != nil {
			t.Fatalf("%s: protocol error: %v", name, err)
		}
		if r.IsError {
			t.Fatalf("%s: isError result: %s", name, r.Text)
		}
		if strings.TrimSpace(r.Text) == "" || r.Structured == nil {
			t.Fatalf("%s: result lacks text or structured content: %+v", name, r)
		}
		// The MCP spec: structuredContent MUST conform to the declared outputSchema.
		if s := outputSchemas[name]; s != nil {
			var inst any
			if err := remarshal(r.Structured, &inst); err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(inst); err != nil {
				t.Errorf("%s: structuredContent does not match the outputSchema: %v", name, err)
			}
		}
		return r
	}

	mustCall("r2r_status", nil)
	mustCall("r2r_list_collections", map[string]any{})

	ing := mustCall("r2r_ingest_document", map[string]any{"file_path": "docs/guide.md"})
	docID := ing.str("document_id")
	if len(docID) != 36 {
		t.Fatalf("ingest: document_id %q: %s", docID, ing.Text)
	}
	if got := ing.str("collection_name"); got != "claude-code-"+project {
		t.Errorf("ingest went to collection %q, want claude-code-%s (project from the client's roots)", got, project)
	}

	awaitIngested(t, emu, docID)
	if m := mustCall("r2r_monitor_task", map[string]any{"document_id": docID}); m.str("ingestion_status") != "success" {
		t.Fatalf("R2R finished the ingestion; monitor says: %s", m.Text)
	}

	docs := mustCall("r2r_list_documents", map[string]any{"status_filter": "success"})
	if !strings.Contains(docs.Text, docID[:8]) {
		t.Errorf("list_documents does not show %s:\n%s", docID, docs.Text)
	}

	doc := mustCall("r2r_get_document", map[string]any{"document_id": docID})
	if !strings.Contains(doc.str("text"), "1.21 gigawatts") {
		t.Errorf("get_document text lacks the file's content: %q", doc.str("text"))
	}

	found := mustCall("r2r_search", map[string]any{"query": guideQuery, "limit": 5})
	hits, _ := found.Structured["results"].([]any)
	hit := false
	for _, h := range hits {
		if m, ok := h.(map[string]any); ok && m["document_id"] == docID {
			hit = true
		}
	}
	if !hit {
		t.Errorf("search did not find the ingested document:\n%s", found.Text)
	}

	rag := mustCall("r2r_rag_query", map[string]any{"question": "How much power does the flux capacitor need?"})
	if !strings.Contains(rag.Text, docID[:8]) && !strings.Contains(rag.Text, "guide") {
		t.Errorf("rag answer cites neither the document's short id nor its title:\n%s", rag.Text)
	}

	mem := mustCall("r2r_remember", map[string]any{"kind": "fix", "title": "Flux capacitor power fault",
		"error": "power fault: 1.21 gigawatts required", "body": "Connect the flux capacitor to the clock tower's lightning rod."})
	memID := mem.str("id")
	if len(memID) != 36 {
		t.Fatalf("remember: id %q: %s", memID, mem.Text)
	}
	awaitIngested(t, emu, memID) // recall finds it once R2R has ingested it
	if rec := mustCall("r2r_recall", map[string]any{"query": "flux: power fault: 1.21 gigawatts required"}); !strings.Contains(rec.Text, memID[:8]) {
		t.Errorf("r2r_recall does not find memory %q:\n%s", memID, rec.Text)
	}
	mustCall("r2r_forget", map[string]any{"memory_id": memID})

	resources, err := s.listResources(ctx)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	for _, want := range []string{"r2r://current-project/context", "r2r://search/history", "r2r://analytics"} {
		if !slices.Contains(resources, want) {
			t.Errorf("resources/list = %v lacks %s", resources, want)
		}
	}
	templates, err := s.listTemplates(ctx)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	if !slices.Contains(templates, "r2r://documents/{document_id}") {
		t.Errorf("resources/templates/list = %v lacks r2r://documents/{document_id}", templates)
	}
	for _, rc := range []struct{ uri, want string }{
		{"r2r://current-project/context", project},
		{"r2r://search/history", guideQuery},
		{"r2r://documents/" + docID, "1.21 gigawatts"},
	} {
		text, err := s.readResource(ctx, rc.uri)
		if err != nil {
			t.Errorf("read %s: %v", rc.uri, err)
			continue
		}
		if !strings.Contains(text, rc.want) {
			t.Errorf("read %s: %q lacks %q", rc.uri, servertest.Truncate(text), rc.want)
		}
	}
}

// TestE2EErrors checks one failure of each class end to end: each is an isError tool
// result (not a protocol error) whose text names the cause and the next step.
func TestE2EErrors(t *testing.T) {
	closedURL := func(t *testing.T) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}
	tests := []struct {
		name  string
		setup func(t *testing.T) (r2rURL string, extraEnv []string)
		tool  string
		args  map[string]any
		want  []string // all must appear in the text (case-insensitive)
		code  float64  // _meta["r2r-mcp/error"].code
	}{
		{
			name:  "misspelled argument",
			setup: func(t *testing.T) (string, []string) { return r2rtest.NewServer(t, r2rtest.Options{}).URL, nil },
			tool:  "r2r_search",
			args:  map[string]any{"quest": "capacitor"},
			want:  []string{"quest", `did you mean "query"`},
			code:  -32602,
		},
		{
			name:  "value out of range",
			setup: func(t *testing.T) (string, []string) { return r2rtest.NewServer(t, r2rtest.Options{}).URL, nil },
			tool:  "r2r_search",
			args:  map[string]any{"query": "capacitor", "limit": 1000},
			want:  []string{"limit"},
			code:  -32602,
		},
		{
			name:  "bad enum",
			setup: func(t *testing.T) (string, []string) { return r2rtest.NewServer(t, r2rtest.Options{}).URL, nil },
			tool:  "r2r_list_documents",
			args:  map[string]any{"status_filter": "done"},
			want:  []string{"status_filter"},
			code:  -32602,
		},
		{
			name: "rejected credentials",
			setup: func(t *testing.T) (string, []string) {
				return r2rtest.NewServer(t, r2rtest.Options{RequireAuth: true}).URL, []string{"R2R_API_KEY=key_bogus.not-a-real-key"}
			},
			tool: "r2r_list_collections",
			args: map[string]any{},
			want: []string{"401", "login"},
			code: -32002,
		},
		{
			name:  "unknown document",
			setup: func(t *testing.T) (string, []string) { return r2rtest.NewServer(t, r2rtest.Options{}).URL, nil },
			tool:  "r2r_get_document",
			args:  map[string]any{"document_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"},
			want:  []string{"not found", "r2r_list_documents"},
			code:  -32001,
		},
		{
			name:  "R2R unreachable",
			setup: func(t *testing.T) (string, []string) { return closedURL(t), nil },
			tool:  "r2r_search",
			args:  map[string]any{"query": "capacitor"},
			want:  []string{"reach", "R2R_API_URL"},
			code:  -32001,
		},
	}
	for _, tt := range tests {
		for _, c := range clients {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				r2rURL, extra := tt.setup(t)
				proj := servertest.GitProject(t, "beta", nil)
				p := servertest.Start(t, proj, servertest.Env(t, r2rURL, extra...), "serve")
				ctx := ctxFor(t, 60*time.Second)
				s := c.connect(ctx, t, p, clientOpts{legacy: true})
				defer s.close()
				r, err := s.call(ctx, tt.tool, tt.args)
				if err != nil {
					t.Fatalf("protocol error instead of an isError result: %v", err)
				}
				if !r.IsError {
					t.Fatalf("call succeeded, want isError: %s", r.Text)
				}
				for _, w := range tt.want {
					if !strings.Contains(strings.ToLower(r.Text), strings.ToLower(w)) {
						t.Errorf("error text lacks %q:\n%s", w, r.Text)
					}
				}
				if r.Err["code"] != tt.code {
					t.Errorf("error code %v, want %v (_meta %v)", r.Err["code"], tt.code, r.Err)
				}
				t.Logf("%s → %s", tt.name, r.Text)
			})
		}
	}
}

// TestE2EReadOnly checks --read-only drops the write tool and says so nowhere else.
func TestE2EReadOnly(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	p := servertest.Start(t, servertest.GitProject(t, "gamma", nil), servertest.Env(t, emu.URL), "serve", "--read-only")
	ctx := ctxFor(t, 30*time.Second)
	s := connectSDK(ctx, t, p, clientOpts{legacy: true})
	defer s.close()
	tools, err := s.listTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.ReadOnly == nil || !*tl.ReadOnly {
			t.Errorf("%s offered in --read-only mode but is not read-only", tl.Name)
		}
	}
	want := servertest.ToolNames(servertest.Tools(t), true)
	if !sameSet(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	if strings.Contains(s.instructions(), "r2r_ingest_document") {
		t.Errorf("read-only instructions mention the ingest tool")
	}
}

// TestE2EJunkInput writes what no client should send and checks that every line the server
// answers is a JSON-RPC error response and that it keeps serving.
func TestE2EJunkInput(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	p := servertest.Start(t, t.TempDir(), servertest.Env(t, emu.URL), "serve")
	c := servertest.NewRawConn(p)
	const limit = 10 * time.Second

	junk := []struct {
		line string
		code float64
	}{
		{"this is not json", -32700},
		{`{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{`[1,2,3`, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"no/such/method"}`, -32601},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"r2r_nonexistent","arguments":{}}}`, -32602},
	}
	for _, j := range junk {
		c.Send(j.line)
		m := c.Next(limit)
		e, ok := m["error"].(map[string]any)
		if !ok {
			t.Errorf("%q: answer %v is not an error response", j.line, m)
			continue
		}
		if e["code"] != j.code {
			t.Errorf("%q: error code %v, want %v (%v)", j.line, e["code"], j.code, e["message"])
		}
	}

	// Still alive: a proper handshake and a tool listing work after the junk.
	c.Send(`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := c.Next(limit); m["result"] == nil {
		t.Fatalf("initialize after junk: %v", m)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.Send(`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`)
	m := c.Next(limit)
	res, _ := m["result"].(map[string]any)
	if tl, _ := res["tools"].([]any); len(tl) != len(servertest.Tools(t)) {
		t.Fatalf("tools/list after junk: %v", m)
	}
	p.Stdin.Close()
	if code := p.Wait(5 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestE2EExit checks the server exits 0 promptly on stdin EOF, SIGTERM and SIGINT, also
// with a tool call in flight (R2R is slow to answer, so the call is cancelled).
func TestE2EExit(t *testing.T) {
	tests := []struct {
		name     string
		inFlight bool
		stop     func(p *servertest.Proc)
	}{
		{"stdin EOF", false, func(p *servertest.Proc) { p.Stdin.Close() }},
		{"stdin EOF with a call in flight", true, func(p *servertest.Proc) { p.Stdin.Close() }},
		{"SIGTERM", false, func(p *servertest.Proc) { p.Cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGTERM with a call in flight", true, func(p *servertest.Proc) { p.Cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGINT", false, func(p *servertest.Proc) { p.Cmd.Process.Signal(os.Interrupt) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && strings.HasPrefix(tt.name, "SIG") {
				t.Skip("no POSIX signals on Windows")
			}
			t.Parallel()
			emu := r2rtest.NewServer(t, r2rtest.Options{Latency: 30 * time.Second})
			p := servertest.Start(t, t.TempDir(), servertest.Env(t, emu.URL), "serve")
			c := servertest.NewRawConn(p)
			c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
			if m := c.Next(10 * time.Second); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if tt.inFlight {
				c.Send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_list_collections","arguments":{}}}`)
				r2rtest.Await(t, emu.Changed, func() bool { return emu.Count("GET /v3/collections") > 0 },
					"the tool call to reach R2R")
			}
			go c.Drain()
			stopped := time.Now()
			tt.stop(p)
			// 1 s is the requirement; the deadline here is generous for loaded CI machines
			// and the race detector, and the measured time is logged.
			if code := p.Wait(5 * time.Second); code != 0 {
				t.Errorf("exit code %d, want 0\nstderr:\n%s", code, p.Stderr.String())
			}
			t.Logf("exited %v after %s", time.Since(stopped).Round(time.Millisecond), tt.name)
			// R2R takes 30 s to answer, so a logged end of the call means its context was
			// cancelled and the handler returned, rather than the process dying under it.
			if tt.inFlight && !strings.Contains(p.Stderr.String(), "mcp.tool.name=r2r_list_collections") {
				t.Errorf("the in-flight call did not end before exit\nstderr:\n%s", p.Stderr.String())
			}
		})
	}
}

// awaitIngested waits until R2R has finished ingesting document id.
func awaitIngested(t *testing.T, emu *r2rtest.Server, id string) {
	t.Helper()
	select {
	case <-emu.IngestionEnded(id):
	case <-time.After(r2rtest.AwaitTimeout):
		t.Fatalf("R2R is still ingesting %s", id)
	}
}

// waitFor polls cond until it holds: for what only the serve process under test knows.
func waitFor(t *testing.T, limit time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestE2EClientLogging checks the logging capability: after logging/setLevel, what the
// server logs while handling a call reaches the client as notifications/message.
func TestE2EClientLogging(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	p := servertest.Start(t, t.TempDir(), servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 30*time.Second)
	c := servertest.NewRawConn(p)
	c.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	init := c.Next(10 * time.Second)
	caps, _ := init["result"].(map[string]any)["capabilities"].(map[string]any)
	if _, ok := caps["logging"]; !ok {
		t.Fatalf("initialize result does not declare logging: %v", init)
	}
	c.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.Send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	if m := c.Next(10 * time.Second); m["error"] != nil {
		t.Fatalf("logging/setLevel: %v", m)
	}
	c.Send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"r2r_search","arguments":{"quest":"x"}}}`)
	var sawLog, sawResult bool
	for !(sawLog && sawResult) && ctx.Err() == nil {
		m := c.Next(10 * time.Second)
		switch {
		case m["method"] == "notifications/message":
			params, _ := m["params"].(map[string]any)
			data := fmt.Sprint(params["data"])
			if params["level"] == "info" && strings.Contains(data, "quest") {
				sawLog = true
			}
		case m["id"] == float64(3):
			sawResult = true
		}
	}
	if !sawLog {
		t.Errorf("no notifications/message about the rejected call reached the client")
	}
}

// TestE2ERootsChange checks that notifications/roots/list_changed makes the server ask for
// the roots again: after the client swaps its root, the project follows.
func TestE2ERootsChange(t *testing.T) {
	t.Parallel()
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	alpha := servertest.GitProject(t, "alpha", nil)
	beta := servertest.GitProject(t, "beta", nil)
	p := servertest.Start(t, t.TempDir(), servertest.Env(t, emu.URL), "serve")
	ctx := ctxFor(t, 30*time.Second)

	c := sdk.NewClient(&sdk.Implementation{Name: "roots-e2e", Version: "1.0.0"},
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true}}})
	c.AddRoots(&sdk.Root{URI: fileURI(alpha), Name: "alpha"})
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: p.Stdout, Writer: p.Stdin}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	project := func() string {
		t.Helper()
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "r2r://current-project/context"})
		if err != nil {
			t.Fatalf("read context: %v", err)
		}
		return res.Contents[0].Text
	}
	if got := project(); !strings.Contains(got, "claude-code-alpha") {
		t.Fatalf("project context before the change does not name alpha:\n%s", got)
	}
	c.RemoveRoots(fileURI(alpha))
	c.AddRoots(&sdk.Root{URI: fileURI(beta), Name: "beta"})
	// The notification and the next read travel on the same stream but are handled
	// concurrently, so poll (bounded) until the server has seen it.
	waitFor(t, 10*time.Second, func() bool { return strings.Contains(project(), "claude-code-beta") },
		"the project context to name beta after the roots changed")
}

func compileSchema(t *testing.T, name string, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	url := "mem:///e2e/" + name + "/output.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: outputSchema does not compile: %v", name, err)
	}
	return s
}
