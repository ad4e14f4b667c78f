package tools

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// scope is the collection one call works on.
type scope struct {
	ID       string // "" when the project's collection does not exist yet (reads only)
	Name     string // collection name when known
	Explicit bool   // the caller passed collection_id
	Created  bool   // the project's collection was created by this call
	Project  *project.Project
	// All: no collection was named on a remote server, so the read covers every
	// collection the user may read (ID is "").
	All bool
	// Private and Shadow complete a team project's scope (see teamView): the caller's
	// private collection and the paths of the files in it.
	Private string
	Shadow  []string
}

// missing reports a project collection that has not been created yet.
func (s *scope) missing() bool { return s.ID == "" && !s.All }

// label names the collection in text output.
func (s *scope) label() string {
	if s.All {
		return "all collections you can read"
	}
	if s.Name != "" {
		return clipJSON(s.Name, maxTitleBytes) // R2R's, of any length
	}
	return "collection " + s.ID
}

// missingNote is what reads say when the project's collection does not exist yet.
func (s *scope) missingNote() string {
	if s.Project != nil && project.NotAProject(s.Project.Root) {
		return "No project collection: " + project.NoProjectAdvice(s.Project.Root) + "."
	}
	return fmt.Sprintf("No collection %s yet — ingest a file with r2r_ingest_document to create it.", s.Name)
}

// scoper resolves the scope of a call: the caller's collection_id, or the project's
// collection, completed in a team project with the caller's private view.
type scoper struct {
	projects func() *project.Resolver // the tools' resolver, read at each call as the tools read it
	client   func() *r2r.Client       // the tools' client, likewise
	views    *teamViews               // team projects' private collections, by team collection
	now      func() time.Time
	logger   func() *slog.Logger
}

const collectionIDHint = "run r2r_list_collections to see collection ids, or omit collection_id to use the current project's collection"

// resolve picks the collection of call c (nil: not a tool call): the caller's
// collection_id, else the project's collection (created when create is set). The error
// result is ready to return.
func (sc *scoper) resolve(ctx context.Context, c *call, explicitID string, create bool) (*scope, *mcp.CallToolResult) {
	return sc.resolveOf(ctx, c, nil, explicitID, create)
}

// resolveOf is resolve for a project the caller already resolved; nil resolves
// it.
func (sc *scoper) resolveOf(ctx context.Context, c *call, known *project.Project, explicitID string, create bool) (*scope, *mcp.CallToolResult) {
	if explicitID != "" {
		s := &scope{ID: explicitID, Explicit: true}
		if known != nil {
			pr := *known
			s.Project = &pr
		} else if pr, err := sc.projects().Project(ctx); err == nil {
			s.Project = &pr
		}
		return s, nil
	}
	if sc.projects().Remote() {
		return sc.remote(ctx, c, create)
	}
	var pc *project.Collection
	var err error
	if known != nil {
		pc, err = sc.projects().CollectionOf(ctx, sc.client(), *known, create)
	} else {
		pc, err = sc.projects().Collection(ctx, sc.client(), create)
	}
	if err != nil {
		return nil, sc.projectErrorResult(ctx, err)
	}
	pr := pc.Project
	s := &scope{ID: pc.ID, Name: pc.Name, Created: pc.Created, Project: &pr}
	sc.teamView(ctx, s)
	return s, nil
}

// remote is the scope of a call without collection_id on a remote server: the reads
// of a tool that may span every collection (Tool.RemoteSpansAll) cover every collection the
// user may read; other calls need a collection.
func (sc *scoper) remote(ctx context.Context, c *call, create bool) (*scope, *mcp.CallToolResult) {
	if c != nil && c.spansAll && !create {
		return &scope{All: true}, nil
	}
	return nil, sc.projectErrorResult(ctx, project.ErrRemote)
}

// refuseNoCollection is the refusal kind of a call that needs a collection and names none
// where there is no project to take it from (serve --http).
const refuseNoCollection = "collection_required"

