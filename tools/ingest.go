package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
	"github.com/r2r-mcp/r2r-mcp/tools/upload"
)

const maxPathChars = 4096

// IngestOutput is the structured result of r2r_ingest_document.
type IngestOutput struct {
	DocumentID     string `json:"document_id" required:"true" desc:"id of the document in R2R (deterministic: same collection + R2R user + path + content → same id)"`
	Status         string `json:"status" required:"true" enum:"pending,stuck,success,failed,already_current" desc:"pending: R2R is still processing (poll r2r_monitor_task); stuck: R2R has been ingesting this content for over 10 minutes without finishing (the message says what to do); success; failed; already_current: a document with this exact content exists, nothing was sent"`
	FileName       string `json:"file_name" required:"true" desc:"base name of the uploaded file"`
	CollectionID   string `json:"collection_id" required:"true" desc:"collection the document was added to"`
	CollectionName string `json:"collection_name,omitempty" desc:"name of that collection, when known"`
	RelativePath   string `json:"relative_path" desc:"path of the file relative to the project root (also the document title)"`
	SizeBytes      int64  `json:"size_bytes" desc:"size of the uploaded file in bytes"`
	ContentSHA     string `json:"content_sha256" desc:"SHA-256 of the file's content (stored in the document's metadata)"`
	// SentAs is text for types R2R has no parser for.
	SentAs          string   `json:"sent_as" enum:"file,text" desc:"file: uploaded for R2R's parser; text: sent as text because R2R has no parser for the type (source code, YAML, …)"`
	Replaced        []string `json:"replaced_document_ids" items:"document id" desc:"older versions of this file's document that were deleted after the new one succeeded"`
	OldKept         bool     `json:"old_versions_kept,omitempty" desc:"true when older versions were kept because the new one has not succeeded (yet)"`
	IngestionStatus string   `json:"ingestion_status,omitempty" desc:"R2R's ingestion status when known (pending, parsing, …, success, failed)"`
	Sent            bool     `json:"sent" desc:"true when this call uploaded the file; false when R2R already had this content (already_current, or still ingesting an earlier upload)"`
	Resent          bool     `json:"resent,omitempty" desc:"true when R2R's earlier ingestion of this content had died (unfinished for over 60 minutes) and the file was sent again"`
	Started         string   `json:"ingestion_started,omitempty" desc:"when R2R started the ingestion that is still running, RFC 3339"`
	Failure         string   `json:"failure,omitempty" desc:"R2R's failure reason when ingestion failed"`
	Warning         string   `json:"warning,omitempty" desc:"a problem that did not stop the ingest (e.g. an old version could not be deleted)"`
	CollectionNew   bool     `json:"collection_created" desc:"true when the project's collection was created by this call"`
	Message         string   `json:"message" desc:"what happened and what to do next"`
}

func ingestDocumentTool(d *Deps) Tool {
	def := ingestDocumentDef()
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: false, Deadline: d.ingestDeadline, Example: Example{Args: map[string]any{"file_path": "README.md"}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p ingestParams) (*mcp.CallToolResult, error) {
		return d.ingest(ctx, req, p), nil
	})}
}

