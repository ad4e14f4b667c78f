package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/cache"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/confine"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

const documentIDHint = "run r2r_list_documents to see document ids"

var statusFilters = []string{"pending", "success", "failed", "all"}

// Status filtering happens here (R2R's collection listing has no status filter), so a
// filtered listing scans the collection in pages of scanPage, up to maxScan documents.
const (
	scanPage = 1000
	maxScan  = 10000
)

// DocumentSummary is one entry of r2r_list_documents.
type DocumentSummary struct {
	DocumentID       string `json:"document_id" required:"true" desc:"document id (for r2r_get_document and r2r_monitor_task)"`
	Title            string `json:"title" required:"true" desc:"document title"`
	IngestionStatus  string `json:"ingestion_status" required:"true" desc:"ingestionStatusDesc"`
	ExtractionStatus string `json:"extraction_status" desc:"knowledge-graph extraction status"`
	DocumentType     string `json:"document_type" desc:"file type R2R detected (md, pdf, …)"`
	CreatedAt        string `json:"created_at" required:"true" desc:"creation time, RFC 3339"`
	SizeBytes        int64  `json:"size_bytes" required:"true" desc:"the file's size in bytes for a file r2r-mcp ingested (as r2r_ingest_document reports it), else R2R's size; 0 when unknown"`
}

// ListDocumentsOutput is the structured result of r2r_list_documents.
type ListDocumentsOutput struct {
	Documents      []DocumentSummary `json:"documents" required:"true" desc:"documents of this page, newest first"`
	Total          int               `json:"total" required:"true" desc:"number of documents matching status_filter in the collection"`
	Offset         int               `json:"offset" required:"true" desc:"offset of this page"`
	Limit          int               `json:"limit" required:"true" desc:"page size asked for"`
	StatusFilter   string            `json:"status_filter" enum:"statusFilters" desc:"the status filter applied"`
	CollectionID   string            `json:"collection_id,omitempty" desc:"the collection listed"`
	CollectionName string            `json:"collection_name,omitempty" desc:"name of the collection, when known"`
	Cached         bool              `json:"cached" desc:"true when served from r2r-mcp's cache"`
	Note           string            `json:"note,omitempty" desc:"explanation when nothing could be listed, the offset is past the end, or the scan was cut short"`
}

// listDocumentsDef is r2r_list_documents' definition.

// getDocumentName is the read tool's name; the document resource shares its cache entries.
const getDocumentName = "r2r_get_document"

// listDocumentsName is r2r_list_documents's name (its listing cache is shared by the
// document id completion).
const listDocumentsName = "r2r_list_documents"

func listDocumentsDef() mcp.Tool {
	opts := append(readTool("List project documents",
		"List the documents in the project's collection with their ingestion status: what the knowledge base holds, "+
			"which uploads are pending or failed. Pages with offset/limit; status_filter pending means any status not yet success or failed.",
		outputSchema[ListDocumentsOutput]()),
		searchHint("list indexed documents files in knowledge base ingestion status"),
		inputSchema[listParams]())
	return newTool(listDocumentsName, opts...)
}

// listDocumentsTool lists through l.
func listDocumentsTool(d *Deps, l *loader, sc *scoper) Tool {
	def := listDocumentsDef()
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: true, Cached: true, Example: Example{Args: map[string]any{"limit": 20}}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p listParams) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		if s.missing() {
			base := listBase(s, p)
			base.Note = s.missingNote()
			return result(base.Note, base), nil
		}
		o, cached, err := d.documentPage(ctx, c, l, s, p)
		if err != nil {
			sc.forgetOn404(ctx, s, err)
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), collectionNotFound(s)), nil
		}
		o.Cached = cached
		for _, doc := range o.Documents {
			d.shown.remember(doc.DocumentID)
		}
		return result(withCachedMarker(listDocumentsText(o, s), cached), o), nil
	})}
}

// listBase is what r2r_list_documents shows of s and p before R2R answers.
func listBase(s *scope, p listParams) ListDocumentsOutput {
	return ListDocumentsOutput{Documents: []DocumentSummary{}, Offset: p.Offset, Limit: p.Limit, StatusFilter: p.Filter,
		CollectionID: s.ID, CollectionName: clipJSON(s.Name, maxTitleBytes)}
}

