package r2r

import (
	"context"
	"net/http"
)

// ListCollections lists the collections the caller is a member of (all for a superuser),
// newest first.
func (c *Client) ListCollections(ctx context.Context, p ListParams) (*Page[Collection], error) {
	return page[Collection](ctx, c, &Call{Op: "list collections", Method: http.MethodGet, Path: "/v3/collections",
		Query: listQuery(p, true), Idempotent: true})
}

// GetCollection returns one collection; 404 when it does not exist, 403 without access.
func (c *Client) GetCollection(ctx context.Context, id string) (*Collection, error) {
	const op = "get collection"
	if err := requireID(op, "collection id", id); err != nil {
		return nil, err
	}
	return result[Collection](ctx, c, &Call{Op: op, Method: http.MethodGet, Path: pathf("/collections/%s", id),
		Idempotent: true})
}

// GetCollectionByName returns the caller's own collection called name; 404 when none.
func (c *Client) GetCollectionByName(ctx context.Context, name string) (*Collection, error) {
	const op = "get collection by name"
	if err := requireID(op, "collection name", name); err != nil {
		return nil, err
	}
	return result[Collection](ctx, c, &Call{Op: op, Method: http.MethodGet, Path: pathf("/collections/name/%s", name),
		Idempotent: true})
}

// CreateCollection creates a collection owned by the caller; a duplicate name gives 409.
// An empty description is not sent.
func (c *Client) CreateCollection(ctx context.Context, name, description string) (*Collection, error) {
	const op = "create collection"
	if err := requireID(op, "collection name", name); err != nil {
		return nil, err
	}
	body, err := jsonBody(op, struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
	}{name, description})
	if err != nil {
		return nil, err
	}
	return result[Collection](ctx, c, &Call{Op: op, Method: http.MethodPost, Path: "/v3/collections",
		Body: body, ContentType: "application/json"})
}

// AddDocumentToCollection assigns a document to a collection; 409 when it already is.
func (c *Client) AddDocumentToCollection(ctx context.Context, collectionID, documentID string) error {
	const op = "add document to collection"
	if err := requireID(op, "collection id", collectionID); err != nil {
		return err
	}
	if err := requireID(op, "document id", documentID); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodPost,
		Path: pathf("/collections/%s/documents/%s", collectionID, documentID)}, nil)
}

// RemoveDocumentFromCollection removes a document from a collection (the document stays).
func (c *Client) RemoveDocumentFromCollection(ctx context.Context, collectionID, documentID string) error {
	const op = "remove document from collection"
	if err := requireID(op, "collection id", collectionID); err != nil {
		return err
	}
	if err := requireID(op, "document id", documentID); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodDelete,
		Path: pathf("/collections/%s/documents/%s", collectionID, documentID)}, nil)
}

// ListCollectionDocuments lists the documents in a collection. p.IDs is ignored.
func (c *Client) ListCollectionDocuments(ctx context.Context, collectionID string, p ListParams) (*Page[Document], error) {
	const op = "list collection documents"
	if err := requireID(op, "collection id", collectionID); err != nil {
		return nil, err
	}
	return page[Document](ctx, c, &Call{Op: op, Method: http.MethodGet,
		Path: pathf("/collections/%s/documents", collectionID), Query: listQuery(p, false), Idempotent: true})
}

// DeleteCollection deletes a collection (its documents stay); 404 when it does not exist,
// 403 when the caller does not own it.
func (c *Client) DeleteCollection(ctx context.Context, id string) error {
	const op = "delete collection"
	if err := requireID(op, "collection id", id); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: http.MethodDelete, Path: pathf("/collections/%s", id)}, nil)
}

// ListCollectionUsers lists the members of a collection, its owner among them (GET
// /v3/collections/{id}/users); any member may, anyone else gets 403. p.IDs is ignored.
func (c *Client) ListCollectionUsers(ctx context.Context, collectionID string, p ListParams) (*Page[User], error) {
	const op = "list collection users"
	if err := requireID(op, "collection id", collectionID); err != nil {
		return nil, err
	}
	return page[User](ctx, c, &Call{Op: op, Method: http.MethodGet,
		Path: pathf("/collections/%s/users", collectionID), Query: listQuery(p, false), Idempotent: true})
}

// AddUserToCollection makes a user a member of a collection; only its owner (or a
// superuser) may.
func (c *Client) AddUserToCollection(ctx context.Context, collectionID, userID string) error {
	return c.collectionUser(ctx, "add user to collection", http.MethodPost, collectionID, userID)
}

// RemoveUserFromCollection takes a user out of a collection; only its owner (or a
// superuser) may. The user's documents stay in it.
func (c *Client) RemoveUserFromCollection(ctx context.Context, collectionID, userID string) error {
	return c.collectionUser(ctx, "remove user from collection", http.MethodDelete, collectionID, userID)
}

func (c *Client) collectionUser(ctx context.Context, op, method, collectionID, userID string) error {
	if err := requireID(op, "collection id", collectionID); err != nil {
		return err
	}
	if err := requireID(op, "user id", userID); err != nil {
		return err
	}
	return c.results(ctx, &Call{Op: op, Method: method, Path: pathf("/collections/%s/users/%s", collectionID, userID)}, nil)
}
