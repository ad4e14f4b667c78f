// Package team manages a repository's team collection in R2R: the collection everyone
// working on the repository shares, named by id in the repository's .r2r-mcp.json. It
// describes the collection (owner, members, whether the caller is one, other collections
// of the same name), creates or adopts it, adds and removes members, and words the advice
// a non-member gets. R2R 3.6.6 decides who may do what: the owner adds and removes
// members, members may read and add documents, only a document's owner deletes it, and
// the collection's owner may take any document out of it.
package team

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// API is the part of R2R's API this package uses (*r2r.Client implements it).
type API interface {
	Me(ctx context.Context) (*r2r.User, error)
	GetCollection(ctx context.Context, id string) (*r2r.Collection, error)
	GetCollectionByName(ctx context.Context, name string) (*r2r.Collection, error)
	CreateCollection(ctx context.Context, name, description string) (*r2r.Collection, error)
	ListCollections(ctx context.Context, p r2r.ListParams) (*r2r.Page[r2r.Collection], error)
	ListCollectionUsers(ctx context.Context, collectionID string, p r2r.ListParams) (*r2r.Page[r2r.User], error)
	AddUserToCollection(ctx context.Context, collectionID, userID string) error
	RemoveUserFromCollection(ctx context.Context, collectionID, userID string) error
	ListUsers(ctx context.Context, p r2r.ListParams) (*r2r.Page[r2r.User], error)
}

// Member is one user of a team collection.
type Member struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Owner bool   `json:"owner,omitempty"`
}

// Access is the caller's relation to a team collection.
type Access string

// The caller's possible relations to a team collection.
const (
	AccessOwner  Access = "owner"
	AccessMember Access = "member"
	AccessNone   Access = "none"
)

// Team is what the caller can learn of a team collection.
type Team struct {
	CollectionID string `json:"collection_id"`
	// Name is the collection's name; "" when the caller may not read it.
	Name string `json:"name,omitempty"`
	// OwnerID is R2R's owner of the collection; OwnerEmail its email when a member list
	// or the configuration gave it.
	OwnerID    string `json:"owner_id,omitempty"`
	OwnerEmail string `json:"owner_email,omitempty"`
	// Members is nil when the caller may not list them.
	Members []Member `json:"members,omitempty"`
	Me      Member   `json:"me"`
	Access  Access   `json:"access"`
	// SameName are other collections with this name the caller can see, owned by others:
	// R2R resolves a name per owner, so a teammate who syncs by name writes there instead.
	SameName []Collection `json:"same_name,omitempty"`
}

// Collection is a collection named in a warning.
type Collection struct {
	ID      string `json:"id"`
	OwnerID string `json:"owner_id"`
}

// listPage is the page size of member and collection listings (R2R's largest).
const listPage = 1000

// maxListed bounds how many members or collections are read (ten pages).
const maxListed = 10 * listPage

// Describe tells the caller's relation to the collection id. ownerEmail is the owner's
// email as the repository's configuration records it ("" = unknown): a non-member cannot
// read the collection, so that is all it learns of the owner.
func Describe(ctx context.Context, api API, collectionID, ownerEmail string) (*Team, error) {
	me, err := api.Me(ctx)
	if err != nil {
		return nil, err
	}
	t := &Team{CollectionID: collectionID, OwnerEmail: ownerEmail, Me: Member{ID: me.ID, Email: me.Email}, Access: AccessNone}
	col, err := api.GetCollection(ctx, collectionID)
	switch {
	case errors.Is(err, r2r.ErrForbidden):
		return t, nil
	case err != nil:
		return nil, err
	}
	t.Name = col.Name
	if col.OwnerID != nil {
		t.OwnerID = *col.OwnerID
	}
	t.Access = AccessMember
	if t.OwnerID == me.ID {
		t.Access = AccessOwner
	}
	if t.Members, err = members(ctx, api, collectionID, t.OwnerID); err != nil {
		return nil, err
	}
	for _, m := range t.Members {
		if m.Owner {
			t.OwnerEmail = m.Email
		}
	}
	if t.Access == AccessOwner {
		t.Me.Owner = true
	}
	t.SameName, err = sameName(ctx, api, col, me.ID)
	return t, err
}