// documentPage is one page of s's documents as r2r_list_documents shows it, through the
// cache: the tool and the document-id completion share its entry, so both make it here.
func (d *Deps) documentPage(ctx context.Context, c *call, l *loader, s *scope, p listParams) (ListDocumentsOutput, bool, error) {
	base := listBase(s, p)
	args := map[string]any{"offset": p.Offset, "limit": p.Limit, "status_filter": p.Filter}
	return cachedLoad(ctx, c, l, cache.KindList, listDocumentsName, args, s.ID, func(ctx context.Context) (ListDocumentsOutput, bool, error) {
		return d.listDocuments(ctx, base, s, p)
	})
}

// listParams are one r2r_list_documents call's arguments.
type listParams struct {
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID); omit to list the current project's collection"`
	Offset       int    `json:"offset" min:"0" max:"1000000" default:"0" desc:"Pagination offset (number of documents to skip)"`
	Limit        int    `json:"limit" min:"1" max:"100" default:"50" desc:"Number of documents to return"`
	Filter       string `json:"status_filter" enum:"statusFilters" default:"all" desc:"Filter by ingestion status: pending (still processing), success, failed, or all"`
}

func (p *listParams) check(*Deps) (err error) {
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

// listDocuments fetches one page of the collection's documents into a copy of base (the
// load may outlive the call that started it). A listing that shows ingestion in progress
// goes stale as R2R works: it may not be stored.
func (d *Deps) listDocuments(ctx context.Context, base ListDocumentsOutput, s *scope, p listParams) (ListDocumentsOutput, bool, error) {
	o := base
	var seen []r2r.Document
	if p.Filter == "all" {
		page, err := d.Client.ListCollectionDocuments(ctx, s.ID, r2r.ListParams{Offset: p.Offset, Limit: p.Limit})
		if err != nil {
			return o, false, err
		}
		for _, doc := range page.Items {
			o.Documents = append(o.Documents, summarize(doc))
		}
		o.Total = page.Total
		if len(page.Items) == 0 && p.Offset > 0 {
			// R2R counts a page's total over the page's own rows: past the end it says 0,
			// which is not the collection's size.
			if o.Total, err = d.collectionSize(ctx, s.ID); err != nil {
				return o, false, err
			}
		}
		seen = page.Items
	} else {
		docs, truncated, err := d.scanCollection(ctx, s.ID)
		if err != nil {
			return o, false, err
		}
		var match []DocumentSummary
		for _, doc := range docs {
			if statusMatches(p.Filter, doc.IngestionStatus) {
				match = append(match, summarize(doc))
			}
		}
		o.Total = len(match)
		if p.Offset < len(match) {
			o.Documents = match[p.Offset:min(p.Offset+p.Limit, len(match))]
		}
		if truncated {
			o.Note = fmt.Sprintf("Only the newest %d documents of the collection were scanned for status %q.", maxScan, p.Filter)
		}
		seen = docs
	}
	if len(o.Documents) == 0 && o.Total > 0 && o.Note == "" {
		o.Note = pastEnd(o, s.label())
	}
	store := true
	for _, doc := range seen {
		d.writes.ingested(doc.ID, doc.IngestionStatus)
		store = store && kbsync.Terminal(doc.IngestionStatus)
	}
	return o, store, nil
}

// collectionSize is the number of documents in collection collID.
func (d *Deps) collectionSize(ctx context.Context, collID string) (int, error) {
	page, err := d.Client.ListCollectionDocuments(ctx, collID, r2r.ListParams{Offset: 0, Limit: 1})
	if err != nil {
		return 0, err
	}
	return page.Total, nil
}

// maxScanBytes bounds what a collection scan keeps in memory, estimated from the fields it
// keeps (see slimDocument); a scan stops early when it is reached, as at maxScan.
const maxScanBytes = 8 << 20

// scanCollection reads a collection's documents (newest first), up to maxScan documents or
// maxScanBytes. Each document keeps only what listings and counts use: metadata other
// than the title and the summary are dropped as pages arrive. truncated reports a scan cut
// short.
func (d *Deps) scanCollection(ctx context.Context, collID string) (docs []r2r.Document, truncated bool, err error) {
	var all []r2r.Document
	size := 0
	for off := 0; off < maxScan; off += scanPage {
		page, err := d.Client.ListCollectionDocuments(ctx, collID, r2r.ListParams{Offset: off, Limit: scanPage})
		if err != nil {
			return nil, false, err
		}
		for _, doc := range page.Items {
			doc = slimDocument(doc)
			size += documentBytes(doc)
			all = append(all, doc)
		}
		if len(page.Items) < scanPage || off+len(page.Items) >= page.Total {
			return all, false, nil
		}
		if size >= maxScanBytes {
			return all, true, nil
		}
	}
	return all, true, nil
}

// slimDocument keeps the fields listings and counts use (the title, also from metadata, and
// a memory's kind).
func slimDocument(doc r2r.Document) r2r.Document {
	var md map[string]any
	if t, ok := doc.Metadata["title"].(string); ok {
		md = map[string]any{"title": t}
	}
	if k, ok := doc.Metadata[memory.MetaKind].(string); ok && len(k) <= maxEnumBytes {
		if md == nil {
			md = map[string]any{}
		}
		md[memory.MetaKind] = k
	}
	doc.Metadata, doc.Summary = md, nil
	return doc
}

// documentBytes estimates the memory a slimmed document holds.
func documentBytes(doc r2r.Document) int {
	n := 256 + len(doc.ID) + len(doc.OwnerID) + len(doc.DocumentType) + len(doc.Version) +
		len(doc.IngestionStatus) + len(doc.ExtractionStatus) + 40*len(doc.CollectionIDs)
	if doc.Title != nil {
		n += len(*doc.Title)
	}
	if t, ok := doc.Metadata["title"].(string); ok {
		n += len(t)
	}
	return n
}

func statusMatches(filter, status string) bool {
	switch filter {
	case "all":
		return true
	case "pending":
		return !kbsync.Terminal(status)
	}
	return status == filter
}

// maxListTitleBytes bounds a title in a listing (as JSON): 100 entries stay within about
// 40 KB whatever the titles hold. The text shows 160 characters of each.
const maxListTitleBytes = 200

// maxEnumBytes bounds R2R's short fields (statuses, document types) in a result.
const maxEnumBytes = 40

func summarize(doc r2r.Document) DocumentSummary {
	s := DocumentSummary{
		DocumentID:       clipJSON(doc.ID, maxEnumBytes),
		Title:            clipJSON(documentTitle(doc), maxListTitleBytes),
		IngestionStatus:  clipJSON(doc.IngestionStatus, maxEnumBytes),
		ExtractionStatus: clipJSON(doc.ExtractionStatus, maxEnumBytes),
		DocumentType:     clipJSON(doc.DocumentType, maxEnumBytes),
		CreatedAt:        formatTime(doc.CreatedAt.Time),
	}
	s.SizeBytes = max(kbsync.Size(doc), 0)
	return s
}

func documentTitle(doc r2r.Document) string {
	if doc.Title != nil && strings.TrimSpace(*doc.Title) != "" {
		return Sanitize(*doc.Title)
	}
	if t, ok := doc.Metadata["title"].(string); ok && strings.TrimSpace(t) != "" {
		return Sanitize(t)
	}
	return untitled
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func listDocumentsText(o ListDocumentsOutput, s *scope) string {
	var b strings.Builder
	what := "documents"
	if o.StatusFilter != "all" {
		what = o.StatusFilter + " documents"
	}
	if len(o.Documents) == 0 {
		if o.Total > 0 {
			b.WriteString(pastEnd(o, s.label()))
		} else {
			fmt.Fprintf(&b, "%s has no %s.", s.label(), what)
			if o.StatusFilter == "all" {
				b.WriteString(" Ingest files with r2r_ingest_document.")
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s %d–%d of %d in %s:\n", strings.ToUpper(what[:1])+what[1:], o.Offset+1, o.Offset+len(o.Documents), o.Total, s.label())
	for i, doc := range o.Documents {
		size := ""
		if doc.SizeBytes > 0 {
			size = ", " + confine.HumanBytes(doc.SizeBytes)
		}
		date := ""
		if len(doc.CreatedAt) >= 10 {
			date = ", " + doc.CreatedAt[:10]
		}
		fmt.Fprintf(&b, "%d. %s — %s%s%s (id %s)\n", o.Offset+i+1, oneLine(snippet(doc.Title, 160)), orUnknown(doc.IngestionStatus), size, date, doc.DocumentID)
	}
	if rest := o.Total - (o.Offset + len(o.Documents)); rest > 0 {
		fmt.Fprintf(&b, "%d more — call again with offset=%d.\n", rest, o.Offset+len(o.Documents))
	}
	if o.Note != "" {
		b.WriteString(o.Note + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// pastEnd says that o's offset is beyond the o.Total documents of the collection named
// label, and where the last page starts.
func pastEnd(o ListDocumentsOutput, label string) string {
	what := "document"
	if o.StatusFilter != "all" {
		what = o.StatusFilter + " document"
	}
	last := (o.Total - 1) / max(o.Limit, 1) * max(o.Limit, 1)
	return fmt.Sprintf("Offset %d is past the end: %s has %s. The last page starts at offset %d; call again with offset=%d.",
		o.Offset, label, plural(o.Total, what), last, last)
}

// GetDocumentOutput is the structured result of r2r_get_document.
type GetDocumentOutput struct {
	DocumentID       string         `json:"document_id" required:"true" desc:"document id"`
	Title            string         `json:"title" required:"true" desc:"document title"`
	DocumentType     string         `json:"document_type" desc:"file type R2R detected"`
	IngestionStatus  string         `json:"ingestion_status" desc:"R2R ingestion status"`
	ExtractionStatus string         `json:"extraction_status" desc:"knowledge-graph extraction status"`
	SizeBytes        int64          `json:"size_bytes" desc:"the file's size in bytes for a file r2r-mcp ingested (as r2r_ingest_document reports it), else R2R's size; 0 when unknown"`
	CreatedAt        string         `json:"created_at" desc:"creation time, RFC 3339"`
	UpdatedAt        string         `json:"updated_at" desc:"last update, RFC 3339"`
	CollectionIDs    []string       `json:"collection_ids" items:"collection id" desc:"collections the document belongs to"`
	Summary          string         `json:"summary,omitempty" desc:"R2R's summary of the document, when it made one"`
	Metadata         map[string]any `json:"metadata" required:"true" desc:"document metadata (at most 4 KB as JSON: long values are cut with …, large objects and lists shortened)"`
	MetadataCut      bool           `json:"metadata_truncated,omitempty" desc:"true when the metadata shown was shortened to fit"`
	ChunkCount       int            `json:"chunk_count" desc:"number of chunks the text was reassembled from"`
	Text             string         `json:"text" required:"true" desc:"this page of the document text (characters offset … offset+returned_chars)"`
	Offset           int            `json:"offset" required:"true" desc:"character offset of this page"`
	ReturnedChars    int            `json:"returned_chars" required:"true" desc:"characters in this page"`
	TotalChars       int            `json:"total_chars" required:"true" desc:"characters in the whole reassembled text; a lower bound when total_chars_exact is false"`
	TotalCharsExact  bool           `json:"total_chars_exact" desc:"false when only the start of a long document was read to serve this page, so total_chars is a lower bound"`
	HasMore          bool           `json:"has_more" desc:"true when the text goes on after this page (see next_offset)"`
	NextOffset       *int           `json:"next_offset,omitempty" desc:"offset of the next page; absent on the last page"`
	Note             string         `json:"note,omitempty" desc:"explanation when the text is not available"`
	Cached           bool           `json:"cached" desc:"true when served from r2r-mcp's cache"`
}

// maxSummaryBytes bounds R2R's summary of a document in a result, as JSON.
const maxSummaryBytes = 2048

const (
	defaultMaxChars = 8000
	maxMaxChars     = 50000
	maxChunkPages   = 20 // × scanPage chunks
)

// getDocumentTool reads through l.
func getDocumentTool(d *Deps, l *loader) Tool {
	opts := append(readTool("Read a document",
		"Read a whole document, e.g. a hit of r2r_search or a cited source: its metadata and text, reassembled from its chunks in order. "+
			"Long documents come in pages: use offset and max_chars to read on.", outputSchema[GetDocumentOutput]()),
		searchHint("read full text of a document page"),
		maxResultChars(resultChars(maxMaxChars)),
		inputSchema[getDocumentParams]())
	def := newTool(getDocumentName, opts...)
	return Tool{Def: def, Group: GroupDocuments, ReadOnly: true, Cached: true, Example: Example{Args: map[string]any{"document_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}, Error: "not_found"}, run: bound(d, def, func(ctx context.Context, c *call, req mcp.CallToolRequest, p getDocumentParams) (*mcp.CallToolResult, error) {
		id := p.DocumentID
		if p.Path != "" {
			var errRes *mcp.CallToolResult
			if id, errRes = d.documentAt(ctx, c, p.Path); errRes != nil {
				return errRes, nil
			}
		}
		o, errRes := d.readDocument(ctx, c, l, id, p.Offset, p.MaxChars)
		if errRes != nil {
			return errRes, nil
		}
		return resultCap(withCachedMarker(documentText(*o), o.Cached), max(MaxTextBytes, 4*p.MaxChars+4096), o), nil
	})}
}

// getDocumentParams are one r2r_get_document call's arguments: exactly one of
// document_id and path.
type getDocumentParams struct {
	DocumentID string `json:"document_id" min:"minShortID" max:"36" desc:"Document ID (UUID) to read, e.g. from r2r_search or r2r_list_documents, or the short id (a unique prefix of at least 7 hex digits) such a result showed. Give this or path"`
	Path       string `json:"path" min:"1" max:"maxPathChars" desc:"Or a file's path relative to the repository root (docs/runbook.md): reads the version you see, your own working copy in a team project when you synced one, else the team's"`
	Offset     int    `json:"offset" min:"0" max:"100000000" default:"0" desc:"Character offset to start reading at"`
	MaxChars   int    `json:"max_chars" min:"1" max:"maxMaxChars" default:"defaultMaxChars" desc:"Maximum number of characters of text to return"`
}

func (p *getDocumentParams) check(d *Deps) (err error) {
	switch {
	case p.DocumentID != "" && p.Path != "":
		return argErr("path", "give document_id or path, not both")
	case p.Path != "":
		p.Path, err = checkDocPath("path", p.Path)
		return err
	case p.DocumentID == "":
		return argErr("document_id", "give document_id (from r2r_search or r2r_list_documents) or path (relative to the repository root)")
	}
	p.DocumentID, err = d.documentID("document_id", p.DocumentID)
	return err
}

// readDocument fetches a document and one page of its reassembled text, through the cache
// (kind document; shared by r2r_get_document and the r2r://documents/{id} resource, whose
// call c is nil).
func (d *Deps) readDocument(ctx context.Context, c *call, l *loader, id string, offset, maxChars int) (*GetDocumentOutput, *mcp.CallToolResult) {
	// A document can be in several collections: its results depend on collection "",
	// which every write bumps.
	args := map[string]any{"document_id": id, "offset": offset, "max_chars": maxChars}
	o, cached, err := cachedLoad(ctx, c, l, cache.KindDocument, getDocumentName, args, "", func(ctx context.Context) (*GetDocumentOutput, bool, error) {
		o, err := d.loadDocument(ctx, id, offset, maxChars)
		if err != nil {
			return nil, false, err
		}
		d.writes.ingested(id, o.IngestionStatus)
		// Until ingestion has finished, status and text are still changing.
		return o, kbsync.Terminal(o.IngestionStatus) && o.Note == "", nil
	})
	if err != nil {
		return nil, r2rErrorResult(ctx, err, d.Client.BaseURL(), docNotFound(id))
	}
	out := *o // o may be shared with the cache
	out.Cached = cached
	return &out, nil
}

// loadDocument reads a document and one page of its reassembled text from R2R.
func (d *Deps) loadDocument(ctx context.Context, id string, offset, maxChars int) (*GetDocumentOutput, error) {
	doc, err := d.Client.GetDocument(ctx, id)
	if err != nil {
		return nil, err
	}
	o := &GetDocumentOutput{
		DocumentID: clipJSON(doc.ID, maxEnumBytes), Title: clipJSON(documentTitle(*doc)+versionLabel(doc.Metadata), maxTitleBytes),
		DocumentType: clipJSON(doc.DocumentType, maxEnumBytes), IngestionStatus: clipJSON(doc.IngestionStatus, maxEnumBytes),
		ExtractionStatus: clipJSON(doc.ExtractionStatus, maxEnumBytes),
		CreatedAt:        formatTime(doc.CreatedAt.Time), UpdatedAt: formatTime(doc.UpdatedAt.Time), Offset: offset,
	}
	var idsCut bool
	o.CollectionIDs, idsCut = boundIDs(doc.CollectionIDs)
	o.Metadata, o.MetadataCut = boundMetadata(sanitizeMap(doc.Metadata))
	o.MetadataCut = o.MetadataCut || idsCut
	if o.DocumentID == "" {
		o.DocumentID = id
	}
	if o.CollectionIDs == nil {
		o.CollectionIDs = []string{}
	}
	if o.Metadata == nil {
		o.Metadata = map[string]any{}
	}
	o.SizeBytes = max(kbsync.Size(*doc), 0)
	if doc.Summary != nil {
		o.Summary = clipJSON(Sanitize(*doc.Summary), maxSummaryBytes)
	}
	need := offset + maxChars
	text, chunkCount, exact, truncated, err := d.readChunks(ctx, id, need, madeHere(doc.Metadata))
	switch {
	case err != nil && isNotFound(err):
		o.Note = fmt.Sprintf("R2R has no chunks for this document yet (ingestion status %s).", orUnknown(doc.IngestionStatus))
		o.TotalCharsExact = true
		return o, nil
	case err != nil:
		return nil, err
	}
	o.ChunkCount = chunkCount
	full := []rune(text)
	o.TotalChars = len(full)
	o.TotalCharsExact = exact
	if offset < len(full) {
		end := min(offset+maxChars, len(full))
		o.Text = string(full[offset:end])
		o.ReturnedChars = end - offset
		if end < len(full) {
			o.NextOffset = &end
			o.HasMore = true
		}
	}
	if truncated {
		o.Note = fmt.Sprintf("The document has more than %d chunks; only the first %d were read.", maxChunks, maxChunks)
	}
	return o, nil
}

func isNotFound(err error) bool { return errors.Is(err, r2r.ErrNotFound) }

// maxChunks bounds how many chunks one read reassembles.
const maxChunks = maxChunkPages * scanPage

// readChunks reassembles a document's text (sanitized) from its chunks, in chunk order
// (R2R lists them ordered by chunk_order). It stops reading once the text
// is longer than need characters, so a page near the start of a long document does not
// fetch every chunk: exact is then false and the text is only a prefix. Pages start small
// (sized to need) and double. chunkCount is R2R's count of the document's chunks;
// truncated reports that maxChunks were read and the document has more.
//
// A document r2r-mcp chunked itself (whole) is read in pages of scanPage and put in order
// by the part numbers of its chunks: R2R 3.6.6 keeps no chunk_order for chunks it is given,
// so its listing order (and where a page ends) is arbitrary. A chunk two pages both returned
// is kept once, known by its id: two chunks may share a part number.
func (d *Deps) readChunks(ctx context.Context, id string, need int, whole bool) (text string, chunkCount int, exact, truncated bool, err error) {
	var all []r2r.Chunk
	limit := min(max(need/256+16, 50), scanPage)
	if whole {
		need, limit = math.MaxInt, scanPage
	}
	seen := map[string]bool{}
	assemble := func() string {
		sortChunks(all)
		return Sanitize(reassemble(all))
	}
	for read := 0; read < maxChunks; {
		p, err := d.Client.ListDocumentChunks(ctx, id, r2r.ListParams{Offset: read, Limit: min(limit, maxChunks-read)})
		if err != nil {
			return "", 0, false, false, err
		}
		read += len(p.Items)
		for _, c := range p.Items {
			if c.ID != "" {
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
			}
			all = append(all, c)
		}
		chunkCount = max(p.Total, read)
		if len(p.Items) == 0 || read >= p.Total {
			return assemble(), chunkCount, true, false, nil
		}
		// A whole read has no need to stop at, so it is put together once, at its end.
		if !whole {
			if text := assemble(); utf8.RuneCountInString(text) > need {
				return text, chunkCount, false, false, nil
			}
		}
		limit = min(2*limit, scanPage)
	}
	return assemble(), chunkCount, false, true, nil
}

// sortChunks puts chunks in chunk order, reading each chunk's order once (for a chunk
// r2r-mcp made, that parses its context line).
func sortChunks(chunks []r2r.Chunk) {
	type keyed struct {
		order int
		c     r2r.Chunk
	}
	ks := make([]keyed, len(chunks))
	for i, c := range chunks {
		ks[i] = keyed{chunkOrder(c), c}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return a.order - b.order })
	for i := range ks {
		chunks[i] = ks[i].c
	}
}

// chunkOrder is a chunk's place in its document: R2R's chunk_order, or the part number of a
// chunk r2r-mcp made.
func chunkOrder(c r2r.Chunk) int {
	switch v := c.Metadata[kbsync.MetaChunkOrder].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	_, part, _ := chunkContext(c.Text, c.Metadata)
	return part
}

// reassemble joins chunks in order. R2R chunks overlap (chunk_overlap, 512 characters by
// default), so the overlapping head of each chunk is dropped when it repeats the tail of
// the text so far; otherwise chunks are separated by a blank line.
func reassemble(chunks []r2r.Chunk) string {
	var b strings.Builder
	for i, c := range chunks {
		_, _, text := chunkContext(c.Text, c.Metadata)
		if i == 0 {
			b.WriteString(text)
			continue
		}
		if k := overlap(b.String(), text); k > 0 {
			b.WriteString(text[k:])
			continue
		}
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	return b.String()
}

// overlap returns the length of the longest prefix of next (at least 16 bytes, at most
// 4 KiB) that is a suffix of text; 0 when there is none.
func overlap(text, next string) int {
	const minOverlap, maxOverlap = 16, 4096
	if len(next) < minOverlap || len(text) < minOverlap {
		return 0
	}
	tail := text[max(0, len(text)-maxOverlap):]
	probe := next[:minOverlap]
	best := 0
	for i := strings.Index(tail, probe); i >= 0; {
		k := len(tail) - i
		if k <= len(next) && strings.HasPrefix(next, tail[i:]) {
			best = k
			break // the first match from the left is the longest
		}
		j := strings.Index(tail[i+1:], probe)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return best
}

func documentText(o GetDocumentOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Document %s %q (%s, %s", o.DocumentID, o.Title, orUnknown(o.DocumentType), orUnknown(o.IngestionStatus))
	if o.SizeBytes > 0 {
		fmt.Fprintf(&b, ", %s", confine.HumanBytes(o.SizeBytes))
	}
	fmt.Fprintf(&b, ", %s", plural(o.ChunkCount, "chunk"))
	if o.CreatedAt != "" {
		fmt.Fprintf(&b, ", created %s", o.CreatedAt)
	}
	b.WriteString(")\n")
	if o.Summary != "" {
		fmt.Fprintf(&b, "Summary: %s\n", snippet(o.Summary, 600))
	}
	if o.Note != "" {
		b.WriteString(o.Note + "\n")
	}
	if o.TotalChars == 0 {
		return strings.TrimRight(b.String(), "\n")
	}
	if o.ReturnedChars == 0 {
		fmt.Fprintf(&b, "Offset %d is past the end of the text (%d characters). Call again with a smaller offset.", o.Offset, o.TotalChars)
		return b.String()
	}
	of := fmt.Sprint(o.TotalChars)
	if !o.TotalCharsExact {
		of = "at least " + of
	}
	fmt.Fprintf(&b, "Characters %d–%d of %s:\n\n", o.Offset, o.Offset+o.ReturnedChars, of)
	b.WriteString(o.Text)
	switch {
	case o.NextOffset != nil && o.TotalCharsExact:
		fmt.Fprintf(&b, "\n\n[%d more chars — call again with offset=%d]", o.TotalChars-*o.NextOffset, *o.NextOffset)
	case o.NextOffset != nil:
		fmt.Fprintf(&b, "\n\n[more text follows — call again with offset=%d]", *o.NextOffset)
	}
	return b.String()
}
