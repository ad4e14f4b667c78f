package r2rtest

import (
	"net/http"
	"slices"
	"sort"
)

// A collection's members, as R2R 3.6.6 manages them: the owner adds and removes users
// (authorize_collection_action's MANAGE_USERS), members and the owner list them, and
// POST /v3/users/{id}/collections/{collection_id} lets any user add themselves to any
// collection whose id they know (R2R checks only that the id is the caller's own; the
// conformance suite proves it on the real server).

func (c *call) handleListCollectionUsers() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	p, ok := c.parseList(false)
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.authorizeCollectionLocked(id, actView) == nil {
		return
	}
	var us []*user
	for _, u := range e.st.users {
		if u.memberOf(id) {
			us = append(us, u)
		}
	}
	// R2R's order: by name, users without one last, then by email.
	sort.Slice(us, func(i, j int) bool {
		a, b := us[i].name, us[j].name
		if (a == nil) != (b == nil) {
			return b == nil
		}
		if a != nil && *a != *b {
			return *a < *b
		}
		return us[i].email < us[j].email
	})
	lo, hi := window(len(us), p.offset, p.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, u := range us[lo:hi] {
		out = append(out, e.userJSONLocked(u))
	}
	c.page(out, len(us))
}

func (c *call) handleAddCollectionUser() {
	id, userID, unlock, ok := c.manageMembers()
	if !ok {
		return
	}
	defer unlock()
	c.joinLocked(userID, id)
}

// manageMembers parses the collection and user of a member route and checks that the caller
// may manage the collection's members, holding the emulator's lock (unlock releases it)
// when ok; otherwise the answer is written.
func (c *call) manageMembers() (id, userID string, unlock func(), ok bool) {
	if !c.guard() {
		return "", "", nil, false
	}
	if id, ok = c.uuidParam("id"); !ok {
		return "", "", nil, false
	}
	if userID, ok = c.uuidParam("user_id"); !ok {
		return "", "", nil, false
	}
	c.e.mu.Lock()
	if c.authorizeCollectionLocked(id, actEdit) == nil {
		c.e.mu.Unlock()
		return "", "", nil, false
	}
	return id, userID, c.e.mu.Unlock, true
}

// joinLocked adds user userID to collection id, answering as R2R's service does.
func (c *call) joinLocked(userID, id string) {
	u := c.e.st.users[userID]
	switch {
	case u == nil:
		c.fail(http.StatusNotFound, "User not found")
	case c.e.st.collections[id] == nil:
		c.fail(http.StatusNotFound, "Collection not found")
	case u.memberOf(id):
		c.fail(http.StatusBadRequest, "User already in collection")
	default:
		u.collectionIDs = append(u.collectionIDs, id)
		c.ok(map[string]any{"success": true})
	}
}

func (c *call) handleRemoveCollectionUser() {
	id, userID, unlock, ok := c.manageMembers()
	if !ok {
		return
	}
	defer unlock()
	u := c.e.st.users[userID]
	switch {
	case u == nil:
		c.fail(http.StatusNotFound, "User not found")
	case !u.memberOf(id):
		c.fail(http.StatusBadRequest, "User is not a member of the specified collection")
	default:
		u.collectionIDs = slices.DeleteFunc(u.collectionIDs, func(s string) bool { return s == id })
		c.ok(map[string]any{"success": true})
	}
}

// handleUserJoinCollection is POST /v3/users/{id}/collections/{collection_id}: R2R 3.6.6
// checks only that id is the caller's (or that the caller is a superuser).
func (c *call) handleUserJoinCollection() {
	if !c.guard() {
		return
	}
	userID, ok := c.uuidParam("id")
	if !ok {
		return
	}
	id, ok := c.uuidParam("collection_id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if userID != c.user.id && !c.user.superuser {
		c.fail(http.StatusForbidden, "The currently authenticated user does not have access to the specified collection.")
		return
	}
	c.joinLocked(userID, id)
}

// handleListUsers is GET /v3/users: superusers only.
func (c *call) handleListUsers() {
	if !c.guard() {
		return
	}
	p, ok := c.parseList(true)
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if !c.user.superuser {
		c.fail(http.StatusForbidden, "Only a superuser can call the `users_overview` endpoint.")
		return
	}
	var users []*user
	for _, u := range e.st.users {
		if len(p.ids) == 0 || slices.Contains(p.ids, u.id) {
			users = append(users, u)
		}
	}
	sort.Slice(users, func(i, j int) bool { return users[i].createdAt.Before(users[j].createdAt) })
	lo, hi := window(len(users), p.offset, p.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, u := range users[lo:hi] {
		out = append(out, e.userJSONLocked(u))
	}
	c.page(out, len(users))
}
