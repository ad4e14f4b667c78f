package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// CollectionSummary is one entry of r2r_list_collections.
type CollectionSummary struct {
	CollectionID   string `json:"collection_id" required:"true" desc:"collection id (for the collection_id argument of other tools)"`
	Name           string `json:"name" required:"true" desc:"collection name"`
	Description    string `json:"description" required:"true" desc:"collection description"`
	DocumentCount  int    `json:"document_count" required:"true" desc:"number of documents in the collection"`
	UserCount      int    `json:"user_count" required:"true" desc:"number of users with access"`
	CurrentProject bool   `json:"current_project" desc:"true for the current project's collection"`
}

// ListCollectionsOutput is the structured result of r2r_list_collections.
type ListCollectionsOutput struct {
	Collections []CollectionSummary `json:"collections" required:"true" desc:"collections of this page, newest first"`
	Total       int                 `json:"total" required:"true" desc:"number of collections visible to this account"`
	Offset      int                 `json:"offset" desc:"offset of this page"`
	Limit       int                 `json:"limit" desc:"page size asked for"`
	// ProjectCollection names the current project's collection (whether or not it exists).
	ProjectCollection string `json:"project_collection,omitempty" desc:"name of the current project's collection"`
	Cached            bool   `json:"cached" desc:"true when served from r2r-mcp's cache"`
}

// listCollectionsTool lists through l.
func listCollectionsTool(d *Deps, l *loader) Tool {
	opts := append(readTool("List collections",
		"List the R2R collections this account can see (other projects' and teams' knowledge bases), marking the current project's. "+
			"Use it to find the collection_id to pass to the other tools.", outputSchema[ListCollectionsOutput]()),
		searchHint("list knowledge bases collections of other projects teams"),
		inputSchema[pageParams](),
	)
	def := newTool("r2r_list_collections", opts...)
	return Tool{Def: def, Group: GroupCollections, ReadOnly: true, Cached: true, Example: Example{Args: map[string]any{}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p pageParams) (*mcp.CallToolResult, error) {
		offset, limit := p.Offset, p.Limit
		// The listing spans collections (key collection ""); which one is the project's is
		// marked afterwards, so one cached page serves every project.
		page, cached, err := d.loadCollections(ctx, c, l, offset, limit)
		if err != nil {
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), errHints{}), nil
		}
		// page may be shared with the cache: the project's collection is marked on a copy.
		o := ListCollectionsOutput{Collections: slices.Clone(page.Items), Total: page.Total, Offset: offset, Limit: limit, Cached: cached}
		if o.Collections == nil {
			o.Collections = []CollectionSummary{}
		}
		// Marking the project's collection is a courtesy: a failure to resolve it does not
		// fail the listing.
		var projID, projRoot string
		if pc, err := d.Projects.Collection(ctx, d.Client, false); err == nil {
			projID, projRoot = pc.ID, pc.Project.Root
			o.ProjectCollection = clipJSON(pc.Name, maxTitleBytes)
		}
		for i := range o.Collections {
			o.Collections[i].CurrentProject = projID != "" && o.Collections[i].CollectionID == projID
			if o.Collections[i].CurrentProject {
				o.Collections[i].DocumentCount = d.projectDocumentCount(ctx, c, l, projID, o.Collections[i].DocumentCount)
			}
		}
		return result(withCachedMarker(listCollectionsText(o, projID, projRoot), cached), o), nil
	})}
}