// projectErrorResult maps a failure to resolve the project or its collection.
func (sc *scoper) projectErrorResult(ctx context.Context, err error) *mcp.CallToolResult {
	var pe *project.Error
	var re *r2r.Error
	switch {
	case errors.Is(err, project.ErrRemote):
		// A server without a local project: the call must name its collection.
		return refusal(refuseNoCollection, err.Error())
	case errors.As(err, &pe):
		// Not the call's arguments: the project's configuration (or R2R's account data).
		return configError(pe.Error())
	case errors.As(err, &re), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return r2rErrorResult(ctx, err, sc.client().BaseURL(), errHints{})
	}
	return toolerr.Result(toolerr.Info{Type: "project", Code: toolerr.CodeInternal,
		Message: "Cannot determine the current project: " + err.Error() + ". Pass collection_id explicitly, or start r2r-mcp inside the project."})
}

// collectionNotFound is the 404 hint for calls scoped to a collection.
func collectionNotFound(s *scope) errHints {
	if s.Explicit {
		return errHints{NotFound: fmt.Sprintf("Collection %s was not found in R2R (404). Run r2r_list_collections to see collection ids.", s.ID)}
	}
	return errHints{NotFound: fmt.Sprintf("The project's collection %s (%s) no longer exists in R2R (404); the mapping was reset, so try again.", s.Name, s.ID)}
}

// forgetOn404 drops a stale project mapping after R2R answered 404 for its collection.
func (sc *scoper) forgetOn404(ctx context.Context, s *scope, err error) {
	if !s.Explicit && errors.Is(err, r2r.ErrNotFound) {
		sc.projects().Forget(ctx, sc.client())
	}
}

// verify checks that the collection of a read still exists in R2R; search and RAG
// call it when they found nothing, because R2R answers a filter on a deleted collection
// with no hits rather than 404. R2R is asked at most once per project.VerifyTTL per collection. A
// project mapping whose collection is gone is dropped, so the next call resolves it
// afresh. It returns the error result to answer instead of "no results", or nil when the
// collection exists, does not exist yet (s.missing), or R2R could not say (the read's own
// result stands).
func (sc *scoper) verify(ctx context.Context, s *scope) *mcp.CallToolResult {
	if s == nil || s.missing() {
		return nil
	}
	err := sc.projects().Verify(ctx, sc.client(), s.ID)
	if err == nil || !errors.Is(err, r2r.ErrNotFound) {
		return nil
	}
	sc.forgetOn404(ctx, s, err)
	return r2rErrorResult(ctx, err, sc.client().BaseURL(), collectionNotFound(s))
}

// verifyWrite makes sure a write goes to a collection that exists. For the project's
// collection a stale mapping (the collection was deleted in R2R) is dropped and resolved
// again, which creates the collection anew when it is configured by name; R2R would
// otherwise create a stray collection for the unknown id. An explicit collection_id is
// checked every time and its name filled in.
func (sc *scoper) verifyWrite(ctx context.Context, s *scope) (*scope, *mcp.CallToolResult) {
	if s.Explicit {
		coll, err := sc.client().GetCollection(ctx, s.ID)
		if err != nil {
			return nil, r2rErrorResult(ctx, err, sc.client().BaseURL(), collectionNotFound(s))
		}
		s.Name = Sanitize(coll.Name)
		return s, nil
	}
	err := sc.projects().Verify(ctx, sc.client(), s.ID)
	switch {
	case err == nil:
		return s, nil
	case !errors.Is(err, r2r.ErrNotFound):
		return nil, r2rErrorResult(ctx, err, sc.client().BaseURL(), collectionNotFound(s))
	}
	sc.logger().Warn("the project's collection no longer exists in R2R; resolving it again", "collection_id", s.ID, "collection", s.Name)
	sc.projects().Forget(ctx, sc.client())
	return sc.resolve(ctx, nil, "", true)
}
