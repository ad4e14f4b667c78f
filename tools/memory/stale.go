package memory

import (
	"context"
	"slices"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// maxStaleCommits bounds the git runs of one Stale call: memories saved at more distinct
// commits than this are not checked.
const maxStaleCommits = 20

// Stale returns, per memory id, the paths a memory names that changed (or were deleted)
// between the commit it was saved at and the commit it is judged against: the team's ref
// in a team project (the same for everyone, see Basis), else the HEAD of the git work tree
// at root. A memory without paths or commit, or whose commit this repository does not
// have, is left out: it is not known to be stale.
func Stale(ctx context.Context, root string, team bool, ms []Memory) map[string][]string {
	byCommit := map[string][]string{}
	var commits []string
	for _, m := range ms {
		if len(m.Paths) == 0 || !kbsync.IsCommitID(m.Commit) {
			continue
		}
		if _, ok := byCommit[m.Commit]; !ok {
			if len(commits) == maxStaleCommits {
				continue
			}
			commits = append(commits, m.Commit)
		}
		for _, p := range m.Paths {
			if !slices.Contains(byCommit[m.Commit], p) {
				byCommit[m.Commit] = append(byCommit[m.Commit], p)
			}
		}
	}
	if len(commits) == 0 {
		return nil
	}
	head := Basis(ctx, root, team)
	if head == "" {
		return nil
	}
	changed := map[string][]string{}
	for _, c := range commits {
		if c == head {
			continue
		}
		ch, err := kbsync.ChangedSince(ctx, root, c, head, byCommit[c])
		if err != nil {
			continue // a commit this clone lacks, or git failing: unknown, not stale
		}
		changed[c] = ch
	}
	out := map[string][]string{}
	for _, m := range ms {
		for _, p := range m.Paths {
			if slices.Contains(changed[m.Commit], p) {
				out[m.ID] = append(out[m.ID], p)
			}
		}
	}
	return out
}

// Basis is the commit memories of the project at root are saved at and judged against: in a
// team project (team) the commit of the ref the team follows, which every teammate has once
// they fetch, so a memory is stale or not for everyone alike; elsewhere, or without such a
// ref, the work tree's HEAD. "" when there is none.
func Basis(ctx context.Context, root string, team bool) string {
	if team {
		if _, c, err := kbsync.ResolveTeamRef(ctx, root, ""); err == nil {
			return c
		}
	}
	return kbsync.Head(ctx, root)
}
