package tools

import (
	"context"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// refuseOutsideScope is the refusal kind of a document outside the project's collection.
const refuseOutsideScope = "document_outside_project"

// DeleteOutput is the structured result of r2r_delete_document.
type DeleteOutput struct {
	DocumentID     string `json:"document_id" required:"true" desc:"id of the deleted document"`
	Title          string `json:"title" required:"true" desc:"its title"`
	SourcePath     string `json:"source_path,omitempty" desc:"the project file it was ingested from, when r2r-mcp wrote it"`
	CollectionID   string `json:"collection_id" required:"true" desc:"the project's collection it was deleted from"`
	CollectionName string `json:"collection_name,omitempty" desc:"name of that collection"`
	Deleted        bool   `json:"deleted" required:"true" desc:"true: R2R deleted the document and its chunks"`
	Message        string `json:"message" required:"true" desc:"what was deleted"`
}

// deleteParams are the arguments of r2r_delete_document.
type deleteParams struct {
	documentParams
	CollectionID string `json:"collection_id"`
}

func (p *deleteParams) check(d *Deps) (err error) {
	if err = p.documentParams.check(d); err != nil {
		return err
	}
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

// deleteDocumentName is the delete tool's name, which other tools' advice names too.
const deleteDocumentName = "r2r_delete_document"

// deleteDocumentTool invalidates through w what a deletion makes stale.
func deleteDocumentTool(d *Deps, w *invalidator, sc *scoper) Tool {
	const title = "Delete a project document"
	def := newTool(deleteDocumentName,
		mcp.WithToolTitle(title),
		mcp.WithDescription("Delete one document (and its chunks) from the project's collection (or the collection_id given), e.g. an outdated or wrongly uploaded file. "+
			"Documents outside that collection are refused. r2r_list_documents or r2r_search give the id."),
		searchHint("remove delete outdated document from knowledge base"),
		annotations(title, false, true, true, false),
		withOutputSchema(outputSchema[DeleteOutput]()),
		documentIDParam("to delete, e.g. from r2r_list_documents or r2r_search"),
		mcp.WithString("collection_id", mcp.MaxLength(36),
			mcp.Description("Collection ID (UUID) the document is deleted from; omit to use the current project's collection")),
	)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: false, Example: Example{Args: map[string]any{"document_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}, Error: "document_outside_project"}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p deleteParams) (*mcp.CallToolResult, error) {
		id := p.DocumentID
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		if s.missing() {
			return refusal(refuseOutsideScope, fmt.Sprintf("Not deleted: the project's collection %s does not exist yet, so document %s is not in it.", s.Name, id)), nil
		}
		doc, err := d.Client.GetDocument(ctx, id)
		if err != nil {
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), docNotFound(id)), nil
		}
		o := DeleteOutput{DocumentID: id, Title: clipJSON(documentTitle(*doc), maxTitleBytes), CollectionID: s.ID,
			CollectionName: clipJSON(s.Name, maxTitleBytes)}
		o.SourcePath, _ = doc.Metadata[kbsync.MetaSourcePath].(string)
		o.SourcePath = clipJSON(Sanitize(o.SourcePath), maxTitleBytes)
		if !slices.Contains(doc.CollectionIDs, s.ID) {
			if s.Explicit {
				return refusal(refuseOutsideScope, fmt.Sprintf("Not deleted: document %s %q is not in %s. "+
					"Name the collection it is in as collection_id (r2r_get_document lists its collections).", id, o.Title, s.label())), nil
			}
			return refusal(refuseOutsideScope, fmt.Sprintf("Not deleted: document %s %q is not in the project's collection %s. "+
				"r2r_delete_document deletes only documents of the current project's collection; delete others in R2R itself.", id, o.Title, s.label())), nil
		}
		if err := d.Client.DeleteDocument(ctx, id); err != nil {
			w.wrote(s.ID) // R2R may have deleted it before failing to answer
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), docNotFound(id)), nil
		}
		w.deleted(id, s.ID)
		o.Deleted = true
		o.Message = fmt.Sprintf("Deleted document %s %q from %s.", id, o.Title, s.label())
		if o.SourcePath != "" {
			o.Message += fmt.Sprintf(" It was ingested from %s; ingest that file again to bring it back.", o.SourcePath)
		}
		return result(o.Message, o), nil
	})}
}
