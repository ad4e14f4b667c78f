package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// maxMembers bounds the members read to name authors: R2R's largest page, twice.
const (
	membersPage = 1000
	maxMembers  = 2 * membersPage
)

// members returns the collection's members by user id, read once per Store (a failure
// too: the authors of a listing cost one request at most).
func (s *Store) members(ctx context.Context) (map[string]r2r.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users != nil || s.usersErr != nil {
		return s.users, s.usersErr
	}
	users := map[string]r2r.User{}
	for off := 0; off < maxMembers; off += membersPage {
		p, err := s.API.ListCollectionUsers(ctx, s.CollectionID, r2r.ListParams{Offset: off, Limit: membersPage})
		if err != nil {
			s.usersErr = err
			return nil, err
		}
		for _, u := range p.Items {
			users[u.ID] = u
		}
		if len(p.Items) < membersPage || off+len(p.Items) >= p.Total {
			break
		}
	}
	s.users = users
	return users, nil
}

// author names user ownerID as R2R gives it: the email of a member of the collection;
// "user <id prefix>" for anyone else (a departed member, an admin), or when the members
// cannot be read.
func (s *Store) author(ctx context.Context, ownerID string) string {
	users, err := s.members(ctx)
	if u, ok := users[ownerID]; err == nil && ok && u.Email != "" {
		return u.Email
	}
	return "user " + ownerID[:min(len(ownerID), 8)]
}

// withAuthors sets each memory's Author.
func (s *Store) withAuthors(ctx context.Context, ms []Memory) {
	for i := range ms {
		ms[i].Author = s.author(ctx, ms[i].OwnerID)
	}
}

// resolve sets q.OwnerIDs to the members q.Author names: by email, by name, or by the
// user part of the email (as recall shows an author), letter case aside. ok is false when
// q names an author and no member is one.
func (s *Store) resolve(ctx context.Context, q *Query) (ok bool, err error) {
	if q.Author == "" {
		return true, nil
	}
	users, err := s.members(ctx)
	if err != nil {
		return false, err
	}
	q.OwnerIDs = nil
	for id, u := range users {
		user, _, _ := strings.Cut(u.Email, "@")
		name := ""
		if u.Name != nil {
			name = *u.Name
		}
		for _, n := range []string{u.Email, name, user} {
			if n != "" && strings.EqualFold(n, q.Author) {
				q.OwnerIDs = append(q.OwnerIDs, id)
				break
			}
		}
	}
	slices.Sort(q.OwnerIDs)
	return len(q.OwnerIDs) > 0, nil
}
