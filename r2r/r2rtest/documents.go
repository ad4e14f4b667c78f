package r2rtest

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// documentTypes is R2R's DocumentType enum; another extension answers 415 (conformance test
// ingestion_outcomes/unsupported_type_415).
var documentTypes = map[string]bool{}

func init() {
	for _, t := range strings.Fields("mp3 csv eml msg p7s epub xls xlsx html htm bmp heic jpeg png tiff jpg svg md org odt pdf txt json ppt pptx rst rtf tsv gif doc docx py js ts css") {
		documentTypes[t] = true
	}
}

// textTypes are parsed as UTF-8 text; bytes that are not valid UTF-8 fail ingestion the way
// R2R's text parsers do.
var textTypes = map[string]bool{"txt": true, "md": true, "json": true, "csv": true, "tsv": true, "html": true,
	"htm": true, "py": true, "js": true, "ts": true, "css": true, "rst": true, "org": true, "svg": true, "eml": true}

// maxUploadByExt are R2R's code defaults in bytes.
var maxUploadByExt = map[string]int64{
	"txt": 2_000_000, "md": 2_000_000, "tsv": 2_000_000, "csv": 5_000_000, "html": 5_000_000,
	"doc": 10_000_000, "docx": 10_000_000, "ppt": 20_000_000, "pptx": 20_000_000, "xls": 10_000_000,
	"xlsx": 10_000_000, "odt": 5_000_000, "pdf": 30_000_000, "eml": 5_000_000, "msg": 5_000_000,
	"p7s": 5_000_000, "bmp": 5_000_000, "heic": 5_000_000, "jpeg": 5_000_000, "jpg": 5_000_000,
	"png": 5_000_000, "tiff": 5_000_000, "epub": 10_000_000, "rtf": 5_000_000, "rst": 5_000_000, "org": 5_000_000,
}

// defaultMaxUpload is the shipped r2r.toml's default_max_upload_size (200 GiB).
const defaultMaxUpload = 214_748_364_800

// mimeByExt mirrors Python's mimetypes.guess_type for the document types.
var mimeByExt = map[string]string{
	"txt": "text/plain", "md": "text/markdown", "json": "application/json", "csv": "text/csv",
	"tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html", "py": "text/x-python",
	"js": "text/javascript", "ts": "video/mp2t", "css": "text/css", "pdf": "application/pdf",
	"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp",
	"tiff": "image/tiff", "svg": "image/svg+xml", "heic": "image/heic", "mp3": "audio/mpeg",
	"doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"odt":  "application/vnd.oasis.opendocument.text", "epub": "application/epub+zip",
	"eml": "message/rfc822", "msg": "application/vnd.ms-outlook", "p7s": "application/pkcs7-signature",
	"rtf": "application/rtf", "rst": "text/x-rst", "org": "text/org",
}

// maxFormField is the largest form field Starlette reads (its max_part_size).
const maxFormField = 1024 * 1024

// ingestInput is a validated POST /v3/documents request.
type ingestInput struct {
	hasFile       bool
	fileName      string
	file          []byte
	rawText       string
	chunks        []string
	id            string
	collectionIDs []string
	hasCols       bool
	metadata      map[string]any
	mode          string
	config        map[string]any
	orchestrate   bool
}

func jsonFormField(form map[string][]string, name string, errs *[]validationError) (any, bool) {
	vals := form[name]
	if len(vals) == 0 || vals[0] == "" {
		return nil, false
	}
	var v any
	if err := jsonUnmarshal([]byte(vals[0]), &v); err != nil {
		*errs = append(*errs, validationError{Type: "json_invalid", Loc: []any{"body", name},
			Msg: "Invalid JSON: " + err.Error(), Input: vals[0], Ctx: map[string]any{"error": err.Error()}})
		return nil, false
	}
	return v, true
}