// members lists the collection's users, the owner marked.
func members(ctx context.Context, api API, collectionID, ownerID string) ([]Member, error) {
	var out []Member
	for off := 0; off < maxListed; off += listPage {
		page, err := api.ListCollectionUsers(ctx, collectionID, r2r.ListParams{Offset: off, Limit: listPage})
		if err != nil {
			return nil, fmt.Errorf("listing the members of collection %s: %w", collectionID, err)
		}
		for _, u := range page.Items {
			out = append(out, Member{ID: u.ID, Email: u.Email, Owner: u.ID == ownerID})
		}
		if len(page.Items) < listPage || off+len(page.Items) >= page.Total {
			break
		}
	}
	slices.SortFunc(out, func(a, b Member) int {
		if a.Owner != b.Owner {
			if a.Owner {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Email, b.Email)
	})
	return out, nil
}

// sameName lists the other collections called col.Name that the caller sees and does not own
// (a superuser sees every collection, so theirs are counted only when owned by a member).
func sameName(ctx context.Context, api API, col *r2r.Collection, me string) ([]Collection, error) {
	var out []Collection
	for off := 0; off < maxListed; off += listPage {
		page, err := api.ListCollections(ctx, r2r.ListParams{Offset: off, Limit: listPage})
		if err != nil {
			return nil, fmt.Errorf("listing collections: %w", err)
		}
		for _, c := range page.Items {
			if c.ID == col.ID || c.Name != col.Name {
				continue
			}
			owner := ""
			if c.OwnerID != nil {
				owner = *c.OwnerID
			}
			out = append(out, Collection{ID: c.ID, OwnerID: owner})
		}
		if len(page.Items) < listPage || off+len(page.Items) >= page.Total {
			break
		}
	}
	return out, nil
}

// Adopt returns the caller's own collection called name, creating it when there is none;
// created says which.
func Adopt(ctx context.Context, api API, name string) (col *r2r.Collection, created bool, err error) {
	col, err = api.GetCollectionByName(ctx, name)
	if err == nil {
		return col, false, nil
	}
	if !errors.Is(err, r2r.ErrNotFound) {
		return nil, false, err
	}
	col, err = api.CreateCollection(ctx, name, "The team's knowledge base of "+strings.TrimPrefix(name, "claude-code-")+", kept by r2r-mcp.")
	if err != nil {
		return nil, false, err
	}
	return col, true, nil
}

// ErrUnknownUser is returned for a user that cannot be found.
var ErrUnknownUser = errors.New("unknown user")

// FindUser resolves who (a user id, or an email) to a user: an id as given; an email among
// the team's members, else through R2R's user list, which only a superuser may read.
func FindUser(ctx context.Context, api API, t *Team, who string) (Member, error) {
	who = strings.TrimSpace(who)
	if u, err := uuid.Parse(who); err == nil && len(who) == 36 {
		for _, m := range t.Members {
			if m.ID == u.String() {
				return m, nil
			}
		}
		return Member{ID: u.String()}, nil
	}
	if !strings.Contains(who, "@") {
		return Member{}, fmt.Errorf("%q is neither an email nor an R2R user id", who)
	}
	for _, m := range t.Members {
		if strings.EqualFold(m.Email, who) {
			return m, nil
		}
	}
	for off := 0; off < maxListed; off += listPage {
		page, err := api.ListUsers(ctx, r2r.ListParams{Offset: off, Limit: listPage})
		if errors.Is(err, r2r.ErrForbidden) {
			return Member{}, fmt.Errorf("%w: R2R lets only a superuser look a user up by email, and %s is not a member yet. "+
				"Ask them to run `r2r-mcp team` in the repository: it prints their user id and the command for you", ErrUnknownUser, who)
		}
		if err != nil {
			return Member{}, fmt.Errorf("listing R2R's users: %w", err)
		}
		for _, u := range page.Items {
			if strings.EqualFold(u.Email, who) {
				return Member{ID: u.ID, Email: u.Email}, nil
			}
		}
		if len(page.Items) < listPage || off+len(page.Items) >= page.Total {
			break
		}
	}
	return Member{}, fmt.Errorf("%w: R2R has no user with the email %s; they sign up (or an R2R admin creates the account) first", ErrUnknownUser, who)
}

// Label is how a member is named to people: the email, else the id.
func (m Member) Label() string { return cmp.Or(m.Email, m.ID) }

// JoinAdvice is what a user who is not a member of the team collection is told: whom to
// ask and the exact command to send them. It is worded here only.
func JoinAdvice(t *Team) string {
	owner := cmp.Or(t.OwnerEmail, "the collection's owner")
	return fmt.Sprintf("You (%s) are not a member of the team collection %s. Ask %s to run, in the repository:\n"+
		"  r2r-mcp team add %s",
		t.Me.Label(), t.CollectionID, owner, t.Me.ID)
}

// PrivateCollectionName is the name of a member's private collection of the team collection
// teamID: each member's own (R2R resolves names per owner), holding their versions of files
// that differ from the team's.
func PrivateCollectionName(teamID string) string { return "private-" + teamID }

// Standing says in one sentence which team collection t is, who owns it and what the
// caller is in it: the line status, doctor and r2r_status show.
func (t *Team) Standing() string {
	name := cmp.Or(t.Name, "(its name is not visible to you)")
	owner := cmp.Or((Member{ID: t.OwnerID, Email: t.OwnerEmail}).Label(), "unknown to you")
	role := map[Access]string{AccessOwner: "its owner", AccessMember: "a member"}[t.Access]
	if role == "" {
		role = "not a member"
	}
	return fmt.Sprintf("team collection %s (id %s), owner %s; you (%s) are %s", name, t.CollectionID, owner, t.Me.Label(), role)
}

// Warnings are what the caller should know of t: each visible collection of the same name
// owned by someone else, and JoinAdvice for a non-member.
func (t *Team) Warnings() []string {
	var out []string
	for _, s := range t.SameName {
		out = append(out, fmt.Sprintf("Another collection named %q (%s, owner %s) is visible to you; r2r-mcp uses %s, the one .r2r-mcp.json names.",
			t.Name, s.ID, s.OwnerID, t.CollectionID))
	}
	if t.Access == AccessNone {
		out = append(out, JoinAdvice(t))
	}
	return out
}
