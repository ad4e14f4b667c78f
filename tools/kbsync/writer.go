package kbsync

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/chunking"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
)

// File is one file's content, ready to be written as a document.
type File struct {
	// Path is the file's source path (MetaSourcePath); also the title unless Metadata
	// sets one.
	Path string
	// IDPath is the path the document id is derived from; "" = Path.
	IDPath string
	Data   []byte
	// AsText sends the content as text (R2R's raw_text): R2R has no parser for the
	// file's type, but its text is searchable.
	AsText bool
	// Metadata is the caller's own metadata (a title among it); nil = none. Keys the
	// writer sets itself override it.
	Metadata map[string]any
}

// Action is what Put did.
type Action string

// Actions of Put.
const (
	// Unchanged: a document with this content had already succeeded; nothing was sent.
	Unchanged Action = "unchanged"
	// Uploaded: the file had no document; it has one now.
	Uploaded Action = "uploaded"
	// Replaced: the new version succeeded and the older ones were deleted.
	Replaced Action = "replaced"
	// Pending: the new version was sent and R2R is still ingesting it; older versions are
	// kept until it has succeeded (the next Put of the file finishes the job).
	Pending Action = "pending"
	// Failed: R2R failed to ingest the new version, which was removed again; older
	// versions are kept.
	Failed Action = "failed"
	// Empty: the file holds no text; nothing was sent, and its older versions were deleted
	// (Emptied).
	Empty Action = "empty"
)

// Outcome is the result of Put.
type Outcome struct {
	Action     Action
	DocumentID string
	SHA        string
	Status     string // R2R's ingestion status of DocumentID, when known
	Failure    string // R2R's reason when ingestion failed
	Deleted    []string
	// Sent is true when the content was uploaded by this call.
	Sent bool
	// Started is when R2R started ingesting DocumentID (its updated_at), when known; Age
	// is how long ago that was, by the Writer's clock.
	Started time.Time
	Age     time.Duration
	// Stuck: R2R has been ingesting DocumentID for longer than the Writer's SlowAfter and
	// the call did not wait for it (see StuckText).
	Stuck bool
	// Resent: R2R's earlier ingestion of DocumentID was dead (older than DeadAfter); its
	// document was deleted and the content sent again.
	Resent bool
}

// IngestionModes are the ingestion modes r2r-mcp offers, spelled as R2R takes them (R2R
// answers any other spelling with a 422; it also takes ocr, which needs an OCR provider).
var IngestionModes = []string{"hi-res", "fast", "custom"}

// Writer writes files as documents of one scope.
type Writer struct {
	API   API
	Scope Scope
	// Mode is R2R's ingestion mode (one of IngestionModes); "" = fast.
	Mode string
	// Wait bounds how long Put waits for R2R to finish a new version (the context's
	// deadline bounds it too); 0 = 2 minutes.
	Wait time.Duration
	// Poll is the first delay between status checks, doubling up to 2 s; 0 = 250 ms.
	Poll time.Duration
	// OnWrite, when set, is called after every change to the collection (cache
	// invalidation). It must be safe for concurrent use.
	OnWrite func()
	// OnStatus, when set, is called with each ingestion status seen while waiting.
	OnStatus func(documentID, status string)
	// SlowAfter and DeadAfter bound an ingestion R2R has not finished (see the constants
	// of the same names); 0 = those.
	SlowAfter, DeadAfter time.Duration
	// Now is the clock ingestion ages are measured with; nil = time.Now.
	Now func() time.Time
	// Pending, when set, tracks each version Put sends (see Tracker).
	Pending Tracker

	// runOf, set by For, is the Writer whose run state (below) this one shares: the layers
	// of one sync write to one R2R, so they ask when it started once and wait out an R2R
	// crash once. nil = its own.
	runOf *Writer

	// outwaited is set once a wait for an ingestion started elsewhere ran out with R2R
	// still on it: later ones get one look, so a sync meeting many ingestions an R2R crash
	// left behind waits Wait once, not once per file.
	outwaited atomic.Bool

	// When R2R started (r2rStart), asked once.
	startMu    sync.Mutex
	startAsked bool
	start      time.Time
}

