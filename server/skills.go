package server

import (
	"context"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools"
)

// teamSkills serves the project's team skills as prompts of a local server: read before the
// first prompts/list or prompts/get, then polled every poll (--skill-poll) and re-read after
// a save in this session, until Close. A remote server (serve --http) has no project of its
// own, so it offers none.
type teamSkills struct {
	prompts *tools.SkillPrompts
	remote  bool
	poll    time.Duration

	once   sync.Once
	mu     sync.Mutex
	cancel context.CancelFunc
	closed bool
}

// before is the hook of prompts/list and prompts/get.
func (t *teamSkills) before(ctx context.Context) {
	if t == nil || t.remote {
		return
	}
	t.prompts.Load(ctx)
	t.once.Do(func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.closed {
			return
		}
		var runCtx context.Context
		runCtx, t.cancel = context.WithCancel(context.WithoutCancel(ctx))
		go t.prompts.Run(runCtx, t.poll)
	})
}

// close stops the polling.
func (t *teamSkills) close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if t.cancel != nil {
		t.cancel()
	}
}
