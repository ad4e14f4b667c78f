package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// supersede deals with the memory old once out's document has been ingested: deleted
// when R2R lets the caller, else hidden by out naming it (see the Outcome constants).
func (s *Store) supersede(ctx context.Context, out *Saved, old Memory) error {
	doc, err := s.wait(ctx, out.ID)
	if err != nil && ctx.Err() != nil {
		out.Outcome = OutcomePending
		return nil
	}
	if doc == nil || doc.IngestionStatus != r2r.IngestionSuccess {
		if doc != nil {
			out.Status = doc.IngestionStatus
		}
		out.Outcome = OutcomePending
		return nil
	}
	out.Status = doc.IngestionStatus
	added, err := kbsync.EnsureMember(ctx, s.API, s.CollectionID, doc)
	if err != nil {
		out.Outcome = OutcomePending
		return fmt.Errorf("the new memory %s is ingested but could not be added to the collection, so %s was kept: %w", out.ID, old.ID, err)
	}
	if added {
		s.wrote()
	}
	kept, err := s.deleteOwn(ctx, old.ID)
	switch {
	case errors.Is(err, r2r.ErrNotFound):
		out.Outcome = OutcomeGone
	case err != nil:
		out.Outcome = OutcomeShown
		if out.names {
			out.Outcome = OutcomeHidden
		}
		return fmt.Errorf("the new memory %s is saved, but deleting the one it supersedes (%s) failed: %w", out.ID, old.ID, err)
	case kept && out.names:
		out.Outcome, out.OldAuthor = OutcomeHidden, old.Author
	case kept:
		out.Outcome, out.OldAuthor = OutcomeShown, old.Author
	default:
		out.Outcome = OutcomeDeleted
	}
	return nil
}

// deleteOwn deletes document id. R2R answers 404 both for a document that is not there
// and for one that is not the caller's to delete (conformance test
// deletes/delete_other_users_document_404): kept reports the second, which R2R kept.
func (s *Store) deleteOwn(ctx context.Context, id string) (kept bool, err error) {
	err = s.API.DeleteDocument(ctx, id)
	if err == nil {
		s.wrote()
		return false, nil
	}
	if !errors.Is(err, r2r.ErrNotFound) {
		return false, err
	}
	if _, gerr := s.API.GetDocument(ctx, id); gerr == nil {
		return true, nil
	} else if !errors.Is(gerr, r2r.ErrNotFound) {
		return false, gerr
	}
	s.wrote() // gone, by whoever deleted it
	return false, err
}
