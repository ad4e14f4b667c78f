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
