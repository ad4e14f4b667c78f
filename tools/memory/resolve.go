package memory

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// MinShortID is the shortest prefix of an id taken in its place (R2R's own citation ids,
// and the short ids r2r_recall shows, are at least 7 characters).
const MinShortID = 7

// IDError refuses an id that names no single memory; its text says why and what to pass.
type IDError struct{ msg string }

func (e *IDError) Error() string { return e.msg }

// Resolve returns the full id of the memory id names: a UUID as it is, or the memory of
// the collection whose id starts with id (at least MinShortID hex digits, any case), as
// r2r_recall shows it. A prefix matching no memory, or more than one, is an *IDError.
func (s *Store) Resolve(ctx context.Context, id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if len(id) == 36 {
		if err := uuid.Validate(id); err != nil {
			return "", &IDError{fmt.Sprintf("%q is not a memory id (a UUID, or the short id r2r_recall shows)", id)}
		}
		return id, nil
	}
	if len(id) < MinShortID || len(id) > 36 || strings.Trim(id, "0123456789abcdef-") != "" {
		return "", &IDError{fmt.Sprintf("%q is not a memory id (a UUID, or the short id r2r_recall shows: at least %d hex digits)", id, MinShortID)}
	}
	l, err := s.List(ctx, Query{}, -1)
	if err != nil {
		return "", err
	}
	var found []string
	for _, m := range l.Memories {
		if strings.HasPrefix(m.ID, id) {
			found = append(found, m.ID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &IDError{fmt.Sprintf("no memory of the project's collection has an id starting with %s (memory list shows them)", id)}
	}
	return "", &IDError{fmt.Sprintf("%s is the start of %d memories' ids (%s): pass more of it", id, len(found), strings.Join(found, ", "))}
}
