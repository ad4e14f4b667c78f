package kbsync

import (
	"context"
	"fmt"
	"strings"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Version is one document r2r-mcp wrote for a file.
type Version struct {
	ID     string
	SHA    string // "" for documents written before content hashes
	Status string // R2R's ingestion status
	// OwnerID is set for another member's team-layer document (see Writer.retire).
	OwnerID string
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

// owns reports whether d is a document r2r-mcp wrote for the scope, with its path. Its
// metadata is only a claim; what proves it is what R2R vouches for and the id: R2R sets
// owner_id to the account that uploaded (no caller can choose it), and r2r-mcp's id is
// derived from collection, owner, path and content hash (VersionID), so a document another
// client made, or r2r-mcp made for another path, content or collection, does not match.
// Someone holding the same R2R account could still compute the id: R2R 3.6.6 gives
// r2r-mcp no secret beyond the account to key a MAC with that all the user's machines and
// replicas share.
func (s Scope) owns(d r2r.Document) (string, Version, bool) {
	md := d.Metadata
	str := func(k string) string { v, _ := md[k].(string); return v }
	mine := str(MetaSource) == SourceValue || str(MetaIngestedBy) == SourceValue
	p, sha := str(MetaSourcePath), str(MetaContentSHA)
	if !mine || p == "" || d.OwnerID != s.UserID || str(MetaProject) != s.Project || str(MetaSourceRoot) != s.Root {
		return "", Version{}, false
	}
	if !s.provenID(d.ID, p, sha) {
		return "", Version{}, false
	}
	return p, Version{ID: d.ID, SHA: sha, Status: d.IngestionStatus}, true
}

// provenID reports whether id is the one r2r-mcp derives for a document of the scope with
// this source path and content hash (or, without a hash, the id before content hashes).
// The id path is the source path, or for a file r2r_ingest_document read from an extra
// root ("<root's base name>/<path in it>") the root's MetaSourceRoot and the path in it.
func (s Scope) provenID(id, sourcePath, sha string) bool {
	idPaths := []string{sourcePath}
	if s.Root != "" {
		_, rest, _ := strings.Cut(sourcePath, "/")
		idPaths = append(idPaths, s.Root+"/"+rest)
	}
	for _, ip := range idPaths {
		if id == VersionID(s.CollectionID, s.UserID, ip, sha) || (sha == "" && id == legacyID(s.CollectionID, s.UserID, ip)) {
			return true
		}
	}
	return false
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
