package r2rtest

import (
	"net/http"
	"sort"
)

// handleAddUserToCollection mirrors POST /v3/collections/{id}/users/{user_id}: the
// collection's owner or a superuser makes a user a member (conformance test
// memories/team/member_lists_members_with_emails).
func (c *call) handleAddUserToCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	userID, ok := c.uuidParam("user_id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.authorizeCollectionLocked(id, actEdit) == nil {
		return
	}
	u := e.st.users[userID]
	switch {
	case u == nil:
		c.fail(http.StatusNotFound, "User not found")
	case u.memberOf(id):
		c.fail(http.StatusBadRequest, "User already in collection")
	default:
		u.collectionIDs = append(u.collectionIDs, id)
		c.ok(map[string]any{"success": true})
	}
}

// handleListCollectionUsers mirrors GET /v3/collections/{id}/users: any member lists the
// members, ordered by name (R2R's order; users without one last).
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