// run is the Writer holding w's run state: w, or the one it was made For from.
func (w *Writer) run() *Writer {
	if w.runOf != nil {
		return w.runOf
	}
	return w
}

// Tracker records the documents a Writer sends until R2R has finished with them (upload's
// table of pending uploads is one). It must be safe for concurrent use.
type Tracker interface {
	// Start records that docID is being ingested into collection.
	Start(docID, collection string, now time.Time)
	// Finish records that R2R is done ingesting docID (or will not be); tracked reports
	// whether its ingestion was being tracked.
	Finish(docID string) (collection string, tracked bool)
	// ExpectMembership records that docID belongs in collection once R2R has ingested it.
	ExpectMembership(docID, collection string, now time.Time)
}

// Put makes the scope hold exactly one successful document for f: the one of f's current
// content. old are the documents r2r-mcp wrote for f.Path before (see Manifest). A new
// version is ingested and must succeed before the older ones are deleted, so search finds
// the file all along; if it fails or is still pending, the older ones stay. The error is
// R2R's, with what was done so far in the Outcome. With a Pending tracker, the new version
// is tracked from before it is sent until R2R has finished with it.
//
// Content with no text (confine.Blank) is refused with the ingest rules' reason (Kind
// confine.Empty) before anything is sent: R2R would store a document with nothing to
// search, or refuse an empty raw_text.
func (w *Writer) Put(ctx context.Context, f File, old []Version) (Outcome, error) {
	if confine.Blank(f.Data) {
		e := confine.EmptyFile(f.Path)
		return Outcome{Action: Failed}, &Refusal{Kind: e.Kind, Reason: e.Msg}
	}
	sha := SHA256(f.Data)
	id := w.versionID(cmp.Or(f.IDPath, f.Path), sha)
	if w.Pending == nil {
		return w.put(ctx, f, old, id, sha)
	}
	// Marked before the upload, so no result from before the document is searchable gets
	// cached meanwhile.
	w.Pending.Start(id, w.Scope.CollectionID, w.now())
	o, err := w.put(ctx, f, old, id, sha)
	w.settle(id, o, err)
	return o, err
}

// settle ends or keeps the tracking Put started for document id, given what Put did; the
// cache is told (OnWrite) when a tracked ingestion ends.
func (w *Writer) settle(id string, o Outcome, err error) {
	switch {
	case err != nil && o.Action == Failed:
		w.Pending.Finish(id)
		w.wrote()
		return
	case !Terminal(o.Status):
		w.Pending.ExpectMembership(id, w.Scope.CollectionID, w.now())
	default:
		if _, ok := w.Pending.Finish(id); ok {
			w.wrote() // searchable now
		}
	}
	if o.Action == Unchanged {
		w.Pending.Finish(id)
	}
}

// put is Put for the version id of f, whose content hash is sha.
func (w *Writer) put(ctx context.Context, f File, old []Version, id, sha string) (Outcome, error) {
	for _, name := range []string{f.Path, f.IDPath} {
		if r := nameRefusal(name); r != nil {
			return Outcome{Action: Failed}, r
		}
	}
	o := Outcome{DocumentID: id, SHA: sha}
	var others []Version
	var cur *Version
	for i := range old {
		if old[i].ID == o.DocumentID {
			cur = &old[i]
		} else {
			others = append(others, old[i])
		}
	}
	switch {
	case cur != nil && cur.Status == r2r.IngestionSuccess:
		o.Status = cur.Status
		if len(others) == 0 {
			o.Action = Unchanged
			return o, nil
		}
	case cur != nil && cur.Status != r2r.IngestionFailed:
		// Already sent (by an earlier run whose wait ended): wait for it below.
	default:
		if err := w.send(ctx, f, &o, sha); err != nil {
			o.Action = Failed
			return o, err
		}
	}
	if o.Status != r2r.IngestionSuccess {
		if done, err := w.follow(ctx, f, &o, sha); !done {
			return o, err
		}
	}
	return w.replace(ctx, o, others)
}

