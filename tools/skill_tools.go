package tools

import (
	"context"
	"fmt"
	"slices"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// CheckSkillName refuses a skill draft named like a built-in prompt (its prompt would
// never be offered); nil for any other draft.
func CheckSkillName(d memory.Draft) error {
	if d.Kind == memory.KindSkill && slices.Contains(BuiltinPrompts, d.Title) {
		return &memory.Error{Field: "name", Msg: fmt.Sprintf("%q is a built-in prompt of r2r-mcp; give the skill another name", d.Title)}
	}
	return nil
}

// saveMemory saves draft in collection collID: a skill as the next version of the skill
// of its name (telling this session's prompts), any other memory as it is. version is the
// skill's, 0 for other memories.
func (d *Deps) saveMemory(ctx context.Context, collID string, draft memory.Draft, st memory.Stamp) (saved memory.Saved, version int, err error) {
	store := d.memoryStore(ctx, collID)
	if draft.Kind != memory.KindSkill {
		saved, err = store.Remember(ctx, draft, st)
		return saved, 0, err
	}
	saved, version, err = store.SaveSkill(ctx, draft, st)
	if err == nil && !saved.Already && d.skillsChanged != nil {
		d.skillsChanged()
	}
	return saved, version, err
}
