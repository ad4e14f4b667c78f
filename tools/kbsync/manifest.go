package kbsync

import (
	"context"
	"fmt"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Version is one document r2r-mcp wrote for a file.
type Version struct {
	ID     string
	SHA    string // "" for documents written before content hashes
	Status string // R2R's ingestion status
}

// Manifest maps source paths to the documents r2r-mcp wrote for them in one scope.
type Manifest struct {
	Paths map[string][]Version
	// Documents is how many documents of the collection were read.
	Documents int
}

// manifestPage is the page size of a manifest scan (R2R's largest).
const manifestPage = 1000

// LoadManifest reads every document of the scope's collection and keeps those r2r-mcp
// wrote for the scope (see Scope). It fails rather than return a partial manifest, so
// nothing is pruned on the strength of an incomplete listing.
func LoadManifest(ctx context.Context, api API, s Scope) (*Manifest, error) {
	m := &Manifest{Paths: map[string][]Version{}}
	seen := map[string]bool{}
	for off := 0; ; off += manifestPage {
		page, err := api.ListCollectionDocuments(ctx, s.CollectionID, r2r.ListParams{Offset: off, Limit: manifestPage})
		if err != nil {
			return nil, fmt.Errorf("listing the collection's documents: %w", err)
		}
		for _, d := range page.Items {
			if seen[d.ID] {
				continue // a page boundary shifted by a concurrent write
			}
			seen[d.ID] = true
			m.Documents++
			if p, v, ok := s.owns(d); ok {
				m.Paths[p] = append(m.Paths[p], v)
			}
		}
		if len(page.Items) < manifestPage || off+len(page.Items) >= page.Total {
			return m, nil
		}
	}
}

// owns reports whether d is a document r2r-mcp wrote for the scope, with its path.
func (s Scope) owns(d r2r.Document) (string, Version, bool) {
	md := d.Metadata
	str := func(k string) string { v, _ := md[k].(string); return v }
	mine := str(MetaSource) == SourceValue || str(MetaIngestedBy) == SourceValue
	p := str(MetaSourcePath)
	if !mine || p == "" || d.OwnerID != s.UserID || str(MetaProject) != s.Project || str(MetaSourceRoot) != s.Root {
		return "", Version{}, false
	}
	return p, Version{ID: d.ID, SHA: str(MetaContentSHA), Status: d.IngestionStatus}, true
}

// Versions returns the documents r2r-mcp wrote for one path of the scope, scanning the
// collection (see LoadManifest).
func Versions(ctx context.Context, api API, s Scope, path string) ([]Version, error) {
	m, err := LoadManifest(ctx, api, s)
	if err != nil {
		return nil, err
	}
	return m.Paths[path], nil
}