// ingestParams are one r2r_ingest_document call's arguments.
type ingestParams struct {
	FilePath     string         `json:"file_path" required:"true" min:"1" max:"maxPathChars" desc:"Path of the file to ingest: relative to the project root, or absolute inside it"`
	CollectionID string         `json:"collection_id" max:"36" desc:"Collection ID (UUID) to add the document to; omit to use the current project's collection (created on first use)"`
	Metadata     map[string]any `json:"metadata" desc:"Custom metadata for the document (at most 16 KiB as JSON). r2r-mcp adds title (the relative path), source_path, content_sha256, source, project and ingested_by; keys r2r-mcp or R2R set and read back are refused (the error lists them)"`
	Mode         string         `json:"ingestion_mode" enum:"ingestionModes" default:"fast" desc:"Ingestion mode: hi-res (full processing, LLM summary), fast (quick, no summary), custom (R2R's configured settings)"`
	Async        bool           `json:"run_async" default:"true" desc:"Return right away and let R2R ingest in the background (recommended); false waits up to about 40 s for the result"`
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
	return newTool("r2r_ingest_document",
		mcp.WithToolTitle(title),
		mcp.WithDescription("Add or update one project file in the knowledge base, e.g. a doc you just wrote or changed that the team should find. "+
			"Markdown, text, PDF and more; source code, YAML, TOML, Makefiles and other text files are sent as text titled with their path. "+
			"Only regular files inside the project (no secrets such as .env or keys) are read. "+
			"A file whose content changed replaces its older document once the new one is ingested; unchanged content sends nothing. "+
			"Returns at once by default; poll r2r_monitor_task until success before searching for it."),
		searchHint("upload index add a file doc to knowledge base"),
		annotations(title, false, false, true, true),
		withOutputSchema(outputSchema[IngestOutput]()),
		inputSchema[ingestParams](),
	)
}

// ingestDeadline bounds an ingest: one that waits for R2R (run_async=false) has its own
// deadline, which the wait (IngestWait) fits inside; others the call timeout.
func (d *Deps) ingestDeadline(req mcp.CallToolRequest) (time.Duration, string) {
	if async, ok := req.GetArguments()["run_async"].(bool); ok && !async {
		return d.IngestSyncTimeout, ""
	}
	return d.callDeadline(req)
}

// ingest uploads the file (upload.Upload) into the collection named or the project's,
// creating the project's on first use.
func (d *Deps) ingest(ctx context.Context, req mcp.CallToolRequest, in ingestParams) *mcp.CallToolResult {
	pr, err := d.Projects.Project(ctx)
	if err != nil && !d.Projects.Remote() {
		return d.scopes.projectErrorResult(ctx, err)
	}
	var s *scope
	var scopeRes *mcp.CallToolResult // why no collection could be written to
	opts := d.uploadOptions(ctx, req, pr, in)
	opts.Scope = func(ctx context.Context) (kbsync.Scope, error) {
		var userID string
		if s, userID, scopeRes = d.writeScope(ctx, &pr, in.CollectionID); scopeRes != nil {
			return kbsync.Scope{}, errScopeRefused
		}
		sc := kbsync.Scope{CollectionID: s.ID, UserID: userID, Project: pr.Name}
		if d.ingestsPrivately(ctx, s, pr, in.FilePath) {
			// A file of a team project is the caller's working copy: their private
			// collection, which shadows the team's version of it for them alone (as sync).
			private, err := upload.PrivateScope(ctx, d.Client, s.ID, sc, true)
			if err != nil {
				return kbsync.Scope{}, err
			}
			s = &scope{ID: private.CollectionID, Name: team.PrivateCollectionName(s.ID), Project: s.Project}
			d.scopes.forgetTeamViews()
			return private, nil
		}
		return sc, nil
	}
	opts.OnWrite = func() { d.writes.wrote(s.ID); d.scopes.forgetTeamViews() }
	r, err := upload.Upload(ctx, in.FilePath, opts)
	if err != nil {
		return d.uploadErrorResult(ctx, err, s, scopeRes)
	}
	if r.Warning != nil {
		d.logger().Warn("ingest: replacing the older versions did not finish", "document_id", r.DocumentID, "error", r.Warning)
	}
	o := ingestOutput(r, s)
	return result(o.Message, o)
}

// uploadOptions are the options of in's upload but its scope: the project's roots, the
// wait for R2R, progress notifications while waiting, this server's pending uploads.
func (d *Deps) uploadOptions(ctx context.Context, req mcp.CallToolRequest, pr project.Project, in ingestParams) upload.Options {
	roots := d.Projects.RootsOf(pr)
	lastProgress := -1.0
	return upload.Options{API: d.Client, Roots: roots, Remote: d.Projects.Remote(),
		HomeRoot: len(roots) > 0 && project.NotAProject(roots[0]), Metadata: in.Metadata, Mode: in.Mode,
		Wait: d.IngestWait, Async: in.Async, Poll: d.PollInterval, Pending: d.pendingUploads(), Now: d.now,
		OnStatus: func(_, st string) {
			if p := ingestionProgress(st); !in.Async && p > lastProgress {
				lastProgress = p
				notifyProgress(ctx, req, p, "ingestion "+orUnknown(st))
			}
		}}
}

