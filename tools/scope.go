package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// scope is the collection one call works on.
type scope struct {
	ID       string // "" when the project's collection does not exist yet (reads only)
	Name     string // collection name when known
	Explicit bool   // the caller passed collection_id
	Created  bool   // the project's collection was created by this call
	Project  *Project
}

// missing reports a project collection that has not been created yet.
func (s *scope) missing() bool { return s.ID == "" }

// label names the collection in text output.
func (s *scope) label() string {
	if s.Name != "" {
		return s.Name
	}
	return "collection " + s.ID
}

// missingNote is what reads say when the project's collection does not exist yet.
func (s *scope) missingNote() string {
	return fmt.Sprintf("No collection %s yet — ingest a file with r2r_ingest_document to create it.", s.Name)
}

const collectionIDHint = "run r2r_list_collections to see collection ids, or omit collection_id to use the current project's collection"

// resolveScope picks the collection: the caller's collection_id, else the project's
// collection (created when create is set). The error result is ready to return.
func (d *Deps) resolveScope(ctx context.Context, explicitID string, create bool) (*scope, *mcp.CallToolResult) {
	if explicitID != "" {
		s := &scope{ID: explicitID, Explicit: true}
		if pr, err := d.Projects.Project(ctx); err == nil {
			s.Project = &pr
		}
		return s, nil
	}
	pc, err := d.Projects.Collection(ctx, d.Client, create)
	if err != nil {
		return nil, d.projectErrorResult(ctx, err)
	}
	pr := pc.Project
	return &scope{ID: pc.ID, Name: pc.Name, Created: pc.Created, Project: &pr}, nil
}

// projectErrorResult maps a failure to resolve the project or its collection.
func (d *Deps) projectErrorResult(ctx context.Context, err error) *mcp.CallToolResult {
	var pe *projectError
	var re *r2r.Error
	switch {
	case errors.As(err, &pe):
		return errorResult(ErrorInfo{Type: "project_config", Code: CodeInvalidParams, Message: pe.msg})
	case errors.As(err, &re), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return r2rErrorResult(ctx, err, d.Client.BaseURL(), errHints{})
	}
	return errorResult(ErrorInfo{Type: "project", Code: CodeInvalidParams,
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
func (d *Deps) forgetOn404(ctx context.Context, s *scope, err error) {
	if !s.Explicit && errors.Is(err, r2r.ErrNotFound) {
		d.Projects.Forget(ctx, d.Client)
	}
}