// loadCollections returns one page of the collections the credential sees, through the
// result cache: the listing spans collections (key collection ""), and which one is the
// project's is marked afterwards, so one cached page serves every project.
func (d *Deps) loadCollections(ctx context.Context, c *call, l *loader, offset, limit int) (collectionsPage, bool, error) {
	args := map[string]any{"offset": offset, "limit": limit}
	return cachedLoad(ctx, c, l, cache.KindList, "r2r_list_collections", args, "", func(ctx context.Context) (collectionsPage, bool, error) {
		page, err := d.Client.ListCollections(ctx, r2r.ListParams{Offset: offset, Limit: limit})
		if err != nil {
			return collectionsPage{}, false, err
		}
		p := collectionsPage{Items: make([]CollectionSummary, 0, len(page.Items)), Total: page.Total}
		for _, c := range page.Items {
			desc := ""
			if c.Description != nil {
				desc = clipJSON(Sanitize(*c.Description), maxListTitleBytes)
			}
			p.Items = append(p.Items, CollectionSummary{
				CollectionID: clipJSON(c.ID, maxEnumBytes), Name: clipJSON(Sanitize(c.Name), maxListTitleBytes), Description: desc,
				DocumentCount: c.DocumentCount, UserCount: c.UserCount,
			})
		}
		return p, true, nil
	})
}

// projectDocumentCount is how many documents the project's collection holds. R2R 3.6.6's
// document_count leaves out documents placed by metadata.collection_ids, which is how r2r-mcp
// files its uploads so that pending and failed ones are listed with the project
// (r2r/conformance: documents/collection_counts_and_sync_status), so the count comes from
// the collection's document listing instead: one request, cached like a listing. On failure
// R2R's own count (reported) stands.
func (d *Deps) projectDocumentCount(ctx context.Context, c *call, l *loader, collectionID string, reported int) int {
	n, _, err := cachedLoad(ctx, c, l, cache.KindList, "r2r_list_collections/project_count",
		map[string]any{"collection_id": collectionID}, collectionID, func(ctx context.Context) (int, bool, error) {
			page, err := d.Client.ListCollectionDocuments(ctx, collectionID, r2r.ListParams{Limit: 1})
			if err != nil {
				return 0, false, err
			}
			return page.Total, true, nil
		})
	if err != nil {
		return reported
	}
	return n
}

// collectionsPage is the cached part of r2r_list_collections.
type collectionsPage struct {
	Items []CollectionSummary `json:"items"`
	Total int                 `json:"total"`
}

func listCollectionsText(o ListCollectionsOutput, projID, projRoot string) string {
	var b strings.Builder
	if len(o.Collections) == 0 {
		if o.Total > 0 {
			fmt.Fprintf(&b, "No collections at offset %d; there are %d. Call again with a smaller offset.", o.Offset, o.Total)
		} else {
			b.WriteString("This account sees no collections in R2R.")
		}
	} else {
		fmt.Fprintf(&b, "Collections %d–%d of %d:\n", o.Offset+1, o.Offset+len(o.Collections), o.Total)
		for i, c := range o.Collections {
			mark := ""
			if c.CurrentProject {
				mark = " [current project]"
			}
			desc := ""
			if c.Description != "" {
				desc = " — " + snippet(c.Description, 120)
			}
			fmt.Fprintf(&b, "%d. %s (id %s)%s: %s, %s%s\n", o.Offset+i+1, oneLine(snippet(c.Name, 120)), c.CollectionID, mark,
				plural(c.DocumentCount, "document"), plural(c.UserCount, "user"), desc)
		}
		if rest := o.Total - (o.Offset + len(o.Collections)); rest > 0 {
			fmt.Fprintf(&b, "%d more — call again with offset=%d.\n", rest, o.Offset+len(o.Collections))
		}
	}
	if o.ProjectCollection != "" && projID == "" && project.NotAProject(projRoot) {
		fmt.Fprintf(&b, "\nNo project collection: %s.", project.NoProjectAdvice(projRoot))
	} else if o.ProjectCollection != "" && projID == "" {
		fmt.Fprintf(&b, "\nThe current project's collection %s does not exist yet; r2r_ingest_document creates it.", o.ProjectCollection)
	}
	return strings.TrimRight(b.String(), "\n")
}

// pageParams are the arguments of a paged listing.
type pageParams struct {
	Offset int `json:"offset" min:"0" max:"1000000" default:"0" desc:"Pagination offset (number of collections to skip)"`
	Limit  int `json:"limit" min:"1" max:"100" default:"20" desc:"Number of collections to return"`
}