// parseIngest validates the form like FastAPI/pydantic would (422 detail list on failure).
func (c *call) parseIngest() (*ingestInput, bool) {
	form := c.rec.Form
	in := &ingestInput{mode: "custom", orchestrate: true}
	in.hasFile = c.rec.hasFile
	in.fileName, in.file = c.rec.FileName, c.rec.File
	if v := form["raw_text"]; len(v) > 0 {
		in.rawText = v[0]
	}
	var errs []validationError
	if v, ok := jsonFormField(form, "chunks", &errs); ok {
		list, isList := v.([]any)
		if !isList {
			errs = append(errs, validationError{Type: "list_type", Loc: []any{"body", "chunks"}, Msg: "Input should be a valid list", Input: v})
		}
		for i, item := range list {
			s, isStr := item.(string)
			if !isStr {
				errs = append(errs, validationError{Type: "string_type", Loc: []any{"body", "chunks", i}, Msg: "Input should be a valid string", Input: item})
				continue
			}
			in.chunks = append(in.chunks, s)
		}
	}
	if v := form["id"]; len(v) > 0 && v[0] != "" {
		u, err := uuid.Parse(v[0])
		if err != nil {
			errs = append(errs, validationError{Type: "uuid_parsing", Loc: []any{"body", "id"},
				Msg: "Input should be a valid UUID, " + uuidReason(err), Input: v[0]})
		} else {
			in.id = u.String()
		}
	}
	if v, ok := jsonFormField(form, "collection_ids", &errs); ok {
		list, isList := v.([]any)
		if !isList {
			errs = append(errs, validationError{Type: "list_type", Loc: []any{"body", "collection_ids"}, Msg: "Input should be a valid list", Input: v})
		}
		for i, item := range list {
			s, _ := item.(string)
			u, err := uuid.Parse(s)
			if err != nil {
				errs = append(errs, validationError{Type: "uuid_parsing", Loc: []any{"body", "collection_ids", i},
					Msg: "Input should be a valid UUID", Input: item})
				continue
			}
			in.collectionIDs = append(in.collectionIDs, u.String())
		}
		in.hasCols = len(in.collectionIDs) > 0
	}
	if v, ok := jsonFormField(form, "metadata", &errs); ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			errs = append(errs, validationError{Type: "dict_type", Loc: []any{"body", "metadata"}, Msg: "Input should be a valid dictionary", Input: v})
		}
		in.metadata = m
	}
	if v := form["ingestion_mode"]; len(v) > 0 && v[0] != "" {
		switch v[0] {
		case "hi-res", "ocr", "fast", "custom":
			in.mode = v[0]
		default:
			errs = append(errs, validationError{Type: "enum", Loc: []any{"body", "ingestion_mode"},
				Msg: "Input should be 'hi-res', 'ocr', 'fast' or 'custom'", Input: v[0],
				Ctx: map[string]any{"expected": "'hi-res', 'ocr', 'fast' or 'custom'"}})
		}
	}
	if v, ok := jsonFormField(form, "ingestion_config", &errs); ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			errs = append(errs, validationError{Type: "model_type", Loc: []any{"body", "ingestion_config"},
				Msg: "Input should be a valid dictionary or instance of IngestionConfig", Input: v})
		}
		in.config = m
	}
	if v := form["run_with_orchestration"]; len(v) > 0 && v[0] != "" {
		b, ok := parseBool(v[0])
		if !ok {
			errs = append(errs, validationError{Type: "bool_parsing", Loc: []any{"body", "run_with_orchestration"},
				Msg: "Input should be a valid boolean, unable to interpret input", Input: v[0]})
		}
		in.orchestrate = b
	}
	if len(errs) > 0 {
		c.invalid(errs...)
		return nil, false
	}
	return in, true
}

