package tools

import (
	"fmt"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// SyncTeamPlan is what a team project's sync does to the team's version.
type SyncTeamPlan struct {
	Ref       string           `json:"ref" required:"true" desc:"the ref the team follows"`
	Commit    string           `json:"commit" required:"true" desc:"its commit"`
	Upload    int              `json:"upload" required:"true" desc:"files of the ref new to the team's version"`
	Replace   int              `json:"replace" required:"true" desc:"files of the ref whose team version is replaced"`
	Unchanged int              `json:"unchanged" required:"true" desc:"files whose team version is current"`
	Retire    int              `json:"retire" required:"true" desc:"team versions of files gone from the ref, retired"`
	Empty     int              `json:"empty" desc:"files of the ref with no text, not sent"`
	Left      []kbsync.Problem `json:"left,omitempty" desc:"teamLeftDesc"`
	Behind    string           `json:"behind,omitempty" desc:"why nothing of the team's version is written (this clone's ref is behind the team's)"`
}

// SyncTeamResult is what a finished team project's sync did to the team's version.
type SyncTeamResult struct {
	Ref       string           `json:"ref" required:"true" desc:"the ref the team follows"`
	Commit    string           `json:"commit" required:"true" desc:"its commit"`
	Uploaded  int              `json:"uploaded" required:"true" desc:"files of the ref uploaded to the team's version"`
	Replaced  int              `json:"replaced" required:"true" desc:"files whose team version was replaced"`
	Unchanged int              `json:"unchanged" required:"true" desc:"files whose team version was current"`
	Retired   int              `json:"retired" required:"true" desc:"team versions of files gone from the ref, retired"`
	Empty     int              `json:"empty" desc:"files of the ref with no text, not sent"`
	Left      []kbsync.Problem `json:"left,omitempty" desc:"teamLeftDesc"`
	Behind    string           `json:"behind,omitempty" desc:"why nothing of the team's version was written (this clone's ref is behind the team's)"`
}

// teamResult is s's team part for r2r_sync_status (nil outside team projects).
func teamResult(s *kbsync.TeamSummary) *SyncTeamResult {
	if s == nil {
		return nil
	}
	r := &SyncTeamResult{Ref: Sanitize(s.Ref), Commit: s.Commit, Uploaded: len(s.Uploaded), Replaced: len(s.Replaced),
		Unchanged: s.Unchanged, Retired: len(s.Deleted), Empty: s.Empty, Behind: Sanitize(s.Behind)}
	if len(s.Left) > 0 {
		r.Left = clipProblems(s.Left)
	}
	return r
}

// text is r's sentence in r2r_sync_status's message.
func (r *SyncTeamResult) text() string {
	t := fmt.Sprintf(" Team's version (%s at %.12s): uploaded %d, replaced %d, unchanged %d, retired %d.",
		r.Ref, r.Commit, r.Uploaded, r.Replaced, r.Unchanged, r.Retired)
	if r.Behind != "" {
		t += " Not written: " + r.Behind + "."
	}
	return t
}
