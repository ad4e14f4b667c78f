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
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

const maxPathChars = 4096

var ingestionModes = []string{"hi-res", "fast", "custom"}

// reservedMetadata are metadata keys r2r-mcp sets itself. collection_ids is among them
// because R2R at HEAD takes a document's collections from metadata.collection_ids.
var reservedMetadata = []string{kbsync.MetaSourcePath, kbsync.MetaContentSHA, kbsync.MetaSource, kbsync.MetaProject,
	kbsync.MetaIngestedBy, kbsync.MetaSourceRoot, "collection_ids"}

// IngestOutput is the structured result of r2r_ingest_document.
type IngestOutput struct {
	DocumentID      string   `json:"document_id"`
	Status          string   `json:"status"` // pending, success, failed, already_current
	FileName        string   `json:"file_name"`
	CollectionID    string   `json:"collection_id"`
	CollectionName  string   `json:"collection_name,omitempty"`
	RelativePath    string   `json:"relative_path"`
	SizeBytes       int64    `json:"size_bytes"`
	ContentSHA      string   `json:"content_sha256"`
	SentAs          string   `json:"sent_as"` // file, or text for types R2R has no parser for
	Replaced        []string `json:"replaced_document_ids"`
	OldKept         bool     `json:"old_versions_kept,omitempty"`
	IngestionStatus string   `json:"ingestion_status,omitempty"` // R2R's own status when known
	Failure         string   `json:"failure,omitempty"`
	Warning         string   `json:"warning,omitempty"`
	CollectionNew   bool     `json:"collection_created"`
	Message         string   `json:"message"`
}

func ingestDocumentTool(d *Deps) Tool {
	def := ingestDocumentDef()
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: false, Handler: bound(d, def, func(ctx context.Context, req mcp.CallToolRequest, p ingestParams) (*mcp.CallToolResult, error) {
		return d.ingest(ctx, req, ingestArgs{filePath: p.FilePath, collectionID: p.CollectionID, metadata: p.Metadata,
			mode: p.Mode, async: p.Async}), nil
	})}
}

// ingestParams are one r2r_ingest_document call's arguments.
type ingestParams struct {
	FilePath     string         `json:"file_path"`
	CollectionID string         `json:"collection_id"`
	Metadata     map[string]any `json:"metadata"`
	Mode         string         `json:"ingestion_mode"`
	Async        bool           `json:"run_async"`
}

func (p *ingestParams) check(*Deps) (err error) {
	if err = nonBlank("file_path", p.FilePath); err != nil {
		return err
	}
	if p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint); err != nil {
		return err
	}
	return objectWithin("metadata", p.Metadata, maxMetadataBytes)
}