func (c *call) handleCreateDocument() {
	// Starlette caps each field of a multipart form (not a file part) at 1 MiB while
	// reading it, before anything else (conformance test
	// documents/raw_text_over_the_form_field_cap).
	for _, vs := range c.rec.Form {
		for _, v := range vs {
			if len(v) > maxFormField && c.rec.ContentType == "multipart/form-data" {
				c.detail(http.StatusBadRequest, "Part exceeded maximum size of 1024KB.")
				return
			}
		}
	}
	if !c.guard() {
		return
	}
	in, ok := c.parseIngest()
	if !ok {
		return
	}
	given := 0
	for _, b := range []bool{in.hasFile, in.rawText != "", len(in.chunks) > 0} {
		if b {
			given++
		}
	}
	if given == 0 {
		c.fail(http.StatusUnprocessableEntity, "Either a `file`, `raw_text`, or `chunks` must be provided.")
		return
	}
	if given > 1 {
		c.fail(http.StatusUnprocessableEntity, "Only one of `file`, `raw_text`, or `chunks` may be provided.")
		return
	}
	if len(in.chunks) > 102400 {
		c.fail(http.StatusBadRequest, "Maximum of 102400 chunks per request")
		return
	}
	meta := in.metadata
	if meta == nil {
		meta = map[string]any{}
	}
	d := &document{ownerID: c.user.id, size: -1}
	var label string
	switch {
	case len(in.chunks) > 0:
		label = strings.Join(in.chunks, "")
		d.rawChunks = in.chunks
		d.size = 0
		for _, ch := range in.chunks {
			d.size += int64(len(ch))
		}
	case in.hasFile:
		name := in.fileName
		if t, ok := meta["title"].(string); ok && t != "" {
			name = t
		}
		if name == "" {
			c.fail(http.StatusUnprocessableEntity, "Uploaded file must have a filename.")
			return
		}
		ext := name[strings.LastIndex(name, ".")+1:]
		max := int64(defaultMaxUpload)
		if m, ok := maxUploadByExt[strings.ToLower(ext)]; ok {
			max = m
		}
		if int64(len(in.file)) > max {
			c.fail(http.StatusRequestEntityTooLarge, "File size exceeds maximum of %d bytes for extension '%s'.", max, ext)
			return
		}
		d.fileName, d.content, d.size = name, in.file, int64(len(in.file))
		label = name
	default:
		d.content = []byte(in.rawText)
		d.size = int64(utf8.RuneCountInString(in.rawText))
		d.fileName = "N/A"
		if t, ok := meta["title"].(string); ok && t != "" {
			d.fileName = t + ".txt"
		}
		label = in.rawText
	}
	d.id = in.id
	if d.id == "" {
		d.id = uuid5(strings.ReplaceAll(label, "/", "_") + "-" + c.user.id)
	}

	// create_document_info_from_file: type, title, version.
	if d.rawChunks != nil {
		d.docType = "txt"
	} else {
		ext := "txt"
		if d.fileName != "N/A" {
			ext = strings.ToLower(d.fileName[strings.LastIndex(d.fileName, ".")+1:])
		}
		if !documentTypes[ext] {
			c.fail(http.StatusUnsupportedMediaType, "'%s' is not a valid DocumentType.", ext)
			return
		}
		d.docType = ext
	}
	meta = cloneMap(meta)
	meta["version"] = "v0"
	d.metadata = meta
	switch {
	case d.rawChunks != nil:
		if t, ok := meta["title"]; ok {
			d.title = titleOf(t)
		} else {
			s := "Ingested Chunks - " + d.id
			d.title = &s
		}
	case d.fileName == "N/A":
		s := "N/A"
		d.title = &s
	default:
		if t, ok := meta["title"]; ok {
			d.title = titleOf(t)
		} else {
			s := d.fileName[strings.LastIndex(d.fileName, "/")+1:]
			d.title = &s
		}
	}

	e := c.e
	e.mu.Lock()
	if old := e.st.docs[d.id]; old != nil && old.ownerID == d.ownerID {
		if d.rawChunks == nil && old.status != "failed" {
			// R2R stores the upload under the document id before it finds the duplicate, so
			// the refused bytes replace what download returns; the chunks stay (conformance
			// test TestLive/documents/duplicate_409_still_replaces_stored_file).
			old.fileName, old.content = d.fileName, d.content
		}
		switch {
		case d.rawChunks != nil && old.status != "failed":
			// Chunk ingestion finds the duplicate inside its workflow and wraps the 409 in a
			// 500, whatever the old document's status (TestRealIngestionCrash met it with a
			// document left at "storing").
			e.mu.Unlock()
			msg := fmt.Sprintf("Document %s was already ingested and is not in a failed state.", d.id)
			c.internal("create_document", "HTTPException", "500: Error during chunk ingestion: "+msg)
			return
		case old.status == "success":
			e.mu.Unlock()
			c.fail(http.StatusConflict, "Document %s already exists. Submit a DELETE request to `/documents/{document_id}` to delete this document and allow for re-ingestion.", d.id)
			return
		case old.status != "failed":
			e.mu.Unlock()
			c.fail(http.StatusConflict, "Document %s is currently ingesting with status %s.", d.id, old.status)
			return
		}
	}
	// An id another user owns passes R2R's duplicate check, which looks only at the
	// caller's documents, and the upsert that follows takes the document over: owner,
	// metadata, collections, file and chunks become the caller's (conformance test
	// memories/team/create_at_other_users_id_takes_it_over).
	now := e.nowLocked()
	d.createdAt, d.updatedAt = now, now
	if old := e.st.docs[d.id]; old != nil {
		d.gen = old.gen + 1
		d.createdAt = old.createdAt
	}
	d.collectionIDs = metadataCollections(d.metadata)
	d.assignTo, d.skipAssign = e.ingestCollectionsLocked(c.user, in)
	ch := e.chunkingLocked()
	if n, ok := toFloat(in.config["chunk_size"]); ok && n >= 1 {
		ch.size = int(n)
	}
	if n, ok := toFloat(in.config["chunk_overlap"]); ok && n >= 0 {
		ch.overlap = int(n)
	}
	delay := e.opts.IngestDelay
	async := delay > 0 && in.orchestrate
	if async {
		d.status = "pending"
	} else {
		d.status = "parsing"
	}
	e.st.docs[d.id] = d
	if async {
		job := &ingestJob{d: d, gen: d.gen, chunking: ch, poke: make(chan chan<- bool), gone: make(chan struct{})}
		e.jobs[job] = struct{}{}
		e.jobStarted.fire()
		e.wg.Add(1)
		e.mu.Unlock()
		go e.ingestAsync(job)
		msg := "Ingest files task queued successfully."
		if d.rawChunks != nil {
			msg = "Ingest chunks task queued successfully."
		}
		c.writeJSON(http.StatusAccepted, map[string]any{"results": map[string]any{
			"message": msg, "task_id": newUUID(), "document_id": d.id}})
		return
	}
	err := e.processLocked(d, ch)
	e.mu.Unlock()
	if err != nil {
		if je, ok := err.(*invalidJSONError); ok {
			c.fail(http.StatusBadRequest, "%s", je.msg)
		} else {
			c.writeJSON(http.StatusInternalServerError, map[string]any{"message": err.Error(), "error_type": "R2RDocumentProcessingError"})
		}
		return
	}
	c.writeJSON(http.StatusAccepted, map[string]any{"results": map[string]any{
		"message": "Document created and ingested successfully.", "task_id": nil, "document_id": d.id}})
}

