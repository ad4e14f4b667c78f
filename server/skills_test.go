package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
)

// recvID reads messages until the response with id, collecting the methods of the
// notifications before it.
func (c *pipeConn) recvID(t *testing.T, id float64) (map[string]any, []string) {
	t.Helper()
	var notes []string
	for {
		m := c.recv(t)
		if got, ok := m["id"].(float64); ok && got == id {
			return m, notes
		}
		if method, ok := m["method"].(string); ok {
			notes = append(notes, method)
		}
	}
}

// TestServeTeamSkills: a skill saved through one serve of a project is a prompt of a fresh
// serve of it, whose capabilities promise list_changed; prompts/get returns the body; an
// update saved in that session is announced with list_changed and served after it.
func TestServeTeamSkills(t *testing.T) {
	emu := r2rtest.NewServer(t, r2rtest.Options{})
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := func() *pipeConn {
		c, _ := runInProcess(ctx, Config{R2RURL: emu.URL, URLSource: "test", WorkDir: work, ConfigDir: t.TempDir(), Options: DefaultOptions()})
		c.send(t, initLine)
		res, _ := c.recv(t)["result"].(map[string]any)
		caps, _ := res["capabilities"].(map[string]any)
		if p, _ := caps["prompts"].(map[string]any); p["listChanged"] != true {
			t.Fatalf("prompts capability %v", caps["prompts"])
		}
		c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return c
	}
	first := start()
	args, _ := json.Marshal(map[string]any{"kind": "skill", "title": "deploy-staging",
		"body": "---\nname: deploy-staging\ndescription: Deploy to staging\n---\nRun make deploy for $ARGUMENTS."})
	first.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r2r_remember","arguments":`+string(args)+`}}`)
	if res, _ := first.recvID(t, 2); strings.Contains(string(skillJSON(t, res)), `"isError":true`) {
		t.Fatalf("remember: %v", res)
	}

	second := start()
	second.send(t, `{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`)
	res, _ := second.recvID(t, 3)
	if s := string(skillJSON(t, res)); !strings.Contains(s, `"name":"deploy-staging"`) || !strings.Contains(s, `"name":"ask"`) {
		t.Fatalf("prompts/list of a fresh serve: %s", s)
	}
	second.send(t, `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"deploy-staging","arguments":{"arguments":"billing"}}}`)
	res, _ = second.recvID(t, 4)
	if s := string(skillJSON(t, res)); !strings.Contains(s, "Run make deploy for billing.") {
		t.Fatalf("prompts/get: %s", s)
	}

	// An update saved in the running session is announced to it at once.
	args, _ = json.Marshal(map[string]any{"kind": "skill", "title": "deploy-staging",
		"body": "---\nname: deploy-staging\ndescription: Deploy to staging\n---\nRun make deploy SMOKE=1 for $ARGUMENTS."})
	second.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"r2r_remember","arguments":`+string(args)+`}}`)
	res, notes := second.recvID(t, 5)
	if !strings.Contains(string(skillJSON(t, res)), "version 2") {
		t.Fatalf("update: %v", res)
	}
	for !slices.Contains(notes, "notifications/prompts/list_changed") {
		if m, ok := second.recv(t)["method"].(string); ok {
			notes = append(notes, m)
		}
	}
	second.send(t, `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"deploy-staging","arguments":{"arguments":"billing"}}}`)
	if res, _ = second.recvID(t, 6); !strings.Contains(string(skillJSON(t, res)), "SMOKE=1") {
		t.Fatalf("prompts/get after list_changed: %v", res)
	}
}

func skillJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
