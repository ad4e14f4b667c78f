package upload

import (
	"context"
	"errors"
	"fmt"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

// TeamSetup is what a team sync adds to a sync: the team side and the caller's private
// collection.
type TeamSetup struct {
	// Team is the team layer, to Join to the syncer built with Private as its scope.
	Team *kbsync.Team
	// CollectionID is the team collection; Name its name.
	CollectionID, Name string
	// Private is the sync's scope in the caller's private collection (CollectionID "" while
	// it does not exist: a dry run creates nothing).
	Private kbsync.Scope
}

// TeamSync prepares a team sync of the repository at root when its .r2r-mcp.json names a
// team collection by id (teamID; "" = not a team project) and the repository has a ref for
// the team's version; nil otherwise. scope is the sync's scope (the caller's user id, the
// project's name). The caller's private collection is found (or, with create, created) by
// its name. A caller who is not a member of the team collection gets team.JoinAdvice as
// the error. `r2r-mcp sync` (once or --watch) and the r2r_sync tool all start here.
func TeamSync(ctx context.Context, api team.API, teamID, ownerEmail, root string, scope kbsync.Scope, create bool) (*TeamSetup, error) {
	if teamID == "" {
		return nil, nil
	}
	col, err := api.GetCollection(ctx, teamID)
	if errors.Is(err, r2r.ErrForbidden) {
		t, derr := team.Describe(ctx, api, teamID, ownerEmail)
		if derr != nil {
			return nil, err
		}
		return nil, &NotMemberError{Team: t, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the team collection %s: %w", teamID, err)
	}
	owner := col.OwnerID != nil && *col.OwnerID == scope.UserID
	t, err := NewTeam(ctx, root, TeamConfig{CollectionID: teamID, CollectionOwner: owner})
	if errors.Is(err, kbsync.ErrNoTeamRef) {
		return nil, nil // no git history to follow: every file is the caller's, as before
	}
	if err != nil {
		return nil, err
	}
	private, err := PrivateScope(ctx, api, teamID, scope, create)
	if err != nil {
		return nil, err
	}
	return &TeamSetup{Team: t, CollectionID: teamID, Name: col.Name, Private: private}, nil
}

// PrivateScope is scope moved to the caller's private collection of team collection teamID
// (layer private), found by its name or, with create, created; its CollectionID is "" when
// it does not exist and create is off.
func PrivateScope(ctx context.Context, api team.API, teamID string, scope kbsync.Scope, create bool) (kbsync.Scope, error) {
	name := team.PrivateCollectionName(teamID)
	private := scope
	private.Layer = kbsync.LayerPrivate
	private.CollectionID = ""
	pc, err := api.GetCollectionByName(ctx, name)
	switch {
	case err == nil:
		private.CollectionID = pc.ID
	case !errors.Is(err, r2r.ErrNotFound):
		return kbsync.Scope{}, fmt.Errorf("looking up your private collection %s: %w", name, err)
	case create:
		if pc, err = api.CreateCollection(ctx, name, "Your own versions of the files of a team project that differ from the team's, kept by r2r-mcp."); err != nil {
			return kbsync.Scope{}, fmt.Errorf("creating your private collection %s: %w", name, err)
		}
		private.CollectionID = pc.ID
	}
	return private, nil
}

// Refresh resolves the team's ref anew (its commit and the merge base move with fetches
// and commits) and joins it to s, a syncer built with ts.Private as its scope: a
// long-running sync (--watch) calls it before each run.
func (ts *TeamSetup) Refresh(ctx context.Context, s *kbsync.Syncer, root string) error {
	t, err := NewTeam(ctx, root, TeamConfig{CollectionID: ts.CollectionID, CollectionOwner: ts.Team.CollectionOwner})
	if err != nil {
		return err
	}
	ts.Team = t
	Join(s, t, ts.CollectionID)
	return nil
}

// NotMemberError is a team sync refused because the caller is not a member of the team
// collection; its message is team.JoinAdvice, and it wraps R2R's refusal (Err).
type NotMemberError struct {
	Team *team.Team
	Err  error
}

func (e *NotMemberError) Error() string { return team.JoinAdvice(e.Team) }

func (e *NotMemberError) Unwrap() error { return e.Err }