// ingestDocumentDef is r2r_ingest_document's definition.
func ingestDocumentDef() mcp.Tool {
	const title = "Ingest a project file"
	out := objectSchema(map[string]any{
		"document_id":           strProp("id of the document in R2R (deterministic: same collection + R2R user + path + content → same id)"),
		"status":                enumProp("pending: R2R is still processing (poll r2r_monitor_task); success; failed; already_current: a document with this exact content exists, nothing was sent", "pending", "success", "failed", "already_current"),
		"file_name":             strProp("base name of the uploaded file"),
		"collection_id":         strProp("collection the document was added to"),
		"collection_name":       strProp("name of that collection, when known"),
		"relative_path":         strProp("path of the file relative to the project root (also the document title)"),
		"size_bytes":            intProp("size of the uploaded file in bytes"),
		"content_sha256":        strProp("SHA-256 of the file's content (stored in the document's metadata)"),
		"sent_as":               enumProp("file: uploaded for R2R's parser; text: sent as text because R2R has no parser for the type (source code, YAML, …)", "file", "text"),
		"replaced_document_ids": arrayProp("older versions of this file's document that were deleted after the new one succeeded", strProp("document id")),
		"old_versions_kept":     boolProp("true when older versions were kept because the new one has not succeeded (yet)"),
		"warning":               strProp("a problem that did not stop the ingest (e.g. an old version could not be deleted)"),
		"ingestion_status":      strProp("R2R's ingestion status when known (pending, parsing, …, success, failed)"),
		"failure":               strProp("R2R's failure reason when ingestion failed"),
		"collection_created":    boolProp("true when the project's collection was created by this call"),
		"message":               strProp("what happened and what to do next"),
	}, "document_id", "status", "file_name", "collection_id")
	return newTool("r2r_ingest_document",
		mcp.WithToolTitle(title),
		mcp.WithDescription("Upload a document to R2R for indexing. Supports markdown, text, PDF, and more; source code, "+
			"YAML, TOML, Makefiles and other text files are sent as text titled with their path. "+
			"Only regular files inside the project (no secrets such as .env or keys) are read. "+
			"A file whose content changed replaces its older document once the new one is ingested; unchanged content sends nothing. "+
			"Returns immediately by default; ingestion happens asynchronously (poll r2r_monitor_task)."),
		annotations(title, false, false, true, true),
		withOutputSchema(out),
		mcp.WithString("file_path", mcp.Required(), mcp.MinLength(1), mcp.MaxLength(maxPathChars),
			mcp.Description("Path of the file to ingest: relative to the project root, or absolute inside it")),
		mcp.WithString("collection_id", mcp.MaxLength(36),
			mcp.Description("Collection ID (UUID) to add the document to; omit to use the current project's collection (created on first use)")),
		mcp.WithObject("metadata",
			mcp.Description("Custom metadata for the document (at most 16 KiB as JSON). r2r-mcp adds title (the relative path), source_path, content_sha256, source, project and ingested_by")),
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
	root   string // kbsync.MetaSourceRoot: "" for project files, "extra:<id>" for an extra root's
}

// ingest reads the file within the project's rules, resolves the collection (creating the
// project's on first use) and writes the file as the current version of its document.
func (d *Deps) ingest(ctx context.Context, req mcp.CallToolRequest, in ingestArgs) *mcp.CallToolResult {
	pr, err := d.Projects.Project(ctx)
	if err != nil && !d.Projects.Remote() {
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
	md, err := documentMetadata(in.metadata, up.file.Ext, up.file.AsText)
	if err != nil {
		return invalidArgs(err)
	}
	// The document id depends on who uploads (see kbsync.VersionID); asked before the
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
	if s.Created {
		d.bumpAfterWrite("") // the collection list changed
	}
	file := kbsync.File{Path: up.rel, IDPath: up.idPath, Data: up.file.Data, AsText: up.file.AsText, Metadata: md}
	o, errRes := d.putFile(ctx, req, s, kbsync.Scope{CollectionID: s.ID, UserID: userID, Project: pr.Name, Root: up.root},
		file, in.mode, in.async)
	if errRes != nil {
		return errRes
	}
	o.FileName, o.SizeBytes, o.CollectionNew = path.Base(up.file.Rel), int64(len(up.file.Data)), s.Created
	o.Message = ingestMessage(o, s)
	return result(o.Message, o)
}

// readUpload applies the confinement rules to path for project pr and reads the file; the
// result is the refusal when it may not be read.
func (d *Deps) readUpload(pr Project, filePath string) (*upload, *mcp.CallToolResult) {
	roots := d.Projects.rootsOf(pr)
	if d.Projects.Remote() && (len(roots) == 0 || !filepath.IsAbs(filePath)) {
		return nil, refusal(refuseOutside, "Not ingested: over HTTP, r2r-mcp reads only files on its own host, inside a directory "+
			"its operator opened with --allow-dir, named by absolute path. Upload the file's directory there, or ingest from a local r2r-mcp.")
	}
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
		up.root = "extra:" + uuid.NewSHA1(kbsync.DocumentNamespace, []byte(f.Root)).String()[:8]
		up.idPath = up.root + "/" + f.Rel
	}
	return up, nil
}

// putFile writes one file as the current version of its document (kbsync.Writer.Put):
// unchanged content sends nothing, changed content replaces the older versions once the
// new one has succeeded. A new file with async returns as soon as R2R has it; otherwise
// the wait for R2R ends with the call's time.
func (d *Deps) putFile(ctx context.Context, req mcp.CallToolRequest, s *scope, sc kbsync.Scope, file kbsync.File, mode string, async bool) (IngestOutput, *mcp.CallToolResult) {
	o := IngestOutput{CollectionID: s.ID, CollectionName: s.Name, RelativePath: file.Path, Replaced: []string{}}
	old, err := kbsync.Versions(ctx, d.Client, sc, file.Path)
	if err != nil {
		d.forgetOn404(ctx, s, err)
		return o, r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s))
	}
	wait := d.IngestWait
	if wait <= 0 {
		wait = DefaultIngestWait
	}
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-2*time.Second)
	}
	if async && len(old) == 0 {
		wait = time.Nanosecond // nothing to replace: one look at R2R's status, then return
	}
	lastProgress := -1.0
	w := &kbsync.Writer{API: d.Client, Scope: sc, Mode: mode, Wait: wait, Poll: d.PollInterval,
		OnWrite: func() { d.bumpAfterWrite(s.ID) },
		OnStatus: func(id, st string) {
			if p := ingestionProgress(st); !async && p > lastProgress {
				lastProgress = p
				notifyProgress(ctx, req, p, "ingestion "+orUnknown(st))
			}
		}}
	docID := kbsync.VersionID(sc.CollectionID, sc.UserID, cmpOr(file.IDPath, file.Path), kbsync.SHA256(file.Data))
	// Mark the collection busy before the upload, so no search result from before the
	// document is searchable gets cached meanwhile (see cachedLoad).
	d.tracker().start(docID, s.ID, d.now())
	out, err := w.Put(ctx, file, old)
	o.DocumentID, o.ContentSHA, o.IngestionStatus, o.Failure = out.DocumentID, out.SHA, out.Status, out.Failure
	o.Replaced = append(o.Replaced, out.Deleted...)
	o.SentAs = "file"
	if file.AsText {
		o.SentAs = "text"
	}
	if err != nil && out.Action == kbsync.Failed {
		// R2R may have stored the document even so (a proxy's 502 after R2R took it):
		// invalidate rather than risk serving results from before. On a timeout R2R may
		// still be ingesting: say to follow the document rather than to retry.
		d.tracker().finish(docID)
		d.bumpAfterWrite(s.ID)
		d.forgetOn404(ctx, s, err)
		return o, r2rErrorResult(ctx, err, d.Client.BaseURL(), stillIngesting(collectionNotFound(s), docID))
	}
	if err != nil {
		d.logger().Warn("ingest: replacing the older versions did not finish", "document_id", docID, "error", err)
		o.Warning = Sanitize(err.Error())
	}
	if !terminal(out.Status) {
		d.Projects.expectMembership(docID, s.ID)
	}
	d.ingestionDone(docID, out.Status)
	if out.Action == kbsync.Unchanged {
		d.tracker().finish(docID)
	}
	o.Status = ingestStatus(out)
	o.OldKept = out.Action != kbsync.Unchanged && len(old) > len(o.Replaced)
	return o, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// documentMetadata checks the caller's metadata: keys r2r-mcp sets itself are refused
