package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

const maxPathChars = 4096

var ingestionModes = []string{"hi-res", "fast", "custom"}

// documentNamespace is the UUIDv5 namespace of r2r-mcp's document ids.
var documentNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/r2r-mcp/r2r-mcp/documents"))

// DocumentID is the deterministic id r2r-mcp gives a file: UUIDv5 (in r2r-mcp's own
// namespace) of "<collection id>/<R2R user id>/<path>", where path is relative to the
// project root with forward slashes (for a file from an extra root: "<root's base
// name>/<path relative to it>"). The same user ingesting the same file into the same
// collection always gets the same id, so R2R answers a second upload with 409. The user
// id is part of it because R2R checks duplicates per owner but keys documents by id
// alone: teammates ingesting the same path into a shared collection must not send the
// same id (R2R would fail with 500 or overwrite the other's document).
func DocumentID(collectionID, userID, relPath string) string {
	return uuid.NewSHA1(documentNamespace, []byte(collectionID+"/"+userID+"/"+relPath)).String()
}

// reservedMetadata are metadata keys r2r-mcp sets itself. collection_ids is among them
// because R2R at HEAD takes a document's collections from metadata.collection_ids.
var reservedMetadata = []string{"source_path", "project", "ingested_by", "collection_ids"}

// IngestOutput is the structured result of r2r_ingest_document.
type IngestOutput struct {
	DocumentID      string `json:"document_id"`
	Status          string `json:"status"` // pending, success, failed, already_ingested
	FileName        string `json:"file_name"`
	CollectionID    string `json:"collection_id"`
	CollectionName  string `json:"collection_name,omitempty"`
	RelativePath    string `json:"relative_path"`
	SizeBytes       int64  `json:"size_bytes"`
	IngestionStatus string `json:"ingestion_status,omitempty"` // R2R's own status when known
	Failure         string `json:"failure,omitempty"`
	CollectionNew   bool   `json:"collection_created"`
	Message         string `json:"message"`
}

func ingestDocumentTool(d *Deps) Tool {
	def := ingestDocumentDef()
	parseArgs := argsParser(def)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: false, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := parseArgs(req)
		if err != nil {
			return invalidArgs(err), nil
		}
		var in ingestArgs
		if in.filePath, err = a.ReqString("file_path", maxPathChars); err != nil {
			return invalidArgs(err), nil
		}
		if in.collectionID, _, err = a.OptUUID("collection_id", collectionIDHint); err != nil {
			return invalidArgs(err), nil
		}
		if in.metadata, _, err = a.Object("metadata", maxMetadataBytes); err != nil {
			return invalidArgs(err), nil
		}
		if in.mode, err = a.Enum("ingestion_mode", ingestionModes, "fast"); err != nil {
			return invalidArgs(err), nil
		}
		if in.async, err = a.Bool("run_async", true); err != nil {
			return invalidArgs(err), nil
		}
		return d.ingest(ctx, req, in), nil
	}}
}

// ingestDocumentDef is r2r_ingest_document's definition.
func ingestDocumentDef() mcp.Tool {
	const title = "Ingest a project file"
	out := objectSchema(map[string]any{
		"document_id":        strProp("id of the document in R2R (deterministic: same collection + R2R user + path → same id)"),
		"status":             enumProp("pending: R2R is still processing (poll r2r_monitor_task); success; failed; already_ingested: this file was ingested before", "pending", "success", "failed", "already_ingested"),
		"file_name":          strProp("base name of the uploaded file"),
		"collection_id":      strProp("collection the document was added to"),
		"collection_name":    strProp("name of that collection, when known"),
		"relative_path":      strProp("path of the file relative to the project root (also the document title)"),
		"size_bytes":         intProp("size of the uploaded file in bytes"),
		"ingestion_status":   strProp("R2R's ingestion status when known (pending, parsing, …, success, failed)"),
		"failure":            strProp("R2R's failure reason when ingestion failed"),
		"collection_created": boolProp("true when the project's collection was created by this call"),
		"message":            strProp("what happened and what to do next"),
	}, "document_id", "status", "file_name", "collection_id")
	return newTool("r2r_ingest_document",
		mcp.WithToolTitle(title),
		mcp.WithDescription("Upload a document to R2R for indexing. Supports markdown, text, PDF, and more. "+
			"Only regular files inside the project (no secrets such as .env or keys) are read. "+
			"Returns immediately by default; ingestion happens asynchronously (poll r2r_monitor_task)."),
		annotations(title, false, false, true, true),
		withOutputSchema(out),
		mcp.WithString("file_path", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(maxPathChars),
			mcp.Description("Path of the file to ingest: relative to the project root, or absolute inside it")),
		mcp.WithString("collection_id", mcp.MaxLength(36),
			mcp.Description("Collection ID (UUID) to add the document to; omit to use the current project's collection (created on first use)")),
		mcp.WithObject("metadata",
			mcp.Description("Custom metadata for the document (at most 16 KiB as JSON). r2r-mcp adds title (the relative path), source_path, project and ingested_by")),
		mcp.WithString("ingestion_mode", mcp.Enum(ingestionModes...), mcp.DefaultString("fast"),
			mcp.Description("Ingestion mode: hi-res (full processing, LLM summary), fast (quick, no summary), custom (R2R's configured settings)")),
		mcp.WithBoolean("run_async", mcp.DefaultBool(true),
			mcp.Description("Return right away and let R2R ingest in the background (recommended); false waits up to about 40 s for the result")),
	)
}