func titleOf(v any) *string {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return &t
	default:
		s := fmt.Sprint(t)
		return &s
	}
}

// metadataCollections is where R2R files a new document before its ingestion ends: the
// UUIDs in metadata.collection_ids, or nowhere.
func metadataCollections(md map[string]any) []string {
	out := []string{}
	list, _ := md["collection_ids"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			if u, err := uuid.Parse(s); err == nil && !slices.Contains(out, u.String()) {
				out = append(out, u.String())
			}
		}
	}
	return out
}

// ingestCollectionsLocked returns the collections the ingestion assigns the document to
// when it succeeds: the collection_ids form values (none = the owner's default
// collection). A listed collection the owner is not a member of means no assignment.
func (e *Emulator) ingestCollectionsLocked(u *user, in *ingestInput) (assign []string, skip bool) {
	for _, id := range in.collectionIDs {
		if e.st.collections[id] != nil && !u.memberOf(id) {
			return nil, true
		}
	}
	for _, id := range in.collectionIDs {
		if !slices.Contains(assign, id) {
			assign = append(assign, id)
		}
	}
	return assign, false
}

// assignCollectionsLocked is the end of R2R's simple ingestion workflow: the document joins
// the form's collections (unknown ones are created as "My Collection" owned by, but without
// as a member, the document's owner) or, without any, the owner's default collection, each raising that
// collection's document_count. A collection the document is already in (from
// metadata.collection_ids) stops the assignment there, uncounted (conformance tests
// documents/collection_ids_exact and collection_documents/document_count_is_a_counter).
func (e *Emulator) assignCollectionsLocked(d *document) {
	if d.skipAssign {
		return
	}
	ids := d.assignTo
	if len(ids) == 0 {
		ids = []string{uuid5(d.ownerID)}
	}
	for _, id := range ids {
		col := e.st.collections[id]
		if col == nil && len(d.assignTo) > 0 {
			now := e.nowLocked()
			title := ""
			if d.title != nil {
				title = *d.title
			}
			desc := "A collection started during " + title + " ingestion"
			col = &collection{id: id, ownerID: d.ownerID, name: "My Collection", description: &desc,
				clusterStatus: "pending", syncStatus: "pending", createdAt: now, updatedAt: now}
			e.st.collections[id] = col // its owner does not become a member (user_count 0)
		}
		if col == nil || slices.Contains(d.collectionIDs, id) {
			return
		}
		d.collectionIDs = append(d.collectionIDs, id)
		col.docCount++
	}
}