// (kbsync.Writer adds them and the title, the relative path, when the caller sets none).
// R2R derives a file's type from the title's extension, so a file's title must keep the
// file's extension; text is typed by R2R as text whatever its title.
func documentMetadata(user map[string]any, ext string, asText bool) (map[string]any, error) {
	md := make(map[string]any, len(user))
	for k, v := range user {
		if slices.Contains(reservedMetadata, k) {
			return nil, argErr("metadata", "must not set %q: r2r-mcp sets %s itself", k, strings.Join(reservedMetadata, ", "))
		}
		md[k] = v
	}
	if t, ok := md["title"]; ok {
		ts, isStr := t.(string)
		switch {
		case !isStr:
			return nil, argErr("metadata", "title must be a string")
		case !asText && !strings.EqualFold(strings.TrimPrefix(path.Ext(ts), "."), ext):
			return nil, argErr("metadata", "title must be a string ending in .%s: R2R takes the document type from the title's extension", ext)
		}
	}
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

func ingestStatus(o kbsync.Outcome) string {
	switch {
	case o.Action == kbsync.Unchanged:
		return "already_current"
	case o.Status == r2r.IngestionSuccess:
		return "success"
	case o.Status == r2r.IngestionFailed:
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
	asText := ""
	if o.SentAs == "text" {
		asText = " as text"
	}
	switch o.Status {
	case "already_current":
		fmt.Fprintf(&b, "%s is already current in %s as document %s (same content); nothing was sent.", o.RelativePath, s.label(), o.DocumentID)
	case "success":
		fmt.Fprintf(&b, "Ingested %s (%s)%s into %s%s as document %s. It is searchable now.",
			o.RelativePath, humanBytes(o.SizeBytes), asText, s.label(), created, o.DocumentID)
	case "failed":
		fmt.Fprintf(&b, "Ingestion of %s into %s%s FAILED (document %s): %s. Fix the file (or try ingestion_mode \"hi-res\") and ingest it again.",
			o.RelativePath, s.label(), created, o.DocumentID, o.Failure)
	default:
		fmt.Fprintf(&b, "Uploaded %s (%s)%s to %s%s as document %s; R2R is processing it (status %s). Call r2r_monitor_task with document_id %s to follow it.",
			o.RelativePath, humanBytes(o.SizeBytes), asText, s.label(), created, o.DocumentID, orUnknown(o.IngestionStatus), o.DocumentID)
	}
	if len(o.Replaced) > 0 {
		fmt.Fprintf(&b, " It replaced the older version (deleted: %s).", strings.Join(o.Replaced, ", "))
	}
	if o.OldKept {
		b.WriteString(" The older version stays searchable until the new one has succeeded; ingest the file again (or run r2r_sync) after that to remove it.")
	}
	if o.Warning != "" {
		b.WriteString(" Warning: " + o.Warning)
	}
	return b.String()
}