// ingestArgs are one r2r_ingest_document call's arguments.
type ingestArgs struct {
	filePath, collectionID, mode string
	metadata                     map[string]any
	async                        bool
}

// upload is a confined file on its way to R2R.
type upload struct {
	file   *confinedFile
	rel    string // the name it is shown and titled by
	idPath string // the path its document id is derived from
	// release gives back the upload budget reserved for the file (uploadbudget.go).
	release func()
}

// ingest reads the file within the project's rules, resolves the collection (creating the
// project's on first use) and uploads the file.
func (d *Deps) ingest(ctx context.Context, req mcp.CallToolRequest, in ingestArgs) *mcp.CallToolResult {
	pr, err := d.Projects.Project(ctx)
	if err != nil {
		return d.projectErrorResult(ctx, err)
	}
	// Concurrent ingests share a memory budget for the files they read (uploadbudget.go).
	release, err := uploadBudget.reserve(ctx, uploadReservation(in.filePath, d.Projects.rootsOf(pr)))
	if err != nil {
		return uploadBusyResult()
	}
	defer release()
	up, res := d.readUpload(pr, in.filePath)
	if res != nil {
		return res
	}
	up.release = release
	md, err := documentMetadata(in.metadata, up.rel, up.file.Ext, pr.Name)
	if err != nil {
		return invalidArgs(err)
	}
	// The document id depends on who uploads (see DocumentID); asked before the
	// collection may be created, so a failure leaves nothing behind.
	userID, err := d.Projects.UserID(ctx, d.Client)
	if err != nil {
		return d.projectErrorResult(ctx, err)
	}
	s, errRes := d.resolveScopeOf(ctx, &pr, in.collectionID, true)
	if errRes != nil {
		return errRes
	}
	if s, errRes = d.verifyWriteScope(ctx, s); errRes != nil {
		return errRes
	}
	// R2R at HEAD ignores the form field collection_ids for metadata.collection_ids;
	// R2R 3.6 honours the form field. Both are sent.
	md["collection_ids"] = []any{s.ID}
	docID := DocumentID(s.ID, userID, up.idPath)
	o := IngestOutput{DocumentID: docID, FileName: path.Base(up.file.Rel), CollectionID: s.ID, CollectionName: s.Name,
		RelativePath: up.rel, SizeBytes: int64(len(up.file.Data)), CollectionNew: s.Created}
	if s.Created {
		d.bumpAfterWrite("") // the collection list changed
	}
	return d.send(ctx, req, s, up, md, in, o)
}

// readUpload applies the confinement rules to path for project pr and reads the file; the
// result is the refusal when it may not be read.
func (d *Deps) readUpload(pr Project, filePath string) (*upload, *mcp.CallToolResult) {
	roots := d.Projects.rootsOf(pr)
	// Started in the home directory (or /) with no project around it, everything there
	// (agents' own credential files included) would be "in the project": only the
	// --allow-dir roots are open then (relative paths still start at the project root).
	homeRoot := len(roots) > 0 && tooWide(roots[0])
	if homeRoot {
		if !filepath.IsAbs(filePath) {
			filePath = filepath.Join(roots[0], filePath)
		}
		roots = roots[1:]
	}
	f, err := confineFile(filePath, roots)
	if err != nil {
		var ce *ConfineError
		if errors.As(err, &ce) && homeRoot && ce.Kind == refuseOutside {
			return nil, refusal(refuseOutside, fmt.Sprintf("Not ingested: the project root is %s, your home directory or "+
				"the file-system root, so r2r-mcp does not ingest from it. Start your MCP client in a project "+
				"directory (or pass --project-dir), or allow one directory with --allow-dir.", pr.Root))
		}
		if errors.As(err, &ce) {
			return nil, refusal(ce.Kind, "Not ingested: "+ce.Msg)
		}
		return nil, refusal(refuseMissing, "Not ingested: "+err.Error())
	}
	up := &upload{file: f, rel: f.Rel, idPath: f.Rel}
	if !f.InProject {
		// A file from an extra root: named by the root's base name, never by the local
		// absolute path (user name, home layout), which would end up in shared metadata.
		// Its id also depends on the root's real path, so it cannot collide with a
		// project file (or another root's) that has the same displayed name.
		up.rel = path.Join(filepath.Base(f.Root), f.Rel)
		up.idPath = "extra:" + uuid.NewSHA1(documentNamespace, []byte(f.Root)).String()[:8] + "/" + f.Rel
	}
	return up, nil
}