// ingestSteps are the states a document passes through after "pending".
var ingestSteps = []string{"parsing", "embedding", "storing"}

// ingestJob is one background ingestion (an ingestAsync goroutine).
type ingestJob struct {
	d        *document
	gen      int
	chunking chunking
	// poke carries a StepIngestion request: the goroutine takes its next step at once and
	// sends on the received channel (buffered) whether the document moved.
	poke chan chan<- bool
	gone chan struct{} // closed when the goroutine has exited
	// killed: Restart ended the ingestion where it was (guarded by the emulator's mu).
	killed bool
}

// StepIngestion makes every document waiting for its next background ingestion step take it
// now instead of after IngestDelay, and returns when those steps are applied. It returns how
// many documents moved; a document deleted or re-ingested meanwhile does not move, and its
// ingestion ends. With a long IngestDelay (say time.Hour) this walks ingestion
// deterministically: pending → parsing → embedding → storing → success (or failed).
func (e *Emulator) StepIngestion() int {
	e.mu.Lock()
	jobs := make([]*ingestJob, 0, len(e.jobs))
	for j := range e.jobs {
		jobs = append(jobs, j)
	}
	e.mu.Unlock()
	moved := 0
	for _, j := range jobs {
		res := make(chan bool, 1)
		select {
		case j.poke <- res:
		case <-j.gone: // finished on its own meanwhile
			continue
		}
		if <-res {
			moved++
		}
	}
	return moved
}

// Ingesting returns how many background ingestions are still running: documents that have
// not reached success or failed and were not deleted or re-ingested since. A deleted
// document's ingestion keeps counting until its next step, when it notices and stops.
func (e *Emulator) Ingesting() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.jobs)
}

// IngestionStarted returns a channel closed when the next background ingestion starts (its
// document is uploaded with an IngestDelay). Take it before the upload, so the start is not
// missed.
func (e *Emulator) IngestionStarted() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.jobStarted.wait()
}

// IngestionEnded returns a channel closed when the background ingestion of document id has
// ended; it is closed already when none runs.
func (e *Emulator) IngestionEnded(id string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	var last *ingestJob
	for j := range e.jobs {
		if j.d.id == id && (last == nil || j.gen > last.gen) {
			last = j
		}
	}
	if last == nil {
		ended := make(chan struct{})
		close(ended)
		return ended
	}
	return last.gone
}

// ingestAsync walks a document through the state machine, one step per IngestDelay or per
// StepIngestion call.
func (e *Emulator) ingestAsync(j *ingestJob) {
	defer e.wg.Done()
	defer close(j.gone)
	e.mu.Lock()
	delay := e.opts.IngestDelay
	e.mu.Unlock()
	for i := 0; ; i++ {
		var res chan<- bool
		select {
		case <-e.ctx.Done():
			e.mu.Lock()
			delete(e.jobs, j)
			e.mu.Unlock()
			return
		case <-timerC(delay):
		case res = <-j.poke:
		}
		e.mu.Lock()
		moved, finished := e.ingestStepLocked(j, i)
		if finished {
			delete(e.jobs, j)
		}
		e.mu.Unlock()
		if res != nil {
			res <- moved
		}
		if finished {
			return
		}
	}
}

// ingestStepLocked applies step i of j (the last one stores the chunks) and reports whether
// the document moved and whether the ingestion is over.
func (e *Emulator) ingestStepLocked(j *ingestJob, i int) (moved, finished bool) {
	d := j.d
	if j.killed || e.st.docs[d.id] != d || d.gen != j.gen {
		return false, true // R2R restarted, or the document was deleted or re-ingested meanwhile
	}
	if i >= len(ingestSteps) {
		_ = e.processLocked(d, j.chunking)
		return true, true
	}
	// As in R2R 3.6.6, updated_at stays when the ingestion started while it moves through
	// its states (r2r-mcp measures how long an ingestion has been running by it).
	d.status = ingestSteps[i]
	if ingestSteps[i] == "embedding" {
		// Parsing finished: a document that cannot be parsed fails here.
		if _, err := parseDocument(d, j.chunking); err != nil {
			e.failLocked(d, err)
			return true, true
		}
	}
	return true, false
}

