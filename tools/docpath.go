package tools

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// docPathPage is the page size of a scan for a path's document (R2R's largest); a scan
// reads at most docPathPages pages.
const (
	docPathPage  = 1000
	docPathPages = 10
)

// checkDocPath reads a repository-relative path argument: forward slashes, cleaned, inside
// the project (an absolute path is made relative to the project root when the call
// resolves it).
func checkDocPath(name, p string) (string, error) {
	if err := nonBlank(name, p); err != nil {
		return "", err
	}
	p = strings.TrimSpace(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", argErr(name, "must be a file's path relative to the repository root, such as docs/runbook.md, got %q", p)
	}
	return p, nil
}

// documentAt is the id of the document of the file at p (relative to the project root)
// that the caller sees: in a team project their own version when they have one (in their
// private collection), else the team's; elsewhere the project's document with that source
// path, the caller's own first, then the newest.
func (d *Deps) documentAt(ctx context.Context, c *call, p string) (string, *mcp.CallToolResult) {
	if d.Projects.Remote() {
		return "", invalidRequest("path needs a project, and a server over HTTP has none: pass document_id (r2r_search and r2r_list_documents show them).")
	}
	s, errRes := d.scopes.resolve(ctx, c, "", false)
	if errRes != nil {
		return "", errRes
	}
	if s.Project != nil && filepath.IsAbs(p) {
		p = relativePaths(*s.Project, []string{p})[0]
		if filepath.IsAbs(p) {
			return "", invalidArgs(argErr("path", "%s is outside the project %s", Sanitize(p), Sanitize(s.Project.Root)))
		}
	}
	if s.missing() {
		return "", invalidRequest(fmt.Sprintf("No document of %s: %s", Sanitize(p), s.missingNote()))
	}
	userID, err := d.Projects.UserID(ctx, d.Client)
	if err != nil {
		return "", d.scopes.projectErrorResult(ctx, err)
	}
	collections := []string{s.ID}
	if s.Private != "" { // read, not s.Shadow: that may be up to viewTTL old
		collections = []string{s.Private, s.ID}
	}
	for _, col := range collections {
		doc, err := d.documentOfPath(ctx, col, p, userID)
		if err != nil {
			return "", r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s))
		}
		if doc != nil {
			return doc.ID, nil
		}
	}
	return "", invalidRequest(fmt.Sprintf("No document of %s in %s. r2r_list_documents shows the documents; "+
		"r2r_sync or r2r_ingest_document puts the file there.", Sanitize(p), s.label()))
}

// documentOfPath is the best document of collection col whose source path is p (see
// preferDocument); nil when there is none.
func (d *Deps) documentOfPath(ctx context.Context, col, p, userID string) (*r2r.Document, error) {
	var best *r2r.Document
	for page := 0; page < docPathPages; page++ {
		res, err := d.Client.ListCollectionDocuments(ctx, col, r2r.ListParams{Offset: page * docPathPage, Limit: docPathPage})
		if err != nil {
			return nil, err
		}
		for i := range res.Items {
			doc := &res.Items[i]
			if sp, _ := doc.Metadata[kbsync.MetaSourcePath].(string); sp == p && preferDocument(doc, best, userID) {
				best = doc
			}
		}
		if len(res.Items) < docPathPage || (page+1)*docPathPage >= res.Total {
			break
		}
	}
	return best, nil
}

// preferDocument reports whether a is a better version of a path than b (nil): the
// team's version over a copy from before team syncs, the caller's own over another's,
// then the newer.
func preferDocument(a, b *r2r.Document, userID string) bool {
	if b == nil {
		return true
	}
	if at, bt := a.Metadata[kbsync.MetaLayer] == kbsync.LayerTeam, b.Metadata[kbsync.MetaLayer] == kbsync.LayerTeam; at != bt {
		return at
	}
	if am, bm := a.OwnerID == userID, b.OwnerID == userID; am != bm {
		return am
	}
	return a.UpdatedAt.Time.After(b.UpdatedAt.Time)
}
