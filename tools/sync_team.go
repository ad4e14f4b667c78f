package tools

import (
	"fmt"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// SyncTeamPlan is what a team project's sync does to the team's version.
type SyncTeamPlan struct {
	Ref       string           `json:"ref"`
	Commit    string           `json:"commit"`
	Upload    int              `json:"upload"`
	Replace   int              `json:"replace"`
	Unchanged int              `json:"unchanged"`
	Retire    int              `json:"retire"`
	Left      []kbsync.Problem `json:"left,omitempty"`
	Behind    string           `json:"behind,omitempty"`
}

func teamPlanSchema() map[string]any {
	return objectSchema(map[string]any{
		"ref":       strProp("the ref the team follows"),
		"commit":    strProp("its commit"),
		"upload":    intProp("files of the ref new to the team's version"),
		"replace":   intProp("files of the ref whose team version is replaced"),
		"unchanged": intProp("files whose team version is current"),
		"retire":    intProp("team versions of files gone from the ref, retired"),
		"left":      problemsSchema(fmt.Sprintf("changes left to whoever may make them (at most %d listed)", maxListedProblems)),
		"behind":    strProp("why nothing of the team's version is written (this clone's ref is behind the team's)"),
	}, "ref", "commit", "upload", "replace", "unchanged", "retire")
}

// SyncTeamResult is what a finished team project's sync did to the team's version.
type SyncTeamResult struct {
	Ref       string           `json:"ref"`
	Commit    string           `json:"commit"`
	Uploaded  int              `json:"uploaded"`
	Replaced  int              `json:"replaced"`
	Unchanged int              `json:"unchanged"`
	Retired   int              `json:"retired"`
	Left      []kbsync.Problem `json:"left,omitempty"`
	Behind    string           `json:"behind,omitempty"`
}

func teamResultSchema() map[string]any {
	return objectSchema(map[string]any{
		"ref":       strProp("the ref the team follows"),
		"commit":    strProp("its commit"),
		"uploaded":  intProp("files of the ref uploaded to the team's version"),
		"replaced":  intProp("files whose team version was replaced"),
		"unchanged": intProp("files whose team version was current"),
		"retired":   intProp("team versions of files gone from the ref, retired"),
		"left":      problemsSchema(fmt.Sprintf("changes left to whoever may make them (at most %d listed)", maxListedProblems)),
		"behind":    strProp("why nothing of the team's version was written (this clone's ref is behind the team's)"),
	}, "ref", "commit", "uploaded", "replaced", "unchanged", "retired")
}

// teamResult is s's team part for r2r_sync_status (nil outside team projects).
func teamResult(s *kbsync.TeamSummary) *SyncTeamResult {
	if s == nil {
		return nil
	}
	r := &SyncTeamResult{Ref: Sanitize(s.Ref), Commit: s.Commit, Uploaded: len(s.Uploaded), Replaced: len(s.Replaced),
		Unchanged: s.Unchanged, Retired: len(s.Deleted), Behind: Sanitize(s.Behind)}
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