// send uploads the file as document o.DocumentID into s and reports how R2R took it,
// waiting for the ingestion unless in.async.
func (d *Deps) send(ctx context.Context, req mcp.CallToolRequest, s *scope, up *upload, md map[string]any, in ingestArgs, o IngestOutput) *mcp.CallToolResult {
	docID := o.DocumentID
	// Mark the collection busy before the upload, so no search result from before the
	// document is searchable gets cached meanwhile (see cachedLoad).
	d.tracker().start(docID, s.ID, d.now())
	_, err := d.Client.CreateDocument(ctx, r2r.DocumentCreate{
		FileName:      path.Base(up.file.Rel),
		File:          up.file.Data,
		ID:            docID,
		Metadata:      md,
		CollectionIDs: []string{s.ID},
		IngestionMode: in.mode,
	})
	up.release() // the file's bytes and the request body are no longer needed
	switch {
	case errors.Is(err, r2r.ErrConflict):
		return d.alreadyIngested(ctx, s, o)
	case err != nil:
		// R2R may have stored the document even so (a proxy's 502 after R2R took it):
		// invalidate rather than risk serving results from before.
		d.tracker().finish(docID)
		d.bumpAfterWrite(s.ID)
		d.forgetOn404(ctx, s, err)
		// On a timeout R2R may still be ingesting (the simple orchestrator answers only
		// when it is done): say to follow the document rather than to retry.
		return r2rErrorResult(ctx, err, d.Client.BaseURL(), stillIngesting(collectionNotFound(s), docID))
	}
	d.bumpAfterWrite(s.ID)

	d.Projects.expectMembership(docID, s.ID)
	doc, err := d.Client.GetDocument(ctx, docID)
	if err == nil {
		d.settleMembership(ctx, doc)
		o.IngestionStatus = doc.IngestionStatus
		o.Failure = failureReason(doc)
	}
	if !in.async && !terminal(o.IngestionStatus) {
		o.IngestionStatus, o.Failure = d.waitForIngestion(ctx, req, docID, o.IngestionStatus)
	}
	d.ingestionDone(docID, o.IngestionStatus)
	o.Status = ingestStatus(o.IngestionStatus)
	o.Message = ingestMessage(o, s)
	return result(o.Message, o)
}

// alreadyIngested answers an upload R2R refused with 409: nothing was written. The earlier
// upload may still be in progress: then the collection stays busy until it is done.
func (d *Deps) alreadyIngested(ctx context.Context, s *scope, o IngestOutput) *mcp.CallToolResult {
	o.Status = "already_ingested"
	done := true
	if doc, err := d.Client.GetDocument(ctx, o.DocumentID); err == nil {
		d.settleMembership(ctx, doc) // of an earlier upload by this process, if pending
		o.IngestionStatus = doc.IngestionStatus
		done = terminal(doc.IngestionStatus)
	}
	if done {
		d.tracker().finish(o.DocumentID)
	}
	o.Message = fmt.Sprintf("%s was already ingested into %s as document %s", o.RelativePath, s.label(), o.DocumentID)
	if o.IngestionStatus != "" && o.IngestionStatus != r2r.IngestionSuccess {
		o.Message += fmt.Sprintf(" (R2R status: %s; follow it with r2r_monitor_task)", o.IngestionStatus)
	}
	o.Message += ". Nothing was uploaded. To re-ingest changed content, delete the document first, then ingest again."
	return result(o.Message, o)
}

// documentMetadata merges the caller's metadata with what r2r-mcp sets. R2R derives the
// document type from the title's extension, so a caller's title must keep
// the file's extension.
func documentMetadata(user map[string]any, rel, ext, project string) (map[string]any, error) {
	md := make(map[string]any, len(user)+4)
	for k, v := range user {
		if slices.Contains(reservedMetadata, k) {
			return nil, argErr("metadata", "must not set %q: r2r-mcp sets %s itself", k, strings.Join(reservedMetadata, ", "))
		}
		md[k] = v
	}
	if t, ok := md["title"]; ok {
		ts, isStr := t.(string)
		if !isStr || !strings.EqualFold(strings.TrimPrefix(path.Ext(ts), "."), ext) {
			return nil, argErr("metadata", "title must be a string ending in .%s: R2R takes the document type from the title's extension", ext)
		}
	} else {
		md["title"] = rel
	}
	md["source_path"] = rel
	md["project"] = project
	md["ingested_by"] = "r2r-mcp"
	return md, nil
}