// errScopeRefused stops an upload whose collection could not be resolved; the result
// saying why is kept by the caller.
var errScopeRefused = errors.New("tools: no collection to write to")

// writeScope resolves the collection an ingest writes to and the R2R user it writes as.
// The user id is asked for first: a document's id depends on it (see kbsync.VersionID), and
// a failure then leaves no newly created collection behind.
func (d *Deps) writeScope(ctx context.Context, pr *project.Project, explicitID string) (*scope, string, *mcp.CallToolResult) {
	userID, err := d.Projects.UserID(ctx, d.Client)
	if err != nil {
		return nil, "", d.scopes.projectErrorResult(ctx, err)
	}
	s, errRes := d.scopes.resolveOf(ctx, nil, pr, explicitID, true) // a write: never spans collections
	if errRes != nil {
		return nil, "", errRes
	}
	if s, errRes = d.scopes.verifyWrite(ctx, s); errRes != nil {
		return nil, "", errRes
	}
	if s.Created {
		d.writes.wrote("") // the collection list changed
	}
	return s, userID, nil
}

// uploadErrorResult maps upload.Upload's errors to results. On a failed write R2R may
// have stored the document even so (a proxy's 502 after R2R took it); on a timeout R2R may
// still be ingesting: the result says to follow the document rather than to retry.
func (d *Deps) uploadErrorResult(ctx context.Context, err error, s *scope, scopeRes *mcp.CallToolResult) *mcp.CallToolResult {
	if ce, ok := errors.AsType[*confine.Error](err); ok {
		return refusal(ce.Kind, "Not ingested: "+ce.Msg)
	}
	if me, ok := errors.AsType[*upload.MetadataError](err); ok {
		return invalidArgs(argErr("metadata", "%s", me.Msg))
	}
	if se, ok := errors.AsType[*upload.ScopeError](err); ok {
		if scopeRes != nil {
			return scopeRes
		}
		return d.scopes.projectErrorResult(ctx, se.Err)
	}
	if errors.Is(err, upload.ErrBusy) {
		return uploadBusyResult()
	}
	hints := collectionNotFound(s)
	if we, ok := errors.AsType[*upload.WriteError](err); ok && we.DocumentID != "" {
		hints = stillIngesting(hints, we.DocumentID)
	}
	d.scopes.forgetOn404(ctx, s, err)
	return r2rErrorResult(ctx, err, d.Client.BaseURL(), hints)
}

// uploadBusyResult answers an ingest that found no room in the upload budget before its
// deadline.
func uploadBusyResult() *mcp.CallToolResult {
	secs := 1.0
	return toolerr.Result(toolerr.Info{Type: "busy", Code: toolerr.CodeRateLimited, Retryable: true, RetryAfter: &secs,
		Message: "Not ingested: other ingests in flight fill r2r-mcp's memory budget for uploads, and none finished before this call's deadline. Retry in 1 s, or ingest fewer files at once."})
}

// ingestOutput is r2r_ingest_document's structured result of r.
func ingestOutput(r *upload.Result, s *scope) IngestOutput {
	o := IngestOutput{DocumentID: r.DocumentID, ContentSHA: r.SHA, IngestionStatus: clipJSON(r.Status, maxEnumBytes),
		Failure:      clipJSON(r.Failure, maxMetaValueBytes),
		CollectionID: s.ID, CollectionName: clipJSON(s.Name, maxTitleBytes), RelativePath: r.Path, Replaced: append([]string{}, r.Deleted...),
		SentAs: "file", Status: ingestStatus(r.Outcome), OldKept: r.OldKept, Sent: r.Sent, Resent: r.Resent,
		FileName: r.FileName, SizeBytes: r.Size, CollectionNew: s.Created}
	if r.AsText {
		o.SentAs = "text"
	}
	if r.Warning != nil {
		o.Warning = Sanitize(r.Warning.Error())
	}
	if !kbsync.Terminal(r.Status) {
		o.Started = formatTime(r.Started)
	}
	stuck := ""
	if r.Stuck {
		stuck = kbsync.StuckText(o.DocumentID, r.Status, r.Started, r.Age, deleteDocumentName)
	}
	o.Message = ingestMessage(o, s, stuck)
	return o
}

