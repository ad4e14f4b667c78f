package httpserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// invoke POSTs one call to the gateway.
func invoke(t testing.TB, url, key, tool string, args map[string]any) (int, gateway.InvokeResponse, http.Header) {
	t.Helper()
	body, _ := json.Marshal(gateway.InvokeRequest{Tool: tool, Arguments: args})
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp/invoke", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gateway.InvokeResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return resp.StatusCode, out, resp.Header
}

// GET /mcp/tools lists exactly the registry's definitions.
func TestGatewayListsTheRegistry(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	req, _ := http.NewRequest(http.MethodGet, rep.URL+"/mcp/tools", nil)
	req.Header.Set("X-R2R-API-Key", tm.Alice.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	defs := rep.Base.ToolDefs()
	if len(got.Tools) != len(defs) {
		t.Fatalf("%d tools, registry has %d", len(got.Tools), len(defs))
	}
	for i, d := range defs {
		want, _ := json.Marshal(d)
		var w map[string]any
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(got.Tools[i], w) {
			t.Errorf("tool %d: got %v\nwant %v", i, got.Tools[i], w)
		}
		for _, k := range []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"} {
			if got.Tools[i][k] == nil {
				t.Errorf("%s has no %s", d.Name, k)
			}
		}
	}
}

// POST /mcp/invoke answers what the MCP path answers, tool by tool.
func TestGatewayMatchesMCP(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, nil)
	c := mcpClient(t, rep.URL, bearer(tm.Alice.Key))
	_, first := callText(t, c, "r2r_search", map[string]any{"query": "payout queue", "collection_id": tm.Alice.Collection})
	hits := first.StructuredContent.(map[string]any)["results"].([]any)
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
	docID := hits[0].(map[string]any)["document_id"].(string)
	// Every tool of the registry is called: with these arguments, or else with its example
	// call (tools.Example), in Alice's collection where the tool takes one.
	calls := map[string]map[string]any{
		"r2r_search":       {"query": "payout queue", "collection_id": tm.Alice.Collection},
		"r2r_rag_query":    {"question": "Which worker drains the payout queue?"},
		"r2r_get_document": {"document_id": docID},
		"r2r_monitor_task": {"document_id": docID},
		"r2r_remember": {"kind": "note", "title": "Deploy token", "collection_id": tm.Alice.Collection,
			"body": "The token is ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"},
		"r2r_troubleshoot": {"error": "payout queue stalled (pid 7)", "collection_id": tm.Alice.Collection},
	}
	// Over HTTP a file path is refused (files come only from --allow-dir), r2r_sync needs a
	// directory inside one, and a memory holding a token is refused; the other tools answer
	// as their example documents (each refused the same way twice, so both paths answer alike).
	httpErrors := map[string]bool{"r2r_ingest_document": true, "r2r_sync": true, "r2r_remember": true}
	defs := map[string]bool{}
	for _, d := range rep.Base.ToolDefs() {
		defs[d.Name] = true
	}
	for _, tl := range servertest.Tools(t) {
		name := tl.Def.Name
		if !defs[name] {
			t.Errorf("%s is not served", name)
			continue
		}
		args, wantErr := calls[name], httpErrors[name]
		if args == nil {
			args, wantErr = maps.Clone(tl.Example.Args), wantErr || tl.Example.Error != ""
			if _, ok := tl.Def.InputSchema.Properties["collection_id"]; ok {
				args["collection_id"] = tm.Alice.Collection
			}
		}
		_, viaMCP := callText(t, c, name, args)
		status, viaREST, _ := invoke(t, rep.URL, tm.Alice.Key, name, args)
		mcpStruct := plain(t, viaMCP.StructuredContent)
		restStruct := plain(t, viaREST.Structured)
		if name != "r2r_status" { // status reports live timings
			delete(mcpStruct, "cached")
			delete(restStruct, "cached")
			if !reflect.DeepEqual(mcpStruct, restStruct) {
				t.Errorf("%s: MCP %v\nREST %v", name, mcpStruct, restStruct)
			}
		} else if len(restStruct) == 0 || len(mcpStruct) != len(restStruct) {
			t.Errorf("%s: MCP %v\nREST %v", name, mcpStruct, restStruct)
		}
		info, isErr := mcpError(viaMCP)
		if isErr != wantErr {
			t.Errorf("%s: error %v %+v, want error %v", name, isErr, info, wantErr)
		}
		switch {
		case isErr != (viaREST.Error != nil):
			t.Errorf("%s: MCP error %v, REST error %v", name, isErr, viaREST.Error)
		case isErr && (viaREST.Error.Code != info.Code || status != gateway.StatusOf(info.Code)):
			t.Errorf("%s: REST %d %+v, MCP %+v", name, status, viaREST.Error, info)
		case !isErr && status != http.StatusOK:
			t.Errorf("%s: status %d", name, status)
		}
	}
}

