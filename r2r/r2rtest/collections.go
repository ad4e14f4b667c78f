package r2rtest

import (
	"fmt"
	"net/http"
	"slices"
	"sort"

	"github.com/google/uuid"
)

type collectionAction int

const (
	actView collectionAction = iota
	actEdit
)

// authorizeCollectionLocked mirrors R2R's authorize_collection_action: superuser and owner may
// do anything, members may only view. It writes the error and returns nil on failure.
func (c *call) authorizeCollectionLocked(id string, act collectionAction) *collection {
	col := c.e.st.collections[id]
	if c.user.superuser {
		// Superusers skip the check; the service call then reports the missing collection.
		if col == nil && act == actView {
			c.fail(http.StatusNotFound, "The specified collection does not exist.")
		} else if col == nil {
			c.fail(http.StatusNotFound, "Collection not found")
		}
		return col
	}
	if col == nil {
		c.fail(http.StatusNotFound, "The specified collection does not exist.")
		return nil
	}
	if col.ownerID == c.user.id {
		return col
	}
	if c.user.memberOf(id) {
		if act == actView {
			return col
		}
		c.fail(http.StatusForbidden, "Insufficient permissions for this action.")
		return nil
	}
	c.fail(http.StatusForbidden, "You do not have access to this collection.")
	return nil
}