// settleMembership makes sure a document this server uploaded ends up in the collection it
// was uploaded to (upload.Pending.SettleMembership); r2r_monitor_task calls it whenever it
// sees the document.
func (d *Deps) settleMembership(ctx context.Context, doc *r2r.Document) {
	coll, err := d.pendingUploads().SettleMembership(ctx, d.Client, doc)
	switch {
	case err != nil:
		d.logger().Warn("adding the document to its collection failed", "document_id", doc.ID, "collection_id", coll, "error", err)
	case coll != "":
		d.writes.wrote(coll)
	}
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

func ingestStatus(o kbsync.Outcome) string {
	switch {
	case o.Action == kbsync.Unchanged:
		return "already_current"
	case o.Status == r2r.IngestionSuccess:
		return "success"
	case o.Status == r2r.IngestionFailed:
		return "failed"
	case o.Stuck:
		return "stuck"
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
	if f, ok := doc.Metadata[kbsync.MetaFailure]; ok && f != nil {
		return clipJSON(Sanitize(fmt.Sprint(f)), maxMetaValueBytes)
	}
	return "R2R gave no reason"
}

// ingestMessage says what an ingest did; stuck is the verdict on a stuck ingestion
// (status "stuck").
func ingestMessage(o IngestOutput, s *scope, stuck string) string {
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
			o.RelativePath, confine.HumanBytes(o.SizeBytes), asText, s.label(), created, o.DocumentID)
	case "failed":
		fmt.Fprintf(&b, "Ingestion of %s into %s%s FAILED (document %s): %s. Fix the file (or try ingestion_mode \"hi-res\") and ingest it again.",
			o.RelativePath, s.label(), created, o.DocumentID, o.Failure)
	case "stuck":
		b.WriteString("Not ingested yet: " + stuck)
	case "pending":
		if o.Sent {
			if o.Resent {
				b.WriteString("R2R's earlier ingestion of this content had died (unfinished for over an hour), so its document was deleted and the file sent again. ")
			}
			fmt.Fprintf(&b, "Uploaded %s (%s)%s to %s%s as document %s; R2R is processing it (status %s). Call r2r_monitor_task with document_id %s to follow it.",
				o.RelativePath, confine.HumanBytes(o.SizeBytes), asText, s.label(), created, o.DocumentID, orUnknown(o.IngestionStatus), o.DocumentID)
			break
		}
		fmt.Fprintf(&b, "R2R is still ingesting %s from an earlier upload of the same content (document %s, status %s); nothing was sent. "+
			"Call r2r_monitor_task with document_id %s to follow it.", o.RelativePath, o.DocumentID, orUnknown(o.IngestionStatus), o.DocumentID)
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

// ingestsPrivately reports whether a file ingested into scope s goes to the caller's
// private collection: a file inside a local team project (its .r2r-mcp.json names the team
// collection, which s is, and git has a ref the team follows), not one of another root.
func (d *Deps) ingestsPrivately(ctx context.Context, s *scope, pr project.Project, filePath string) bool {
	if s.Explicit || s.Project == nil || pr.CollectionID == "" || s.ID != pr.CollectionID || d.Projects.Remote() {
		return false
	}
	p := filePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(pr.Root, p)
	}
	if !confine.Within(pr.Root, p) {
		return false
	}
	_, _, err := kbsync.ResolveTeamRef(ctx, pr.Root, "")
	return err == nil
}
