package tools

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

const teamSkillV1 = "---\nname: deploy-staging\ndescription: Deploy the service to staging\n---\n\n# Deploy\n\nRun make deploy ENV=staging for $ARGUMENTS.\n"

// bobSavesSkill saves a SKILL.md as bob, through the store r2r_remember and skill add use.
func (te *teamEnv) bobSavesSkill(md string) int {
	te.t.Helper()
	d, err := memory.Normalise(memory.Draft{Kind: memory.KindSkill, Body: md})
	if err != nil {
		te.t.Fatal(err)
	}
	st := &memory.Store{API: te.bob, CollectionID: te.coll, Poll: time.Millisecond}
	_, v, err := st.SaveSkill(context.Background(), d, memory.Stamp{UserID: te.bobID, Time: time.Now()})
	if err != nil {
		te.t.Fatal(err)
	}
	return v
}

// skillSession is ann's serve: the built-in prompts and the team's skills, read before the
// first prompts/list as the server does; changed receives each list_changed.
func skillSession(t *testing.T, d *Deps) (*client.Client, *SkillPrompts, chan struct{}) {
	t.Helper()
	hooks := &server.Hooks{}
	var sp *SkillPrompts
	hooks.AddBeforeListPrompts(func(ctx context.Context, _ any, _ *mcp.ListPromptsRequest) { sp.Load(ctx) })
	s := server.NewMCPServer("r2r-mcp-test", "test", server.WithPromptCapabilities(true), server.WithHooks(hooks))
	s.AddPrompts(Prompts(d, false)...)
	sp = NewSkillPrompts(d, s)
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	changed := make(chan struct{}, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationPromptsListChanged) {
			changed <- struct{}{}
		}
	})
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "skills-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c, sp, changed
}

func promptTitles(t *testing.T, c *client.Client) map[string]string {
	t.Helper()
	res, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range res.Prompts {
		out[p.Name] = p.Title
	}
	return out
}

func awaitChanged(t *testing.T, changed chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/prompts/list_changed")
	}
}

// TestTeamSkillPrompts: a skill bob saved is a prompt of ann's fresh session beside the
// built-in ones, whose body prompts/get returns; bob's update reaches her running session
// with list_changed; a skill she saves through r2r_remember is one at once; names of
// built-in prompts are refused on save and left out when saved behind r2r-mcp's back.
func TestTeamSkillPrompts(t *testing.T) {
	te := newTeamEnv(t)
	ctx := context.Background()
	te.bobSavesSkill(teamSkillV1)
	c, sp, changed := skillSession(t, te.deps)
	titles := promptTitles(t, c)
	if titles["ask"] == "" || !strings.Contains(titles["deploy-staging"], "v1 by bob") {
		t.Fatalf("prompts = %v", titles)
	}
	body, err := getPrompt(c, "deploy-staging", map[string]string{"arguments": "the billing service"})
	if err != nil || !strings.Contains(body, "Run make deploy ENV=staging for the billing service.") || strings.Contains(body, "name:") {
		t.Fatalf("prompt body %q, %v", body, err)
	}
	for len(changed) > 0 { // the first load's own notification
		<-changed
	}

	if v := te.bobSavesSkill(strings.Replace(teamSkillV1, "ENV=staging", "ENV=staging SMOKE=1", 1)); v != 2 {
		t.Fatalf("bob's update is version %d", v)
	}
	if err := sp.Refresh(ctx); err != nil { // what the poll does each --skill-poll
		t.Fatal(err)
	}
	awaitChanged(t, changed)
	if titles := promptTitles(t, c); !strings.Contains(titles["deploy-staging"], "v2") {
		t.Fatalf("after the update: %v", titles)
	}
	if body, err := getPrompt(c, "deploy-staging", nil); err != nil || !strings.Contains(body, "SMOKE=1") {
		t.Fatalf("updated body %q, %v", body, err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go sp.Run(runCtx, time.Hour) // only a save in the session refreshes within the test
	o := te.remember(map[string]any{"kind": "skill", "title": "release-notes",
		"body": "---\nname: release-notes\ndescription: Write the release notes\n---\nList the merged changes since the last tag."})
	if o.Version != 1 || !strings.Contains(o.Message, "version 1") {
		t.Fatalf("remember: %+v", o)
	}
	awaitChanged(t, changed)
	if titles := promptTitles(t, c); titles["release-notes"] == "" {
		t.Fatalf("ann's own skill is no prompt: %v", titles)
	}

	_, info := te.fail("r2r_remember", map[string]any{"kind": "skill", "title": "ask",
		"body": "---\nname: ask\ndescription: shadow\n---\nx"})
	if !strings.Contains(info.Message, "built-in prompt") {
		t.Fatalf("refusal %q", info.Message)
	}
	te.bobSavesSkill("---\nname: search\ndescription: shadow\n---\nnot r2r-mcp's search")
	if err := sp.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if body, err := getPrompt(c, "search", map[string]string{"query": "x"}); err != nil || strings.Contains(body, "shadow") || strings.Contains(body, "not r2r-mcp") {
		t.Fatalf("a skill took the built-in search prompt: %q, %v", body, err)
	}
}

// BuiltinPrompts names every prompt r2r-mcp has of its own.
func TestBuiltinPromptsListed(t *testing.T) {
	e := newEnv(t)
	var names []string
	for _, p := range Prompts(e.deps, false) {
		names = append(names, p.Prompt.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(BuiltinPrompts))
	if !slices.Equal(names, want) {
		t.Fatalf("prompts %v, BuiltinPrompts %v", names, want)
	}
}