// settleMembership makes sure a document this server uploaded ends up in the collection it
// was uploaded to. R2R at HEAD ignores the form field collection_ids;
// metadata.collection_ids is sent as well, so this is the fallback. The check waits until
// R2R reports the ingestion successful: with background (hatchet) ingestion the document
// appears later, and adding it to a collection while R2R's own workflow still assigns it
// could fail that workflow. Ingest, its wait and r2r_monitor_task call it whenever they
// see the document; documents this process did not upload are left alone.
func (d *Deps) settleMembership(ctx context.Context, doc *r2r.Document) {
	collID, ok := d.Projects.expectedMembership(doc.ID)
	if !ok {
		return
	}
	switch doc.IngestionStatus {
	case r2r.IngestionSuccess:
	case r2r.IngestionFailed:
		d.Projects.membershipSettled(doc.ID)
		return
	default:
		return
	}
	if slices.Contains(doc.CollectionIDs, collID) {
		d.Projects.membershipSettled(doc.ID)
		return
	}
	err := d.Client.AddDocumentToCollection(ctx, collID, doc.ID)
	if err != nil && !errors.Is(err, r2r.ErrConflict) {
		d.logger().Warn("adding the document to its collection failed", "document_id", doc.ID, "collection_id", collID, "error", err)
		return
	}
	d.Projects.membershipSettled(doc.ID)
	d.bumpAfterWrite(collID)
}

// waitForIngestion polls the document until R2R reports success or failure, the ingest
// wait ends, or the call's deadline nears. It sends progress notifications when the
// request carries a progress token.
func (d *Deps) waitForIngestion(ctx context.Context, req mcp.CallToolRequest, docID, status string) (string, string) {
	wait := d.IngestWait
	if wait <= 0 {
		wait = DefaultIngestWait
	}
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-2*time.Second)
	}
	deadline := time.Now().Add(wait)
	delay := d.PollInterval
	if delay <= 0 {
		delay = 250 * time.Millisecond
	}
	failure := ""
	lastProgress := -1.0
	report := func(st string) {
		p := ingestionProgress(st)
		if p > lastProgress {
			lastProgress = p
			notifyProgress(ctx, req, p, "ingestion "+orUnknown(st))
		}
	}
	report(status)
	for !terminal(status) {
		if time.Until(deadline) < delay {
			break
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return status, failure
		case <-t.C:
		}
		delay = min(delay*2, 2*time.Second)
		doc, err := d.Client.GetDocument(ctx, docID)
		if err != nil {
			if errors.Is(err, r2r.ErrNotFound) {
				continue // the row may appear only once the background task starts
			}
			d.logger().Debug("polling ingestion failed", "document_id", docID, "error", err)
			continue
		}
		d.settleMembership(ctx, doc)
		status, failure = doc.IngestionStatus, failureReason(doc)
		report(status)
	}
	return status, failure
}

// notifyProgress sends notifications/progress when the request asked for it.
func notifyProgress(ctx context.Context, req mcp.CallToolRequest, progress float64, msg string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": req.Params.Meta.ProgressToken,
		"progress":      progress,
		"total":         1.0,
		"message":       msg,
	})
}

func terminal(status string) bool {
	return status == r2r.IngestionSuccess || status == r2r.IngestionFailed
}

func ingestStatus(ingestion string) string {
	switch ingestion {
	case r2r.IngestionSuccess:
		return "success"
	case r2r.IngestionFailed:
		return "failed"
	}
	return "pending"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func failureReason(doc *r2r.Document) string {
	if doc == nil || doc.IngestionStatus != r2r.IngestionFailed {
		return ""
	}
	if f, ok := doc.Metadata["failure"]; ok && f != nil {
		return Sanitize(fmt.Sprint(f))
	}
	return "R2R gave no reason"
}

func ingestMessage(o IngestOutput, s *scope) string {
	var b strings.Builder
	created := ""
	if o.CollectionNew {
		created = " (collection created)"
	}
	switch o.Status {
	case "success":
		fmt.Fprintf(&b, "Ingested %s (%s) into %s%s as document %s. It is searchable now.",
			o.RelativePath, humanBytes(o.SizeBytes), s.label(), created, o.DocumentID)
	case "failed":
		fmt.Fprintf(&b, "Ingestion of %s into %s%s FAILED (document %s): %s. Fix the file or try ingestion_mode \"hi-res\"; delete the document before ingesting it again.",
			o.RelativePath, s.label(), created, o.DocumentID, o.Failure)
	default:
		fmt.Fprintf(&b, "Uploaded %s (%s) to %s%s as document %s; R2R is processing it (status %s). Call r2r_monitor_task with document_id %s to follow it.",
			o.RelativePath, humanBytes(o.SizeBytes), s.label(), created, o.DocumentID, orUnknown(o.IngestionStatus), o.DocumentID)
	}
	return b.String()
}