// follow waits for R2R to ingest o's document (sending f again when that ingestion is
// dead), noting in o what R2R reports. done reports a success; otherwise o's Action is
// final (Failed or Pending) and err what ended the wait.
func (w *Writer) follow(ctx context.Context, f File, o *Outcome, sha string) (done bool, err error) {
	// Only an ingestion this call did not start is judged by its age: one it started is
	// young whatever the clocks of R2R's host and this one say.
	doc, err := w.wait(ctx, o.DocumentID, !o.Sent)
	if err == nil && doc != nil && !o.Sent && w.dead(ctx, doc) {
		doc, err = w.resend(ctx, f, o, sha)
	}
	if doc != nil {
		o.Status, o.Failure = doc.IngestionStatus, failure(doc)
		o.Started, o.Age = doc.UpdatedAt.Time, w.age(doc)
		o.Stuck = !o.Sent && !Terminal(doc.IngestionStatus) && o.Age >= w.slowAfter()
	}
	switch {
	case o.Status == r2r.IngestionFailed:
		// A failed document is in no collection (R2R assigns collections once ingestion
		// succeeds), so no manifest would find it again: it is removed here, and the
		// older versions stay.
		o.Action = Failed
		if err := w.Delete(ctx, o.DocumentID); err != nil {
			return false, fmt.Errorf("removing the failed document %s: %w", o.DocumentID, err)
		}
		return false, nil
	case o.Status != r2r.IngestionSuccess:
		o.Action = Pending
		return false, err
	}
	w.ensureMember(ctx, doc)
	return true, nil
}

// Emptied makes the scope hold no document for a file that now holds no text: old, the
// versions written for it before, are retired (their content is what the file no longer
// has). Nothing is sent.
func (w *Writer) Emptied(ctx context.Context, old []Version) (Outcome, error) {
	o := Outcome{Action: Empty}
	for _, v := range old {
		if err := w.retire(ctx, v); err != nil {
			return o, fmt.Errorf("the file is empty now, but deleting its document %s failed (the next sync retries): %w", v.ID, err)
		}
		o.Deleted = append(o.Deleted, v.ID)
	}
	return o, nil
}

// replace retires others, the older versions of o's document, now that it has succeeded.
func (w *Writer) replace(ctx context.Context, o Outcome, others []Version) (Outcome, error) {
	o.Action = Uploaded
	if len(others) > 0 {
		o.Action = Replaced
	}
	for _, v := range others {
		if err := w.retire(ctx, v); err != nil {
			return o, fmt.Errorf("the new version %s is ingested, but deleting the old version %s failed (the next sync retries): %w", o.DocumentID, v.ID, err)
		}
		o.Deleted = append(o.Deleted, v.ID)
	}
	return o, nil
}

// versionID is the id of the version of a file with content hash sha: shared by the team in
// the team layer, the caller's own otherwise.
func (w *Writer) versionID(idPath, sha string) string {
	if w.Scope.Layer == LayerTeam {
		return TeamVersionID(w.Scope.CollectionID, idPath, sha)
	}
	return VersionID(w.Scope.CollectionID, w.Scope.UserID, idPath, sha)
}

// send uploads f as o's document, noting in o whether it was sent and whether R2R has
// ingested it already; an error means nothing may be waited for.
func (w *Writer) send(ctx context.Context, f File, o *Outcome, sha string) error {
	res, err := w.create(ctx, f, o.DocumentID, sha)
	switch {
	case errors.Is(err, r2r.ErrConflict):
		// Sent meanwhile by another process: follow that upload.
	case err != nil:
		// R2R may have stored the document anyway: a synchronous ingestion that failed
		// answers 500 with the document marked failed; a proxy may fail after R2R took it.
		// An upload R2R refuses because an ingestion a restart ended holds the id (R2R
		// 3.6.6 wraps that 409 in a 500 for chunks) is judged by Put, like a 409.
		doc, gerr := w.API.GetDocument(ctx, o.DocumentID)
		switch {
		case gerr == nil && !Terminal(doc.IngestionStatus) && w.orphaned(ctx, doc):
		case gerr != nil || !Terminal(doc.IngestionStatus):
			return err
		default:
			o.Sent = true
		}
	default:
		o.Sent = true
		if res.Ingested() {
			// R2R ingested it within the request and filed it in the form's collection:
			// nothing to wait for (one request per file).
			o.Status = r2r.IngestionSuccess
		}
	}
	w.wrote()
	return nil
}

