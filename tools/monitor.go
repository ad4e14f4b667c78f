package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

// ingestionOrder is the order R2R moves through ingestion states (simple flow: parsing →
// augmenting → embedding → storing → success), with the progress each
// state stands for.
var ingestionOrder = []struct {
	status   string
	progress float64
}{
	{r2r.IngestionPending, 0},
	{r2r.IngestionParsing, 0.15},
	{r2r.IngestionExtract, 0.3},
	{r2r.IngestionChunking, 0.4},
	{r2r.IngestionAugment, 0.5},
	{r2r.IngestionEmbedding, 0.65},
	{r2r.IngestionStoring, 0.8},
	{r2r.IngestionEnriching, 0.9},
	{r2r.IngestionSuccess, 1},
	{r2r.IngestionFailed, 1},
}

// ingestionProgress maps a status to 0..1; failed is finished (1) like success.
func ingestionProgress(status string) float64 {
	for _, s := range ingestionOrder {
		if s.status == status {
			return s.progress
		}
	}
	return 0
}

// MonitorOutput is the structured result of r2r_monitor_task.
type MonitorOutput struct {
	DocumentID       string  `json:"document_id" required:"true" desc:"the document checked"`
	IngestionStatus  string  `json:"ingestion_status" required:"true" desc:"ingestionStatusDesc"`
	ExtractionStatus string  `json:"extraction_status" required:"true" desc:"knowledge-graph extraction status: pending, processing, success, enriched or failed"`
	Title            string  `json:"title" required:"true" desc:"document title"`
	Progress         float64 `json:"progress" required:"true" min:"0" max:"1" desc:"ingestion progress from 0 to 1, derived from the status (1 when success or failed)"`
	Done             bool    `json:"done" desc:"true when ingestion has finished (success or failed)"`
	Failure          string  `json:"failure,omitempty" desc:"R2R's failure reason when ingestion failed"`
	UpdatedAt        string  `json:"updated_at,omitempty" desc:"R2R's updated_at, RFC 3339: while ingestion runs, when it started"`
	Stuck            bool    `json:"stuck,omitempty" desc:"true when R2R has been ingesting the document for over 10 minutes without finishing: the text says what to do"`
	verdict          string  // the text on a stuck ingestion; "" = none
}

// ingestionStatusDesc describes an ingestion_status property: the statuses R2R reports
// (r2r.Ingestion*).
const ingestionStatusDesc = "R2R ingestion status: pending, parsing, extracting, chunking, embedding, augmenting, storing, enriching, failed or success"

// monitorTaskTool tells w when an ingestion this server started has ended.
func monitorTaskTool(d *Deps, w *invalidator) Tool {
	opts := append(readTool("Check ingestion status",
		"Check whether an uploaded document is ingested yet: ingestion and extraction status, progress 0..1, "+
			"and the reason when it failed. Poll it after r2r_ingest_document.", outputSchema[MonitorOutput]()),
		searchHint("ingestion status of an upload"),
		documentIDParam("to check status for, as returned by r2r_ingest_document"),
	)
	def := newTool("r2r_monitor_task", opts...)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: true, Example: Example{Args: map[string]any{"document_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}, Error: "not_found"}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p documentParams) (*mcp.CallToolResult, error) {
		id := p.DocumentID
		// Never cached: the status must be live.
		doc, err := d.Client.GetDocument(ctx, id)
		if err != nil {
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), docNotFound(id)), nil
		}
		w.ingested(id, doc.IngestionStatus)
		// A document this process uploaded is checked to be in its collection once R2R has
		// ingested it (see settleMembership); nothing is written for anyone else's.
		d.settleMembership(ctx, doc)
		o := MonitorOutput{
			DocumentID: clipJSON(doc.ID, maxEnumBytes), IngestionStatus: clipJSON(doc.IngestionStatus, maxEnumBytes),
			ExtractionStatus: clipJSON(doc.ExtractionStatus, maxEnumBytes), Title: clipJSON(documentTitle(*doc), maxTitleBytes),
			Progress: ingestionProgress(doc.IngestionStatus), Done: kbsync.Terminal(doc.IngestionStatus),
			Failure: failureReason(doc), UpdatedAt: formatTime(doc.UpdatedAt.Time),
		}
		if o.DocumentID == "" {
			o.DocumentID = id
		}
		o.Stuck, o.verdict = stuckVerdict(doc, o.DocumentID, d.now())
		return result(monitorText(o), o), nil
	})}
}

func docNotFound(id string) errHints {
	return errHints{NotFound: fmt.Sprintf("Document %s was not found in R2R (404), or this account cannot see it. Run r2r_list_documents to see document ids.", id)}
}

// stuckVerdict judges an ingestion R2R has not finished by how long it has been running
// (see kbsync.SlowAfter and kbsync.DeadAfter): stuck, and the text saying what to do.
func stuckVerdict(doc *r2r.Document, id string, now time.Time) (bool, string) {
	if kbsync.Terminal(doc.IngestionStatus) || doc.UpdatedAt.IsZero() {
		return false, ""
	}
	age := now.Sub(doc.UpdatedAt.Time)
	switch {
	case age >= kbsync.DeadAfter:
		return true, kbsync.DeadText(id, doc.IngestionStatus, doc.UpdatedAt.Time, age)
	case age >= kbsync.SlowAfter:
		return true, kbsync.StuckText(id, doc.IngestionStatus, doc.UpdatedAt.Time, age, deleteDocumentName)
	}
	return false, ""
}

func monitorText(o MonitorOutput) string {
	if o.verdict != "" {
		return fmt.Sprintf("Document %s %q: %s", o.DocumentID, o.Title, o.verdict)
	}
	switch o.IngestionStatus {
	case r2r.IngestionSuccess:
		return fmt.Sprintf("Document %s %q: ingestion success (100%%); extraction %s. It is searchable.", o.DocumentID, o.Title, orUnknown(o.ExtractionStatus))
	case r2r.IngestionFailed:
		return fmt.Sprintf("Document %s %q: ingestion FAILED: %s. Fix the file and ingest it again after deleting this document.", o.DocumentID, o.Title, o.Failure)
	}
	return fmt.Sprintf("Document %s %q: ingestion %s (%.0f%%); extraction %s. Still processing — check again in a few seconds.",
		o.DocumentID, o.Title, orUnknown(o.IngestionStatus), o.Progress*100, orUnknown(o.ExtractionStatus))
}
