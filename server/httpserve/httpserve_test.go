package httpserve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/auth"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// mcpClient connects an mcp-go Streamable HTTP client with headers.
func mcpClient(t testing.TB, url string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "httpserve-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func callText(t testing.TB, c *client.Client, tool string, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	sc, _ := json.Marshal(res.StructuredContent)
	return b.String() + "\n" + string(sc), res
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// Each user's calls run with that user's key: searches without a collection cover what
// the user may read, and nobody ever sees the other's document, also when both search
// the same query concurrently (same cache keys but for the identity) or name the other's
// collection.
func TestUsersNeverSeeEachOthersData(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	alice := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
	bob := mcpClient(t, rep.URL, map[string]string{"X-R2R-API-Key": tm.Bob.Key})

	var wg sync.WaitGroup
	for range 20 {
		for _, u := range []struct {
			c          *client.Client
			own, other member
		}{{alice, tm.Alice, tm.Bob}, {bob, tm.Bob, tm.Alice}} {
			wg.Go(func() {
				for _, args := range []map[string]any{
					{"query": "payout queue worker"},
					{"query": "payout queue worker", "collection_id": u.own.Collection},
					{"query": "payout queue worker", "collection_id": u.other.Collection},
				} {
					text, _ := callText(t, u.c, "r2r_search", args)
					if strings.Contains(text, u.other.Secret) {
						t.Errorf("%s saw %s's document: %s", u.own.Email, u.other.Email, text)
					}
					if args["collection_id"] != u.other.Collection && !strings.Contains(text, u.own.Secret) {
						t.Errorf("%s did not find their own document with %v: %s", u.own.Email, args, text)
					}
				}
			})
		}
	}
	wg.Wait()
	if tm.Emu.Count(searchRoute) == 0 {
		t.Error("no search reached R2R")
	}
}

const searchRoute = "POST /v3/retrieval/search"

// A missing or wrong key gets 401 with a challenge, and no tool runs: R2R sees no search.
func TestRejectedKeysReachNoTool(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r2r_search","arguments":{"query":"payout"}}}`
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"no key", nil, `Bearer realm="r2r-mcp"`},
		{"wrong bearer", bearer("not-a-key"), `error="invalid_token"`},
		{"wrong header", map[string]string{"X-R2R-API-Key": tm.Alice.Key + "x"}, `error="invalid_token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/mcp", "/mcp/invoke"} {
				b := body
				if path == "/mcp/invoke" {
					b = `{"tool":"r2r_search","arguments":{"query":"payout"}}`
				}
				req, _ := http.NewRequest(http.MethodPost, rep.URL+path, strings.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tc.want) {
					t.Errorf("%s: status %d, WWW-Authenticate %q, body %s", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out)
				}
				if strings.Contains(string(out), tm.Alice.Key) {
					t.Errorf("the response echoes the key: %s", out)
				}
			}
		})
	}
	if n := tm.Emu.Count(searchRoute); n != 0 {
		t.Errorf("R2R saw %d searches from rejected callers", n)
	}
	// Each wrong key was checked once, although it was sent twice (MCP and gateway).
	if n := tm.Emu.Count("GET /v3/users/me"); n != 2 {
		t.Errorf("R2R checked the two wrong keys %d times", n)
	}
}

// Requests whose Host or Origin is not allowed get 403 (DNS rebinding).
func TestHostAndOriginAllowLists(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(_ *server.Config, o *httpserve.Options) {
		o.AllowedHosts = []string{"mcp.example.com"}
		o.AllowedOrigins = []string{"https://app.example.com"}
	})
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"", "", http.StatusOK},
		{"mcp.example.com", "", http.StatusOK},
		{"mcp.example.com:443", "https://app.example.com", http.StatusOK},
		{"evil.example.net", "", http.StatusForbidden},
		{"mcp.example.com", "https://evil.example.net", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, rep.URL+"/healthz", nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, resp.StatusCode, tc.want)
		}
	}
}

// tools/list over HTTP offers the same tools as the registry, and --read-only drops the
// writers as over stdio.
func TestSameRegistryAsStdio(t *testing.T) {
	tm := newTeam(t)
	for _, ro := range []bool{false, true} {
		rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.ReadOnly = ro })
		c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
		}
		for _, d := range rep.Base.ToolDefs() {
			want = append(want, d.Name)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || len(got) == 0 {
			t.Errorf("read-only %v: tools/list %v, registry %v", ro, got, want)
		}
		if ro && slices.Contains(got, "r2r_ingest_document") {
			t.Errorf("--read-only offers r2r_ingest_document")
		}
	}
}

// In shared-key mode every caller acts with the server's own credential and needs no key;
// only the read-only tools are offered.
func TestSharedKeyMode(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(c *server.Config, o *httpserve.Options) {
		c.Credentials, c.ReadOnly = r2r.APIKey(tm.Bob.Key), true
		o.AuthMode = httpserve.AuthShared
	})
	c := mcpClient(t, rep.URL, nil)
	text, res := callText(t, c, "r2r_search", map[string]any{"query": "payout queue worker"})
	if res.IsError || !strings.Contains(text, tm.Bob.Secret) || strings.Contains(text, tm.Alice.Secret) {
		t.Fatalf("shared search: %s", text)
	}
	tl, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if !*tool.Annotations.ReadOnlyHint {
			t.Errorf("shared mode offers %s", tool.Name)
		}
	}
}

// An R2R that cannot check a key gets 503 (retry later), not 401, and nothing is
// remembered: the key works once R2R is back.
func TestKeyCheckWhileR2RIsDown(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	tm.Emu.Down(true)
	status, out, hdr := invoke(t, rep.URL, tm.Alice.Key, "r2r_status", nil)
	if status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || out.Error == nil {
		t.Fatalf("R2R down: %d %+v", status, out)
	}
	tm.Emu.Down(false)
	if status, out, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_list_collections", nil); status != http.StatusOK {
		t.Fatalf("R2R back: %d %+v", status, out)
	}
}

// history reads the r2r://search/history resource.
func history(t testing.TB, c *client.Client) string {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "r2r://search/history"
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ct := range res.Contents {
		if tc, ok := ct.(mcp.TextResourceContents); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Over HTTP the search history is each user's own.
func TestSearchHistoryPerUser(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	alice, bob := mcpClient(t, rep.URL, bearer(tm.Alice.Key)), mcpClient(t, rep.URL, bearer(tm.Bob.Key))
	callText(t, alice, "r2r_search", map[string]any{"query": "alice asks about payouts"})
	callText(t, bob, "r2r_search", map[string]any{"query": "bob asks about payouts"})
	if h := history(t, alice); !strings.Contains(h, "alice asks") || strings.Contains(h, "bob asks") {
		t.Errorf("alice's history: %s", h)
	}
	if h := history(t, bob); !strings.Contains(h, "bob asks") || strings.Contains(h, "alice asks") {
		t.Errorf("bob's history: %s", h)
	}
}

// Requests beyond the server's MaxInflight (--max-inflight) are refused at once with 429; bodies beyond MaxBodyBytes are
// refused without being read whole.
func TestBounds(t *testing.T) {
	tm := newTeam(t)
	tm.Emu.Configure(func(o *r2rtest.Options) { o.Latency = 500 * time.Millisecond })
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.Options.MaxInflight = 1 })
	// Two requests at once, each spending at least 500 ms in R2R: whichever comes second
	// finds the only slot taken.
	start := make(chan struct{})
	statuses := make(chan int, 2)
	for _, key := range []string{tm.Alice.Key, tm.Bob.Key} {
		go func() {
			<-start
			status, _, _ := invoke(t, rep.URL, key, "r2r_list_collections", nil)
			statuses <- status
		}()
	}
	close(start)
	got := []int{<-statuses, <-statuses}
	slices.Sort(got)
	if got[0] != http.StatusOK || got[1] != http.StatusTooManyRequests {
		t.Errorf("two requests with one slot: %v, want one 200 and one 429", got)
	}
	tm.Emu.Configure(func(o *r2rtest.Options) { o.Latency = 0 })

	big := `{"tool":"r2r_search","arguments":{"query":"` + strings.Repeat("a", httpserve.MaxBodyBytes) + `"}}`
	req, _ := http.NewRequest(http.MethodPost, rep.URL+"/mcp/invoke", strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer "+tm.Alice.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the bound: %d, want 413", resp.StatusCode)
	}
}

// envKey stands for the server's own credential as auth resolves it: it says it came from
// R2R_API_KEY.
type envKey struct{ r2r.Credentials }

func (envKey) Origin() auth.Origin { return auth.Origin{Source: auth.SourceEnvAPIKey} }

// r2r_status names the credential a call acts with: the caller's own key, or in shared-key
// mode the server's credential by its own source (so a rejected one gets that source's advice).
func TestStatusNamesTheCredential(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	if text, res := callText(t, mcpClient(t, rep.URL, bearer(tm.Alice.Key)), "r2r_status", nil); res.IsError ||
		!strings.Contains(text, "Credentials: the caller's R2R API key (user ") {
		t.Errorf("per-user r2r_status:\n%s", text)
	}
	shared := newReplica(t, tm, func(c *server.Config, o *httpserve.Options) {
		c.Credentials, c.ReadOnly = envKey{r2r.APIKey(tm.Bob.Key)}, true
		o.AuthMode = httpserve.AuthShared
	})
	if text, res := callText(t, mcpClient(t, shared.URL, nil), "r2r_status", nil); res.IsError ||
		!strings.Contains(text, "Credentials: "+auth.SourceEnvAPIKey+"\n") {
		t.Errorf("shared r2r_status:\n%s", text)
	}
}
