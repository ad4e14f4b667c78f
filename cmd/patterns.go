package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// memoryPatterns prints the recurring error signatures among the team's fixes: how many
// fixes each has and its newest fix, most fixes first.
func memoryPatterns(ctx context.Context, o *memoryOptions, st *memory.Store) error {
	fixes, err := st.Indexed(ctx, memory.KindFix)
	if err != nil {
		return err
	}
	patterns := memory.Patterns(fixes)
	if o.Limit > 0 && len(patterns) > o.Limit {
		patterns = patterns[:o.Limit]
	}
	w, now := o.Deps.IO.Out, time.Now()
	for _, p := range patterns {
		if o.JSON {
			rec := map[string]any{"signature": cleantext.String(p.Signature), "count": p.Count, "newest_fix": exportRecord(p.Newest, "")}
			if err := writeJSONLine(w, rec); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, "%3d× %s\n     newest fix: %s %q by %s, %s ago\n", p.Count, cleantext.Terminal(cleantext.Clip(p.Signature, 120)),
			p.Newest.ID, cleantext.Terminal(cleantext.Clip(p.Newest.Title, 80)), cleantext.Terminal(cleantext.Clip(p.Newest.Author, 30)),
			humanAge(now, p.Newest.Created))
	}
	fmt.Fprintf(o.Deps.IO.ErrOut, "%d error signatures among %d fixes.\n", len(patterns), len(fixes))
	return nil
}