// Delete deletes one document; one already gone counts as deleted.
func (w *Writer) Delete(ctx context.Context, id string) error {
	return DeleteDocument(ctx, w.API, id, w.OnWrite)
}

// DeleteDocument deletes document id; one already gone counts as deleted. onWrite, when
// set, is called once the document is gone.
func DeleteDocument(ctx context.Context, api API, id string, onWrite func()) error {
	err := api.DeleteDocument(ctx, id)
	if err == nil || errors.Is(err, r2r.ErrNotFound) {
		if onWrite != nil {
			onWrite()
		}
		return nil
	}
	return err
}

func (w *Writer) wrote() {
	if w.OnWrite != nil {
		w.OnWrite()
	}
}

// create uploads f as document id.
func (w *Writer) create(ctx context.Context, f File, id, sha string) (*r2r.IngestionResponse, error) {
	md := make(map[string]any, len(f.Metadata)+8)
	for k, v := range f.Metadata {
		md[k] = v
	}
	if _, ok := md["title"]; !ok {
		md["title"] = f.Path
	}
	md[MetaSourcePath] = f.Path
	md[MetaContentSHA] = sha
	md[MetaSize] = len(f.Data)
	md[MetaSource] = SourceValue
	md[MetaIngestedBy] = SourceValue
	md[MetaProject] = w.Scope.Project
	if w.Scope.Root != "" {
		md[MetaSourceRoot] = w.Scope.Root
	}
	if w.Scope.Layer != "" {
		md[MetaLayer] = w.Scope.Layer
	}
	// The collection goes once, as the form field R2R 3.6 reads: also naming it in
	// metadata.collection_ids files the document there before ingestion ends, so R2R's own
	// assignment then fails (an ERROR in its log) and the collection's document count is
	// not raised. (R2R 3.6.6 still logs one ERROR after filing and counting the document:
	// marking the collection's graph outdated, it passes the id as a string where a list is
	// expected. Nothing r2r-mcp sends avoids it short of not naming the collection.) After a
	// queued ingestion, ensureMember checks the membership.
	mode := w.Mode
	if mode == "" {
		mode = "fast"
	}
	in := r2r.DocumentCreate{ID: id, Metadata: md, CollectionIDs: []string{w.Scope.CollectionID}, IngestionMode: mode}
	if chunks := chunking.For(f.Path, f.Data, f.AsText); chunks != nil && r2r.ChunksFit(chunks) {
		in.Chunks = chunks
		md[MetaChunking] = chunking.Version
	} else if f.AsText {
		in.RawText = string(f.Data)
	} else {
		in.FileName, in.File = path.Base(f.Path), f.Data
	}
	return w.API.CreateDocument(ctx, in)
}

// resend replaces a document whose ingestion is dead (R2R stopped while ingesting it, and
// nothing finishes it; R2R answers every new upload of it 409) with a new upload of f,
// then follows that one.
func (w *Writer) resend(ctx context.Context, f File, o *Outcome, sha string) (*r2r.Document, error) {
	if err := w.Delete(ctx, o.DocumentID); err != nil {
		return nil, fmt.Errorf("removing document %s, whose ingestion R2R never finished: %w", o.DocumentID, err)
	}
	if _, err := w.create(ctx, f, o.DocumentID, sha); err != nil {
		return nil, fmt.Errorf("sending again the file of document %s, whose ingestion R2R never finished: %w", o.DocumentID, err)
	}
	o.Sent, o.Resent = true, true
	w.wrote()
	return w.wait(ctx, o.DocumentID, false)
}

// age is how long R2R has been ingesting doc: R2R 3.6.6 sets updated_at when an ingestion
// starts and keeps it while the ingestion moves through its states. 0 when unknown.
func (w *Writer) age(doc *r2r.Document) time.Duration {
	if doc.UpdatedAt.IsZero() {
		return 0
	}
	return w.now().Sub(doc.UpdatedAt.Time)
}

