package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// BuiltinPrompts are the names of r2r-mcp's own prompts; a team skill may not take one.
var BuiltinPrompts = []string{"ask", "search", "resume", "sync", "remember"}

// skillArg is the optional argument of a skill's prompt: what the user typed after the
// command, put in place of $ARGUMENTS (or after the skill) as Claude Code does.
const skillArg = "arguments"

// PromptSetter is the part of an MCP server the team's skills change; adding or deleting
// prompts tells its sessions notifications/prompts/list_changed.
type PromptSetter interface {
	AddPrompts(prompts ...server.ServerPrompt)
	DeletePrompts(names ...string)
}

// SkillPrompts keeps the project's team skills as prompts of one MCP server.
type SkillPrompts struct {
	d    *Deps
	srv  PromptSetter
	kick chan struct{}

	mu     sync.Mutex // serialises refreshes
	shown  map[string]string
	loaded bool
}

// NewSkillPrompts returns the team-skill prompts of d's project on srv; nothing is read
// before Load, Refresh or Run.
func NewSkillPrompts(d *Deps, srv PromptSetter) *SkillPrompts {
	p := &SkillPrompts{d: d, srv: srv, kick: make(chan struct{}, 1), shown: map[string]string{}}
	d.skillsChanged = p.Changed
	return p
}

// Changed asks Run to read the skills again now (after a save in this session).
func (p *SkillPrompts) Changed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Load reads the skills the first time it is called (before the first prompts/list, so a
// fresh session lists them); a failure is logged, and Run tries again.
func (p *SkillPrompts) Load(ctx context.Context) {
	p.mu.Lock()
	loaded := p.loaded
	p.mu.Unlock()
	if !loaded {
		p.refreshLogged(ctx)
	}
}

// Run refreshes the prompts every interval (never when it is not positive) and after
// Changed until ctx ends.
func (p *SkillPrompts) Run(ctx context.Context, interval time.Duration) {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-p.kick:
		}
		p.refreshLogged(ctx)
	}
}

func (p *SkillPrompts) refreshLogged(ctx context.Context) {
	ctx, cancel := p.d.boundedCtx(ctx)
	defer cancel()
	if err := p.Refresh(ctx); err != nil && ctx.Err() == nil {
		p.d.logger().Warn("reading the team's skills", "err", Sanitize(err.Error()))
	}
}

// Refresh reads the project's skills and adds, replaces and deletes prompts to match. A
// skill named like a built-in prompt is left out. Outside a project, or before its
// collection exists, there are none.
func (p *SkillPrompts) Refresh(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	skills, err := p.read(ctx)
	if err != nil {
		return err
	}
	p.loaded = true
	var add []server.ServerPrompt
	now := map[string]string{}
	for _, m := range skills {
		if slices.Contains(BuiltinPrompts, m.Title) {
			continue
		}
		now[m.Title] = m.ID
		if p.shown[m.Title] != m.ID {
			add = append(add, p.prompt(m))
		}
	}
	var gone []string
	for name := range p.shown {
		if _, ok := now[name]; !ok {
			gone = append(gone, name)
		}
	}
	p.shown = now
	if len(gone) > 0 {
		p.srv.DeletePrompts(gone...)
	}
	if len(add) > 0 {
		p.srv.AddPrompts(add...)
	}
	return nil
}

func (p *SkillPrompts) read(ctx context.Context) ([]memory.Memory, error) {
	if p.d.Projects.Remote() {
		return nil, nil
	}
	if _, err := p.d.Projects.Project(ctx); err != nil {
		return nil, nil // no project: no team skills
	}
	pc, err := p.d.Projects.Collection(ctx, p.d.Client, false)
	if err != nil || !pc.Exists() {
		return nil, err
	}
	ms, err := p.d.memoryStore(ctx, pc.ID).Indexed(ctx, memory.KindSkill)
	if err != nil {
		return nil, err
	}
	var out []memory.Memory
	for _, m := range ms { // one per name, the newest
		if !slices.ContainsFunc(out, func(o memory.Memory) bool { return o.Title == m.Title }) {
			out = append(out, m)
		}
	}
	return out, nil
}

// prompt is skill m as a prompt: its body (the SKILL.md without front matter) as one user
// message, read from R2R when the prompt is asked for.
func (p *SkillPrompts) prompt(m memory.Memory) server.ServerPrompt {
	by := author(m.Author)
	pr := mcp.NewPrompt(m.Title,
		mcp.WithPromptTitle(fmt.Sprintf("%s (team skill v%d by %s)", m.Title, max(m.Version, 1), by)),
		mcp.WithPromptDescription(Sanitize(m.Description)),
		mcp.WithArgument(skillArg, mcp.ArgumentDescription("What the skill is to work on (replaces $ARGUMENTS in it)")))
	def := promptDef{prompt: pr, render: func(ctx context.Context, a map[string]string) (string, error) {
		body, err := p.d.memoryStore(ctx, "").Body(ctx, m)
		if err != nil {
			return "", fmt.Errorf("reading team skill %s (memory %s): %w", m.Title, m.ID, err)
		}
		sf, err := memory.ParseSkill(body)
		if err != nil {
			return "", fmt.Errorf("team skill %s (memory %s) is no valid SKILL.md: %w", m.Title, m.ID, err)
		}
		return withArguments(sf.Body, a[skillArg]), nil
	}}
	return server.ServerPrompt{Prompt: pr, Handler: p.d.promptHandler(def)}
}

// withArguments puts args in place of $ARGUMENTS in body, or after it when body has none.
func withArguments(body, args string) string {
	if strings.Contains(body, "$ARGUMENTS") {
		return strings.ReplaceAll(body, "$ARGUMENTS", args)
	}
	if args == "" {
		return body
	}
	return body + "\n\nARGUMENTS: " + args
}