func (c *call) handleListCollections() {
	if !c.guard() {
		return
	}
	p, ok := c.parseList(false)
	if !ok {
		return
	}
	var ids []string
	for _, raw := range c.r.URL.Query()["ids"] {
		u, err := uuid.Parse(raw)
		if err != nil {
			c.internal("list_collections", "ValueError", "badly formed hexadecimal UUID string")
			return
		}
		ids = append(ids, u.String())
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	var cols []*collection
	for _, col := range e.st.collections {
		if len(ids) > 0 && !slices.Contains(ids, col.id) {
			continue
		}
		switch {
		case p.ownerOnly:
			if col.ownerID != c.user.id {
				continue
			}
		case !c.user.superuser:
			if !c.user.memberOf(col.id) {
				continue
			}
		}
		cols = append(cols, col)
	}
	sort.Slice(cols, func(i, j int) bool { return cols[i].createdAt.After(cols[j].createdAt) })
	lo, hi := window(len(cols), p.offset, p.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, col := range cols[lo:hi] {
		out = append(out, e.collectionJSONLocked(col, false))
	}
	c.page(out, len(cols))
}

func (c *call) handleCreateCollection() {
	if !c.guard() {
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	name, isStr := body["name"].(string)
	if !isStr {
		if body["name"] == nil {
			c.invalid(validationError{Type: "missing", Loc: []any{"body", "name"}, Msg: "Field required"})
		} else {
			c.invalid(validationError{Type: "string_type", Loc: []any{"body", "name"}, Msg: "Input should be a valid string", Input: body["name"]})
		}
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, col := range e.st.collections {
		if col.ownerID == c.user.id && col.name == name {
			// R2R's words, though it is the owner's name that collides (conformance test
			// TestLive/collections/create_duplicate_name_409).
			c.fail(http.StatusConflict, "Collection with this ID already exists")
			return
		}
	}
	now := e.nowLocked()
	col := &collection{id: newUUID(), ownerID: c.user.id, name: name, description: strPtr(body["description"]),
		clusterStatus: "pending", syncStatus: "pending", createdAt: now, updatedAt: now}
	e.st.collections[col.id] = col
	c.user.collectionIDs = append(c.user.collectionIDs, col.id)
	c.ok(e.collectionJSONLocked(col, true))
}

func (c *call) handleGetCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	if col := c.authorizeCollectionLocked(id, actView); col != nil {
		c.ok(c.e.collectionJSONLocked(col, false))
	}
}

func (c *call) handleGetCollectionByName() {
	if !c.guard() {
		return
	}
	name := c.pathValue("sub")
	owner := c.user.id
	if v := c.r.URL.Query().Get("owner_id"); v != "" {
		u, err := uuid.Parse(v)
		if err != nil {
			c.invalid(validationError{Type: "uuid_parsing", Loc: []any{"query", "owner_id"},
				Msg: "Input should be a valid UUID, " + uuidReason(err), Input: v})
			return
		}
		if c.user.superuser {
			owner = u.String()
		}
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, col := range e.st.collections {
		if col.ownerID == owner && col.name == name {
			c.ok(e.collectionJSONLocked(col, false))
			return
		}
	}
	c.fail(http.StatusNotFound, "No collection found with the specified name")
}

func (c *call) handleUpdateCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	body, ok := c.decodeJSONObject()
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	col := c.authorizeCollectionLocked(id, actEdit)
	if col == nil {
		return
	}
	gen, _ := body["generate_description"].(bool)
	desc := strPtr(body["description"])
	if gen && desc != nil {
		c.fail(http.StatusBadRequest, "Cannot provide both a description and request to synthetically generate a new one.")
		return
	}
	if gen {
		n := 0
		for _, d := range e.st.docs {
			if slices.Contains(d.collectionIDs, id) {
				n++
			}
		}
		s := fmt.Sprintf("A collection of %d documents.", n)
		desc = &s
	}
	name := strPtr(body["name"])
	if name == nil && desc == nil {
		c.fail(http.StatusBadRequest, "No fields to update")
		return
	}
	if name != nil {
		for _, other := range e.st.collections {
			if other != col && other.ownerID == col.ownerID && other.name == *name {
				c.internal("update_collection", "HTTPException",
					"500: An error occurred while updating the collection: duplicate key value violates unique constraint \"unique_owner_collection_name\"")
				return
			}
		}
		col.name = *name
	}
	if desc != nil {
		col.description = desc
	}
	col.updatedAt = e.nowLocked()
	c.ok(e.collectionJSONLocked(col, false))
}

func (c *call) handleDeleteCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	if id == uuid5(c.user.id) {
		c.fail(http.StatusBadRequest, "Cannot delete the default user collection.")
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.authorizeCollectionLocked(id, actEdit) == nil {
		return
	}
	delete(e.st.collections, id)
	for _, d := range e.st.docs {
		d.collectionIDs = slices.DeleteFunc(d.collectionIDs, func(s string) bool { return s == id })
	}
	for _, u := range e.st.users {
		u.collectionIDs = slices.DeleteFunc(u.collectionIDs, func(s string) bool { return s == id })
	}
	c.ok(map[string]any{"success": true})
}

func (c *call) handleListCollectionDocuments() {
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
	docs := e.sortedDocsLocked(func(d *document) bool { return slices.Contains(d.collectionIDs, id) })
	lo, hi := window(len(docs), p.offset, p.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, d := range docs[lo:hi] {
		j := e.documentJSONLocked(d)
		j["total_tokens"] = nil
		out = append(out, j)
	}
	c.page(out, len(docs))
}

func (c *call) handleAddDocumentToCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	docID, ok := c.uuidParam("document_id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	col := c.authorizeCollectionLocked(id, actEdit)
	if col == nil {
		return
	}
	d := e.st.docs[docID]
	if d == nil {
		c.fail(http.StatusNotFound, "Document not found")
		return
	}
	if slices.Contains(d.collectionIDs, id) {
		c.fail(http.StatusConflict, "Document is already assigned to the collection")
		return
	}
	d.collectionIDs = append(d.collectionIDs, id)
	col.docCount++
	col.syncStatus, col.clusterStatus = "outdated", "outdated"
	c.ok(map[string]any{"message": "Document assigned to collection successfully"})
}

func (c *call) handleRemoveDocumentFromCollection() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	docID, ok := c.uuidParam("document_id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.authorizeCollectionLocked(id, actEdit) == nil {
		return
	}
	d := e.st.docs[docID]
	if d == nil || !slices.Contains(d.collectionIDs, id) {
		c.fail(http.StatusNotFound, "Document not found in the specified collection")
		return
	}
	d.collectionIDs = slices.DeleteFunc(d.collectionIDs, func(s string) bool { return s == id })
	if col := e.st.collections[id]; col != nil {
		col.docCount--
	}
	c.ok(map[string]any{"success": true})
}