// processLocked parses, chunks and stores d, ending in success or failed.
func (e *Emulator) processLocked(d *document, ch chunking) error {
	texts, err := parseDocument(d, ch)
	if err != nil {
		e.failLocked(d, err)
		return err
	}
	d.chunks = make([]*chunk, len(texts))
	for i, t := range texts {
		meta := cloneMap(d.metadata)
		meta["document_type"] = d.docType
		meta["version"] = "v0"
		if d.rawChunks == nil { // R2R 3.6.6 gives the chunks it is sent no chunk_order
			meta["chunk_order"] = i
		}
		id := uuid5(uuid5(fmt.Sprintf("%s-%d-0", d.id, i)) + "_v0")
		d.chunks[i] = newChunk(id, t, i, meta)
	}
	d.status = "success"
	e.assignCollectionsLocked(d)
	return nil
}

// failLocked marks a failed ingestion. The document stays where its metadata put it: R2R
// assigns collections only when ingestion succeeds (conformance test
// TestLive/ingestion_outcomes/invalid_utf8_500_and_failed).
func (e *Emulator) failLocked(d *document, err error) {
	d.status = "failed"
	d.metadata["failure"] = err.Error()
}

type parseError struct{ msg string }

func (p *parseError) Error() string { return "Error parsing document: " + p.msg }

