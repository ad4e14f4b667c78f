package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// Resource URIs.
const (
	ProjectContextURI   = "r2r://current-project/context"
	SearchHistoryURI    = "r2r://search/history"
	AnalyticsURI        = "r2r://analytics"
	DocumentTemplateURI = "r2r://documents/{document_id}"
	documentURIPrefix   = "r2r://documents/"
)

// ProjectContext is the content of r2r://current-project/context (seed 000).
type ProjectContext struct {
	ProjectName     string         `json:"project_name"`
	ProjectPath     string         `json:"project_path"`
	CollectionID    *string        `json:"collection_id"`
	CollectionName  string         `json:"collection_name"`
	DocumentCount   int            `json:"document_count"`
	LastUpdated     *string        `json:"last_updated"`
	IngestionStatus map[string]int `json:"ingestion_status"`
	// Memories counts the team memories among the documents by kind.
	Memories map[string]int `json:"memories"`
	Note     string         `json:"note,omitempty"`
}

// SearchHistoryContent is the content of r2r://search/history.
type SearchHistoryContent struct {
	Project  string        `json:"project"`
	Searches []SearchEntry `json:"searches"`
}

// Resources returns the static resources.
func Resources(deps *Deps) []server.ServerResource {
	return []server.ServerResource{
		{
			Resource: mcp.NewResource(ProjectContextURI, "Current project context",
				mcp.WithResourceDescription("The current project, its R2R collection, document count by ingestion status, team memories by kind and last update."),
				mcp.WithMIMEType("application/json")),
			Handler: guardResource(deps, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				pc, err := deps.projectContext(ctx)
				if err != nil {
					return nil, err
				}
				return jsonContents(req.Params.URI, pc)
			}),
		},
		{
			Resource: mcp.NewResource(SearchHistoryURI, "Search history",
				mcp.WithResourceDescription("The last 10 searches in this project: time, query, number of hits."),
				mcp.WithMIMEType("application/json")),
			Handler: guardResource(deps, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				key, name := deps.historyKey(ctx, nil)
				if key == "" {
					_, err := deps.Projects.Project(ctx)
					return nil, err
				}
				return jsonContents(req.Params.URI, SearchHistoryContent{Project: name, Searches: deps.History.Recent(key)})
			}),
		},
		{
			Resource: mcp.NewResource(AnalyticsURI, "What the knowledge base could not answer",
				mcp.WithResourceDescription("This project's searches and RAG questions of the last 30 days: the ones that found nothing or only weak hits (documentation gaps) with how often each was asked, cache hit rate, the documents most often returned, memories recalled by kind."),
				mcp.WithMIMEType("application/json")),
			Handler: guardResource(deps, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				r, err := deps.analyticsReport(ctx)
				if err != nil {
					return nil, err
				}
				return jsonContents(req.Params.URI, r)
			}),
		},
	}
}

// ResourceTemplates returns the resource templates.
func ResourceTemplates(deps *Deps) []server.ServerResourceTemplate {
	return []server.ServerResourceTemplate{{
		Template: mcp.NewResourceTemplate(DocumentTemplateURI, "Document",
			mcp.WithTemplateDescription("A document's metadata and the first 8,000 characters of its text, as r2r_get_document returns them."),
			mcp.WithTemplateMIMEType("text/plain")),
		Handler: server.ResourceTemplateHandlerFunc(guardResource(deps, func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id, err := documentURIID(req.Params.URI)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", server.ErrResourceNotFound, errText(err))
			}
			o, errRes := deps.readDocument(ctx, nil, deps.loader, id, 0, defaultMaxChars)
			if errRes != nil {
				return nil, resultError(errRes)
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
				Text: capText(documentText(*o), MaxTextBytes)}}, nil
		})),
	}}
}

// documentURIID is the document id of an r2r://documents/{document_id} URI.
func documentURIID(uri string) (string, error) {
	raw := strings.TrimPrefix(uri, documentURIPrefix)
	if raw == uri || raw == "" {
		return "", fmt.Errorf("expected %s", DocumentTemplateURI)
	}
	return parseUUIDArg("document_id", raw, documentIDHint)
}

// resultError turns an error result into a Go error for resource handlers (resources have
// no isError form; the text still says what to do).
func resultError(r *mcp.CallToolResult) error {
	if info, ok := toolerr.Of(r); ok {
		if info.Type == "not_found" {
			return fmt.Errorf("%w: %s", server.ErrResourceNotFound, info.Message)
		}
		return fmt.Errorf("%s", info.Message)
	}
	return fmt.Errorf("request failed")
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// projectContext builds r2r://current-project/context.
func (d *Deps) projectContext(ctx context.Context) (*ProjectContext, error) {
	pr, err := d.Projects.Project(ctx)
	if err != nil {
		return nil, err
	}
	pc := &ProjectContext{ProjectName: pr.Name, ProjectPath: pr.Root, CollectionName: pr.CollectionName,
		IngestionStatus: map[string]int{"pending": 0, "success": 0, "failed": 0}, Memories: map[string]int{}}
	coll, err := d.Projects.CollectionOf(ctx, d.Client, pr, false)
	if err != nil {
		return nil, resultError(d.scopes.projectErrorResult(ctx, err))
	}
	if !coll.Exists() {
		pc.Note = (&scope{Name: coll.Name}).missingNote()
		return pc, nil
	}
	pc.CollectionID, pc.CollectionName = &coll.ID, clipJSON(coll.Name, maxTitleBytes)
	docs, truncated, err := d.scanCollection(ctx, coll.ID)
	if err != nil {
		return nil, resultError(r2rErrorResult(ctx, err, d.Client.BaseURL(), errHints{}))
	}
	pc.DocumentCount = len(docs)
	pc.Memories = memory.CountDocuments(docs)
	var last string
	for _, doc := range docs {
		switch {
		case doc.IngestionStatus == "success" || doc.IngestionStatus == "failed":
			pc.IngestionStatus[doc.IngestionStatus]++
		default:
			pc.IngestionStatus["pending"]++
		}
		if t := formatTime(doc.UpdatedAt.Time); t > last {
			last = t
		}
	}
	if last != "" {
		pc.LastUpdated = &last
	}
	if truncated {
		pc.Note = fmt.Sprintf("Counts cover the newest %d documents only.", maxScan)
	}
	return pc, nil
}

// historyKey names the search history a call belongs to, and its project's name: the
// project's (pr, or the current one when pr is nil); on a remote server, which has no
// project, the user's. "" = none.
func (d *Deps) historyKey(ctx context.Context, pr *project.Project) (key, name string) {
	if d.Projects.Remote() {
		return "user:" + d.Client.Identity(), ""
	}
	if pr == nil {
		p, err := d.Projects.Project(ctx)
		if err != nil {
			return "", ""
		}
		pr = &p
	}
	return pr.Root, pr.Name
}
