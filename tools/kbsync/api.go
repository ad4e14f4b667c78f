package kbsync

import (
	"context"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// API is the part of R2R's document API the engine uses; *r2r.Client implements it.
type API interface {
	CreateDocument(ctx context.Context, in r2r.DocumentCreate) (*r2r.IngestionResponse, error)
	GetDocument(ctx context.Context, id string) (*r2r.Document, error)
	DeleteDocument(ctx context.Context, id string) error
	ListCollectionDocuments(ctx context.Context, collectionID string, p r2r.ListParams) (*r2r.Page[r2r.Document], error)
	AddDocumentToCollection(ctx context.Context, collectionID, documentID string) error
	RemoveDocumentFromCollection(ctx context.Context, collectionID, documentID string) error
}

var _ API = (*r2r.Client)(nil)

// Scope says whose documents of which collection the engine reads and writes: documents
// r2r-mcp wrote for Project, owned by UserID, in CollectionID. Documents of other users,
// other projects sharing the collection, or files from extra roots are never touched.
type Scope struct {
	CollectionID string
	UserID       string
	Project      string
	// Root is MetaSourceRoot of the files written ("" for the project's own files).
	Root string
	// Layer is the layer of a team project the documents are written to (MetaLayer; see
	// Team); "" outside team projects. LayerTeam documents have ids shared by the team.
	Layer string
}