// parseDocument turns a document's content into chunk texts.
//
// Text types must be valid UTF-8 (R2R's text parsers decode strictly); Markdown and HTML are
// reduced to their text as R2R's parsers do (see markdownText); other types (PDF,
// Office, images...) cannot really be parsed here, so their printable text runs stand in for
// the extracted text. An empty or blank text file is ingested without chunks, as in R2R
// (conformance test TestLive/ingestion_outcomes/empty_file_succeeds_without_chunks); any
// other document without text fails.
func parseDocument(d *document, ch chunking) ([]string, error) {
	if d.rawChunks != nil {
		return d.rawChunks, nil
	}
	var text string
	switch {
	case utf8.Valid(d.content):
		text = string(d.content)
	case textTypes[d.docType]:
		pos := 0
		for pos < len(d.content) {
			r, n := utf8.DecodeRune(d.content[pos:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			pos += n
		}
		return nil, &parseError{fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: invalid start byte", d.content[pos], pos)}
	default:
		text = printableRuns(d.content)
	}
	// What the parser yields; each item is chunked on its own.
	items := []string{text}
	switch d.docType {
	case "md":
		items[0] = markdownText(text)
	case "html", "htm":
		items[0] = htmlText(text)
	case "csv", "tsv":
		items = csvRows(text, d.docType == "tsv")
	case "json":
		t, err := jsonDocumentText(text)
		if err != nil {
			return nil, err
		}
		items[0] = t
	}
	if strings.TrimSpace(text) == "" && !textTypes[d.docType] {
		return nil, &parseError{"no text content could be extracted from the document"}
	}
	if err := ch.check(); err != nil {
		return nil, err
	}
	var chunks []string
	for _, it := range items {
		chunks = append(chunks, ch.split(it)...)
	}
	return chunks, nil
}

// csvRows is R2R's CSV and TSV parsing: every row on its own, its fields joined by ", "
// (conformance test TestLive/ingestion_outcomes/csv_rows).
func csvRows(text string, tabs bool) []string {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if tabs {
		r.Comma = '\t'
	}
	var rows []string
	for {
		rec, err := r.Read()
		if err != nil {
			return rows
		}
		rows = append(rows, strings.Join(rec, ", "))
	}
}

// chunkingLocked is the server's chunking configuration.
func (e *Emulator) chunkingLocked() chunking {
	return chunking{size: e.opts.ChunkSize, overlap: e.opts.ChunkOverlap}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// docVisibleLocked looks a document up and applies the visibility rule.
func (e *Emulator) docVisibleLocked(u *user, id string) *document {
	d := e.st.docs[id]
	if d == nil || !visible(u, d) {
		return nil
	}
	return d
}

// sortedDocsLocked returns documents by created_at DESC.
func (e *Emulator) sortedDocsLocked(keep func(*document) bool) []*document {
	var out []*document
	for _, d := range e.st.docs {
		if keep(d) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].createdAt.After(out[j].createdAt) })
	return out
}

func (c *call) handleListDocuments() {
	if !c.guard() {
		return
	}
	p, ok := c.parseList(false)
	if !ok {
		return
	}
	var ids []string
	for _, raw := range c.r.URL.Query()["ids"] {
		u, err := uuid.Parse(raw)
		if err != nil {
			// R2R parses these by hand, so a bad id is a 500.
			msg := "badly formed hexadecimal UUID string"
			c.internal("get_documents", "ValueError", msg)
			return
		}
		ids = append(ids, u.String())
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	u := c.user
	docs := e.sortedDocsLocked(func(d *document) bool {
		if len(ids) > 0 && !slices.Contains(ids, d.id) {
			return false
		}
		if p.ownerOnly {
			return d.ownerID == u.id
		}
		return visible(u, d)
	})
	lo, hi := window(len(docs), p.offset, p.limit)
	out := make([]map[string]any, 0, hi-lo)
	for _, d := range docs[lo:hi] {
		out = append(out, e.documentJSONLocked(d))
	}
	c.page(out, len(docs))
}

func (c *call) handleGetDocument() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.docVisibleLocked(c.user, id)
	if d == nil {
		c.fail(http.StatusNotFound, "Document not found.")
		return
	}
	c.ok(e.documentJSONLocked(d))
}

func (c *call) handleListChunks() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	p, ok := c.parseList(false)
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.st.docs[id]
	var chunks []*chunk
	if d != nil {
		chunks = d.chunks
	}
	lo, hi := window(len(chunks), p.offset, p.limit)
	if hi <= lo {
		c.fail(http.StatusNotFound, "No chunks found for the given document ID.")
		return
	}
	if !visible(c.user, d) {
		c.fail(http.StatusForbidden, "Not authorized to access this document's chunks.")
		return
	}
	out := make([]map[string]any, 0, hi-lo)
	for _, ch := range chunks[lo:hi] {
		out = append(out, chunkJSON(d, ch))
	}
	c.page(out, len(chunks))
}

func (c *call) handleDownload() {
	if !c.guard() {
		return
	}
	u, err := uuid.Parse(c.pathValue("id"))
	if err != nil {
		c.fail(http.StatusUnprocessableEntity, "Invalid document ID format.")
		return
	}
	e := c.e
	e.mu.Lock()
	d := e.st.docs[u.String()]
	if d == nil {
		e.mu.Unlock()
		c.fail(http.StatusNotFound, "Document not found.")
		return
	}
	if !visible(c.user, d) {
		e.mu.Unlock()
		c.fail(http.StatusForbidden, "Not authorized to access this document.")
		return
	}
	content, name := d.content, d.fileName
	if d.rawChunks != nil {
		content, name = nil, ""
	}
	e.mu.Unlock()
	if content == nil {
		c.fail(http.StatusNotFound, "File not found.")
		return
	}
	ct := "application/octet-stream"
	if i := strings.LastIndex(name, "."); i >= 0 {
		if m, ok := mimeByExt[strings.ToLower(name[i+1:])]; ok {
			ct = m
		}
	}
	if strings.HasPrefix(ct, "text/") {
		ct += "; charset=utf-8"
	}
	c.w.Header().Set("Content-Type", ct)
	c.w.Header().Set("Content-Disposition", "inline; filename*=UTF-8''"+pyQuote(name))
	c.w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(content)
}

// pyQuote is Python's urllib.parse.quote with its default safe set ("/").
func pyQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("_.-~/", ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

func (c *call) handleDeleteDocument() {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.st.docs[id]
	if d == nil {
		c.fail(http.StatusNotFound, "Document not found")
		return
	}
	if !c.user.superuser && d.ownerID != c.user.id {
		c.fail(http.StatusNotFound, "Document not found or insufficient permissions")
		return
	}
	e.deleteDocumentLocked(d)
	c.ok(map[string]any{"success": true})
}

// deleteDocumentLocked removes a document; each of its collections' document_count drops
// by one, whether or not the document was ever counted there.
func (e *Emulator) deleteDocumentLocked(d *document) {
	for _, cid := range d.collectionIDs {
		if col := e.st.collections[cid]; col != nil {
			col.docCount--
		}
	}
	delete(e.st.docs, d.id)
}

// handleDeleteByFilter deletes the caller's chunks matching a filter, then every document
// left without chunks. The body is the filter as a JSON object, a JSON string holding it, or
// raw filter text.
func (c *call) handleDeleteByFilter() {
	if !c.guard() {
		return
	}
	var v any
	if err := jsonUnmarshal(c.body, &v); err != nil {
		c.invalid(validationError{Type: "json_invalid", Loc: []any{"body"}, Msg: "Invalid JSON: " + err.Error(), Input: string(c.body)})
		return
	}
	if s, ok := v.(string); ok {
		if err := jsonUnmarshal([]byte(s), &v); err != nil {
			c.invalid(validationError{Type: "json_invalid", Loc: []any{"body"}, Msg: "Invalid JSON: " + err.Error(), Input: s})
			return
		}
	}
	filters, ok := v.(map[string]any)
	if !ok {
		c.invalid(validationError{Type: "dict_type", Loc: []any{"body"}, Msg: "Input should be a valid dictionary", Input: v})
		return
	}
	p, err := compileFilter(map[string]any{"$and": []any{map[string]any{"owner_id": map[string]any{"$eq": c.user.id}}, filters}})
	if err != nil {
		c.searchError("delete_document_by_filter", err)
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.st.docs {
		if len(d.chunks) == 0 {
			continue
		}
		kept := d.chunks[:0:0]
		for _, ch := range d.chunks {
			row := &filterRow{id: ch.id, documentID: d.id, ownerID: d.ownerID, collectionIDs: d.collectionIDs,
				text: ch.text, metadata: ch.metadata}
			if p(row) != fTrue {
				kept = append(kept, ch)
			}
		}
		if len(kept) == 0 {
			e.deleteDocumentLocked(d)
			continue
		}
		d.chunks = kept
	}
	c.ok(map[string]any{"success": true})
}

func (c *call) handlePatchMetadata() { c.updateMetadata(false) }
func (c *call) handlePutMetadata()   { c.updateMetadata(true) }

// updateMetadata handles PATCH (merge) and PUT (replace). The body is a JSON array of objects.
func (c *call) updateMetadata(replace bool) {
	if !c.guard() {
		return
	}
	id, ok := c.uuidParam("id")
	if !ok {
		return
	}
	if !c.jsonContentOK() {
		return
	}
	var raw any
	if err := jsonUnmarshal(c.body, &raw); err != nil {
		c.invalid(validationError{Type: "json_invalid", Loc: []any{"body", 0}, Msg: "JSON decode error", Input: map[string]any{},
			Ctx: map[string]any{"error": err.Error()}})
		return
	}
	list, isList := raw.([]any)
	if !isList {
		c.invalid(validationError{Type: "list_type", Loc: []any{"body"}, Msg: "Input should be a valid list", Input: raw})
		return
	}
	var patches []map[string]any
	var errs []validationError
	for i, item := range list {
		m, isMap := item.(map[string]any)
		if !isMap {
			errs = append(errs, validationError{Type: "dict_type", Loc: []any{"body", i}, Msg: "Input should be a valid dictionary", Input: item})
			continue
		}
		patches = append(patches, m)
	}
	if len(errs) > 0 {
		c.invalid(errs...)
		return
	}
	e := c.e
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.st.docs[id]
	if d == nil || (!c.user.superuser && d.ownerID != c.user.id) {
		c.fail(http.StatusNotFound, "Document not found.")
		return
	}
	meta := cloneMap(d.metadata)
	if replace {
		meta = map[string]any{}
	}
	for _, p := range patches {
		for k, v := range p {
			meta[k] = cloneValue(v)
		}
	}
	d.metadata = meta
	if t, ok := meta["title"]; ok {
		d.title = titleOf(t)
	}
	d.updatedAt = e.nowLocked()
	c.ok(e.documentJSONLocked(d))
}