// mcpError reads an MCP result's error class.
func mcpError(res *mcp.CallToolResult) (gateway.Error, bool) {
	if !res.IsError {
		return gateway.Error{}, false
	}
	raw, _ := json.Marshal(res.Meta.AdditionalFields["r2r-mcp/error"])
	var e gateway.Error
	_ = json.Unmarshal(raw, &e)
	return e, true
}

func plain(t testing.TB, v any) map[string]any {
	t.Helper()
	if v == nil {
		return map[string]any{}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Each error class has its HTTP status.
func TestGatewayErrorStatuses(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) {
		c.Options.Tools.RAGRateLimit, c.Options.Tools.RAGRateBurst = 0.001, 1
		c.Options.Breaker.Failures, c.Options.Retry.MaxRetries, c.Options.Breaker.Cooldown = 2, 0, time.Hour
	})
	key := tm.Alice.Key
	search := map[string]any{"query": "payout", "collection_id": tm.Alice.Collection}

	check := func(name string, wantStatus int, tool string, args map[string]any) {
		t.Helper()
		status, out, hdr := invoke(t, rep.URL, key, tool, args)
		if status != wantStatus || out.Error == nil || out.Text == "" {
			t.Errorf("%s: status %d %+v, want %d with an error", name, status, out, wantStatus)
		}
		if wantStatus == http.StatusTooManyRequests && hdr.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", name)
		}
	}
	check("invalid arguments", http.StatusBadRequest, "r2r_search", map[string]any{"query": "x", "zzz": 3})
	check("unknown tool", http.StatusNotFound, "r2r_nope", nil)
	invoke(t, rep.URL, key, "r2r_rag_query", map[string]any{"question": "payout?"})
	check("rate limited", http.StatusTooManyRequests, "r2r_rag_query", map[string]any{"question": "payout again?"})

	tm.Emu.ForceStatus(searchRoute, http.StatusInternalServerError, 1)
	check("R2R error", http.StatusBadGateway, "r2r_search", search)

	// Revoked after the key check: R2R's 401 reaches the tool, which says so.
	c, _ := r2r.New(r2r.Options{BaseURL: tm.Emu.URL, Credentials: r2r.APIKey(key)})
	if err := c.DeleteAPIKey(context.Background(), tm.Alice.UserID, tm.Alice.KeyID); err != nil {
		t.Fatal(err)
	}
	check("authentication", http.StatusUnauthorized, "r2r_search", map[string]any{"query": "revoked", "collection_id": tm.Alice.Collection})

	key = tm.Bob.Key
	tm.Emu.Down(true)
	invoke(t, rep.URL, key, "r2r_search", map[string]any{"query": "down 1"})
	invoke(t, rep.URL, key, "r2r_search", map[string]any{"query": "down 2"})
	check("breaker open", http.StatusServiceUnavailable, "r2r_search", map[string]any{"query": "down 3"})
}