// dead reports an ingestion R2R will never finish: not finished after DeadAfter, or begun
// before R2R restarted (orphaned).
func (w *Writer) dead(ctx context.Context, doc *r2r.Document) bool {
	return !Terminal(doc.IngestionStatus) && (w.age(doc) >= w.deadAfter() || w.orphaned(ctx, doc))
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

func (w *Writer) slowAfter() time.Duration { return cmpOr(w.SlowAfter, SlowAfter) }
func (w *Writer) deadAfter() time.Duration { return cmpOr(w.DeadAfter, DeadAfter) }

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// wait polls document id until R2R reports success or failure, Wait passes or ctx ends;
// it returns the last state seen (nil when none) and the error that ended the wait early.
// An ingestion running for longer than SlowAfter is not waited for: R2R records no
// progress beyond its status, and one that old is most likely stuck; nor is one begun before
// R2R restarted, which is dead (both judged only when judge is set).
func (w *Writer) wait(ctx context.Context, id string, judge bool) (*r2r.Document, error) {
	limit := w.Wait
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	stopped := false
	last, err := WaitIngested(ctx, w.API, id, limit, w.Poll, func(doc *r2r.Document) bool {
		if w.OnStatus != nil {
			w.OnStatus(id, doc.IngestionStatus)
		}
		stopped = Terminal(doc.IngestionStatus) || judge && (w.age(doc) >= w.slowAfter() || w.run().outwaited.Load() || w.orphaned(ctx, doc))
		return stopped
	})
	if err == nil && !stopped && judge && last != nil {
		w.run().outwaited.Store(true)
	}
	return last, err
}

// WaitIngested polls document id until done returns true for the state R2R reports (nil:
// until R2R has finished with it, see Terminal), limit passes or ctx ends. The first delay
// is poll (0 = 250 ms), doubling up to 2 s. It returns the last state seen (nil when none)
// and the error that ended the wait early; a wait that ran out of time ends without one. A
// document R2R does not know yet is polled again: its row may appear only once a
// background ingestion starts.
func WaitIngested(ctx context.Context, api API, id string, limit, poll time.Duration, done func(*r2r.Document) bool) (*r2r.Document, error) {
	if done == nil {
		done = func(doc *r2r.Document) bool { return Terminal(doc.IngestionStatus) }
	}
	deadline := time.Now().Add(limit)
	delay := poll
	if delay <= 0 {
		delay = 250 * time.Millisecond
	}
	var last *r2r.Document
	for {
		doc, err := api.GetDocument(ctx, id)
		switch {
		case err == nil:
			last = doc
			if done(doc) {
				return doc, nil
			}
		case ctx.Err() != nil:
			return last, ctx.Err()
		case !errors.Is(err, r2r.ErrNotFound):
			// Any other error ends the wait.
			return last, err
		}
		if time.Until(deadline) < delay {
			return last, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// ensureMember adds a successful document to the scope's collection when R2R did not (R2R
// at HEAD may ignore the form field collection_ids).
func (w *Writer) ensureMember(ctx context.Context, doc *r2r.Document) {
	if doc == nil {
		return
	}
	if added, err := EnsureMember(ctx, w.API, w.Scope.CollectionID, doc); added && err == nil {
		w.wrote()
	}
}

// EnsureMember adds doc to collection collID unless R2R lists it there already; a conflict
// means it is a member. added reports whether R2R was asked to add it.
func EnsureMember(ctx context.Context, api API, collID string, doc *r2r.Document) (added bool, err error) {
	if slices.Contains(doc.CollectionIDs, collID) {
		return false, nil
	}
	if err := api.AddDocumentToCollection(ctx, collID, doc.ID); err != nil && !errors.Is(err, r2r.ErrConflict) {
		return true, err
	}
	return true, nil
}

// Terminal reports whether R2R has finished with a document in ingestion status (success or failed).
func Terminal(status string) bool {
	return status == r2r.IngestionSuccess || status == r2r.IngestionFailed
}

func failure(doc *r2r.Document) string {
	if doc.IngestionStatus != r2r.IngestionFailed {
		return ""
	}
	if f, ok := doc.Metadata[MetaFailure]; ok && f != nil {
		return fmt.Sprint(f)
	}
	return "R2R gave no reason"
}
