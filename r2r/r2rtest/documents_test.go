package r2rtest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCreateDocument(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	admin := uuid5(AdminEmail)

	t.Run("file upload", func(t *testing.T) {
		r := c.upload("docs/guide.md", []byte("# Guide\n\nHello."), map[string]string{
			"metadata": `{"topic":"x"}`, "ingestion_mode": "fast", "run_with_orchestration": "True",
			"ingestion_config": `{"chunk_size": 512}`})
		wantStatus(t, r, http.StatusAccepted)
		res := r.results()
		want := uuid5("docs_guide.md-" + admin)
		if res["document_id"] != want || res["message"] != "Document created and ingested successfully." || res["task_id"] != nil {
			t.Fatalf("results %v, want id %s", res, want)
		}
		d := c.get("/v3/documents/" + want).results()
		if d["title"] != "guide.md" {
			t.Fatalf("title %v", d["title"])
		}
		meta := d["metadata"].(map[string]any)
		if d["document_type"] != "md" || meta["version"] != "v0" || meta["topic"] != "x" || d["size_in_bytes"] != float64(15) ||
			d["ingestion_status"] != "success" || d["extraction_status"] != "pending" || d["version"] != "v0" {
			t.Fatalf("document %v", d)
		}
		for _, k := range []string{"summary", "summary_embedding", "chunks", "total_tokens", "ingestion_attempt_number"} {
			if v, ok := d[k]; !ok || v != nil {
				t.Fatalf("%s should be present and null", k)
			}
		}
		rec := s.LastRequest("POST /v3/documents")
		if rec == nil || rec.FileName != "docs/guide.md" || string(rec.File) != "# Guide\n\nHello." ||
			rec.Form.Get("ingestion_mode") != "fast" || rec.ContentType != "multipart/form-data" {
			t.Fatalf("recorded %+v", rec)
		}
	})
	t.Run("raw text, urlencoded, with title", func(t *testing.T) {
		id := c.rawText("Some raw text.", map[string]any{"title": "Notes"})
		if id != uuid5("Some raw text.-"+admin) {
			t.Fatalf("id %s", id)
		}
		d := c.get("/v3/documents/" + id).results()
		if d["title"] != "Notes" || d["document_type"] != "txt" || d["size_in_bytes"] != float64(14) {
			t.Fatalf("%v", d)
		}
		dl := c.get("/v3/documents/" + id + "/download")
		if dl.header.Get("Content-Disposition") != "inline; filename*=UTF-8''Notes.txt" {
			t.Fatalf("disposition %q", dl.header.Get("Content-Disposition"))
		}
	})
	t.Run("raw text without title", func(t *testing.T) {
		id := c.rawText("Untitled ünïcode text", nil)
		d := c.get("/v3/documents/" + id).results()
		if d["title"] != "N/A" || d["size_in_bytes"] != float64(21) {
			t.Fatalf("%v", d)
		}
		dl := c.get("/v3/documents/" + id + "/download")
		if dl.header.Get("Content-Type") != "application/octet-stream" {
			t.Fatalf("content type %q", dl.header.Get("Content-Type"))
		}
	})
	t.Run("explicit id and metadata title renames the file", func(t *testing.T) {
		id := "3f2b0c4e-1111-4a4a-8b8b-000000000001"
		r := c.upload("a.txt", []byte("text"), map[string]string{"id": id, "metadata": `{"title":"report.pdf"}`})
		wantStatus(t, r, http.StatusAccepted)
		d := c.get("/v3/documents/" + id).results()
		if d["document_type"] != "pdf" || d["title"] != "report.pdf" {
			t.Fatalf("%v", d)
		}
	})
	t.Run("chunks", func(t *testing.T) {
		r := c.form("/v3/documents", url.Values{"chunks": {`["first chunk","second chunk"]`}})
		wantStatus(t, r, http.StatusAccepted)
		id := r.results()["document_id"].(string)
		d := c.get("/v3/documents/" + id).results()
		if d["title"] != "Ingested Chunks - "+id || d["size_in_bytes"] != float64(23) {
			t.Fatalf("%v", d)
		}
		ch := c.get("/v3/documents/" + id + "/chunks")
		if ch.body["total_entries"] != float64(2) {
			t.Fatalf("%s", ch.raw)
		}
		wantR2RError(t, c.get("/v3/documents/"+id+"/download"), 404, "File not found.")
		dup := c.form("/v3/documents", url.Values{"chunks": {`["first chunk","second chunk"]`}})
		wantInternal(t, dup, "HTTPException", "was already ingested and is not in a failed state")
	})
	t.Run("collection_ids", func(t *testing.T) {
		col := c.postJSON("/v3/collections", map[string]any{"name": "target"}).results()["id"].(string)
		unknown := uuid5("brand-new-collection")
		r := c.upload("in-col.txt", []byte("x y z"), map[string]string{"collection_ids": fmt.Sprintf(`["%s","%s"]`, col, unknown)})
		wantStatus(t, r, http.StatusAccepted)
		d := c.get("/v3/documents/" + r.results()["document_id"].(string)).results()
		if got := fmt.Sprint(d["collection_ids"]); got != fmt.Sprintf("[%s %s]", col, unknown) {
			t.Fatalf("collection_ids %s", got)
		}
		created := c.get("/v3/collections/" + unknown).results()
		if created["name"] != "My Collection" || created["description"] != "A collection started during in-col.txt ingestion" ||
			created["document_count"] != float64(1) || created["user_count"] != float64(0) {
			t.Fatalf("auto-created %v", created)
		}
		// Ingestion leaves the graph statuses alone; only the collection routes mark them.
		if got := c.get("/v3/collections/" + col).results(); got["graph_sync_status"] != "pending" || got["document_count"] != float64(1) {
			t.Fatalf("target after ingestion %v", got)
		}
	})

	errCases := []struct {
		name   string
		do     func() *resp
		status int
		msg    string
	}{
		{"nothing", func() *resp { return c.form("/v3/documents", url.Values{"metadata": {"{}"}}) }, 422,
			"Either a `file`, `raw_text`, or `chunks` must be provided."},
		{"empty raw_text counts as nothing", func() *resp { return c.form("/v3/documents", url.Values{"raw_text": {""}}) }, 422,
			"Either a `file`, `raw_text`, or `chunks` must be provided."},
		{"two inputs", func() *resp { return c.upload("x.txt", []byte("x"), map[string]string{"raw_text": "y"}) }, 422,
			"Only one of `file`, `raw_text`, or `chunks` may be provided."},
		{"no filename", func() *resp { return c.upload("", []byte("x"), nil) }, 422, "Uploaded file must have a filename."},
		{"unknown extension", func() *resp { return c.upload("a.xyz", []byte("x"), nil) }, 415, "'xyz' is not a valid DocumentType."},
		{"no extension", func() *resp { return c.upload("Makefile", []byte("x"), nil) }, 415, "'makefile' is not a valid DocumentType."},
		{"title without extension", func() *resp {
			return c.upload("a.txt", []byte("x"), map[string]string{"metadata": `{"title":"My Notes"}`})
		}, 415, "'my notes' is not a valid DocumentType."},
		{"too large", func() *resp { return c.upload("big.TXT", bytes.Repeat([]byte("a"), 2_000_001), nil) }, 413,
			"File size exceeds maximum of 2000000 bytes for extension 'TXT'."},
	}
	for _, tt := range errCases {
		t.Run(tt.name, func(t *testing.T) { wantR2RError(t, tt.do(), tt.status, tt.msg) })
	}

	valCases := []struct {
		name   string
		fields url.Values
		loc    []any
	}{
		{"metadata not JSON", url.Values{"raw_text": {"a"}, "metadata": {"{"}}, []any{"body", "metadata"}},
		{"metadata not an object", url.Values{"raw_text": {"a"}, "metadata": {"[1]"}}, []any{"body", "metadata"}},
		{"bad id", url.Values{"raw_text": {"a"}, "id": {"nope"}}, []any{"body", "id"}},
		{"collection_ids not a list", url.Values{"raw_text": {"a"}, "collection_ids": {`"x"`}}, []any{"body", "collection_ids"}},
		{"collection_ids bad uuid", url.Values{"raw_text": {"a"}, "collection_ids": {`["x"]`}}, []any{"body", "collection_ids", 0}},
		{"bad mode", url.Values{"raw_text": {"a"}, "ingestion_mode": {"turbo"}}, []any{"body", "ingestion_mode"}},
		{"bad config", url.Values{"raw_text": {"a"}, "ingestion_config": {"[]"}}, []any{"body", "ingestion_config"}},
		{"bad orchestration flag", url.Values{"raw_text": {"a"}, "run_with_orchestration": {"maybe"}}, []any{"body", "run_with_orchestration"}},
		{"chunks not strings", url.Values{"chunks": {`[1]`}}, []any{"body", "chunks", 0}},
		{"chunks not a list", url.Values{"chunks": {`{}`}}, []any{"body", "chunks"}},
	}
	for _, tt := range valCases {
		t.Run(tt.name, func(t *testing.T) { wantValidation(t, c.form("/v3/documents", tt.fields), tt.loc...) })
	}
}

func TestDuplicateDocuments(t *testing.T) {
	s := NewServer(t, Options{})
	c := newTC(t, s)
	id := c.rawText("duplicate me", nil)
	wantR2RError(t, c.form("/v3/documents", url.Values{"raw_text": {"duplicate me"}}), 409,
		"Document "+id+" already exists. Submit a DELETE request to `/documents/{document_id}` to delete this document and allow for re-ingestion.")

	// Another user may ingest the same text: the id includes the owner.
	other, _ := userClient(t, s, "other@example.com")
	if other.rawText("duplicate me", nil) == id {
		t.Fatal("ids must differ per owner")
	}

	// Deleting allows re-ingestion.
	wantStatus(t, c.del("/v3/documents/"+id), 200)
	if c.rawText("duplicate me", nil) != id {
		t.Fatal("re-ingestion changed the id")
	}

	// In progress.
	s.Configure(func(o *Options) { o.IngestDelay = time.Hour })
	r := c.form("/v3/documents", url.Values{"raw_text": {"slow one"}})
	wantStatus(t, r, http.StatusAccepted)
	slow := r.results()["document_id"].(string)
	wantR2RError(t, c.form("/v3/documents", url.Values{"raw_text": {"slow one"}}), 409,
		"Document "+slow+" is currently ingesting with status pending.")

	// Failed documents may be re-ingested.
	s.Configure(func(o *Options) { o.IngestDelay = 0 })
	bad := c.upload("bad.txt", []byte{0xff, 0xfe}, nil)
	wantStatus(t, bad, 500)
	if bad.body["error_type"] != "R2RDocumentProcessingError" {
		t.Fatalf("%s", bad.raw)
	}
	badID := uuid5("bad.txt-" + uuid5(AdminEmail))
	d := c.get("/v3/documents/" + badID).results()
	if d["ingestion_status"] != "failed" || !strings.Contains(fmt.Sprint(d["metadata"].(map[string]any)["failure"]), "can't decode byte 0xff") {
		t.Fatalf("%v", d)
	}
	wantStatus(t, c.upload("bad.txt", []byte("now valid"), nil), http.StatusAccepted)
	if c.get("/v3/documents/" + badID).results()["ingestion_status"] != "success" {
		t.Fatal("re-ingestion of a failed document did not succeed")
	}
}

// TestDocumentIDOfAnotherOwner: R2R's duplicate check only sees the caller's documents, so
// an id that belongs to someone else is taken over: owner, content and collections become
// the caller's (conformance test memories/team/create_at_other_users_id_takes_it_over); the
// new owner's next create of it is a 409, and a superuser takes it over the same way.
func TestDocumentIDOfAnotherOwner(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	a, aID := userClient(t, s, "a@example.com")
	b, bID := userClient(t, s, "b@example.com")
	id := newUUID()
	wantStatus(t, a.upload("guide.md", []byte("# A's guide"), map[string]string{"id": id}), http.StatusAccepted)

	wantStatus(t, b.upload("guide.md", []byte("# B's guide"), map[string]string{"id": id}), http.StatusAccepted)
	d := b.get("/v3/documents/" + id).results()
	if d["owner_id"] != bID || d["ingestion_status"] != "success" {
		t.Fatalf("after B's create: %v, want B's", d)
	}
	if dl := b.get("/v3/documents/" + id + "/download"); string(dl.raw) != "# B's guide" {
		t.Fatalf("content %q, want B's", dl.raw)
	}
	wantStatus(t, a.get("/v3/documents/"+id), 404) // A no longer owns it
	wantStatus(t, b.form("/v3/documents", url.Values{"raw_text": {"x"}, "id": {id}}), http.StatusConflict)

	admin := newTC(t, s)
	admin.token, _ = admin.login(AdminEmail, AdminPassword)
	wantStatus(t, admin.form("/v3/documents", url.Values{"raw_text": {"x"}, "id": {id}}), http.StatusAccepted)
	if d := admin.get("/v3/documents/" + id).results(); d["owner_id"] == bID || d["owner_id"] == aID {
		t.Fatalf("after the superuser's create: %v", d)
	}
}

// TestCollectionMembers: the owner adds a member, who may then list the members (owner
// included) but not add others; an unknown user is 404 and a second add 400.
func TestCollectionMembers(t *testing.T) {
	s := NewServer(t, Options{RequireAuth: true})
	a, _ := userClient(t, s, "a@example.com")
	b, bID := userClient(t, s, "b@example.com")
	_, cID := userClient(t, s, "c@example.com")
	col := a.postJSON("/v3/collections", map[string]any{"name": "team"}).results()["id"].(string)
	wantStatus(t, b.get("/v3/collections/"+col+"/users"), http.StatusForbidden)
	wantStatus(t, a.do("POST", "/v3/collections/"+col+"/users/"+bID, "", nil), http.StatusOK)
	wantMessage(t, a.do("POST", "/v3/collections/"+col+"/users/"+bID, "", nil), http.StatusBadRequest, "User already in collection")
	wantMessage(t, a.do("POST", "/v3/collections/"+col+"/users/"+newUUID(), "", nil), http.StatusNotFound, "User not found")
	wantMessage(t, b.do("POST", "/v3/collections/"+col+"/users/"+cID, "", nil), http.StatusForbidden, "Insufficient permissions for this action.")
	r := b.get("/v3/collections/" + col + "/users")
	wantStatus(t, r, http.StatusOK)
	var emails []string
	for _, u := range r.body["results"].([]any) {
		emails = append(emails, u.(map[string]any)["email"].(string))
	}
	if !slices.Equal(emails, []string{"a@example.com", "b@example.com"}) || r.body["total_entries"] != float64(2) {
		t.Fatalf("members %v (%s)", emails, r.raw)
	}
}

func TestIngestionStateMachine(t *testing.T) {
	// IngestDelay is never reached: StepIngestion moves the document one state at a time.
	s := NewServer(t, Options{IngestDelay: time.Hour})
	c := newTC(t, s)
	r := c.upload("steps.txt", []byte("one two three"), nil)
	wantStatus(t, r, http.StatusAccepted)
	res := r.results()
	if res["message"] != "Ingest files task queued successfully." || res["task_id"] == nil {
		t.Fatalf("%v", res)
	}
	id := res["document_id"].(string)
	status := func() string { return c.get("/v3/documents/" + id).results()["ingestion_status"].(string) }
	seen := []string{status()}
	for range 10 {
		if n := s.StepIngestion(); n != 1 {
			t.Fatalf("StepIngestion moved %d documents after %v", n, seen)
		}
		seen = append(seen, status())
		if s.Ingesting() == 0 {
			break
		}
	}
	if got := strings.Join(seen, " "); got != "pending parsing embedding storing success" {
		t.Fatalf("states %s", got)
	}
	if n := c.get("/v3/documents/" + id + "/chunks").body["total_entries"]; n != float64(1) {
		t.Fatalf("chunks %v", n)
	}
	if n := s.StepIngestion(); n != 0 {
		t.Fatalf("StepIngestion moved %d documents with nothing ingesting", n)
	}

	t.Run("chunks are not searchable before success", func(t *testing.T) {
		r := c.upload("later.txt", []byte("zebra"), nil)
		wantStatus(t, r, http.StatusAccepted)
		id := r.results()["document_id"].(string)
		for range 3 { // parsing, embedding, storing
			if n := s.StepIngestion(); n != 1 {
				t.Fatalf("moved %d", n)
			}
			hits := c.postJSON("/v3/retrieval/search", map[string]any{"query": "zebra"}).results()["chunk_search_results"].([]any)
			for _, h := range hits {
				if h.(map[string]any)["document_id"] == id {
					t.Fatalf("document is searchable while %s", c.get("/v3/documents/" + id).results()["ingestion_status"])
				}
			}
			wantR2RError(t, c.get("/v3/documents/"+id+"/chunks"), 404, "No chunks found for the given document ID.")
		}
		s.StepIngestion()
		hits := c.postJSON("/v3/retrieval/search", map[string]any{"query": "zebra"}).results()["chunk_search_results"].([]any)
		if len(hits) == 0 || hits[0].(map[string]any)["document_id"] != id {
			t.Fatalf("not searchable after success: %v", hits)
		}
	})
	t.Run("asynchronous failure", func(t *testing.T) {
		r := c.upload("broken.md", []byte("ok \xff broken"), nil)
		wantStatus(t, r, http.StatusAccepted)
		id := r.results()["document_id"].(string)
		s.StepIngestion() // parsing
		s.StepIngestion() // embedding: parsing finished, and failed to decode
		d := c.get("/v3/documents/" + id).results()
		if d["ingestion_status"] != "failed" || !strings.Contains(fmt.Sprint(d["metadata"]), "can't decode byte 0xff") || s.Ingesting() != 0 {
			t.Fatalf("ingesting=%d %v", s.Ingesting(), d)
		}
	})
	t.Run("run_with_orchestration=false is synchronous", func(t *testing.T) {
		r := c.upload("sync.txt", []byte("sync"), map[string]string{"run_with_orchestration": "false"})
		wantStatus(t, r, http.StatusAccepted)
		if r.results()["task_id"] != nil || s.Ingesting() != 0 {
			t.Fatalf("task_id %v, ingesting %d", r.results()["task_id"], s.Ingesting())
		}
		if st := c.get("/v3/documents/" + r.results()["document_id"].(string)).results()["ingestion_status"]; st != "success" {
			t.Fatalf("status %v", st)
		}
	})
	t.Run("delete during ingestion stops it", func(t *testing.T) {
		gone := c.upload("gone.txt", []byte("vanishing words"), nil).results()["document_id"].(string)
		kept := c.upload("kept.txt", []byte("staying words"), nil).results()["document_id"].(string)
		if n := s.StepIngestion(); n != 2 {
			t.Fatalf("moved %d, want both", n)
		}
		wantStatus(t, c.del("/v3/documents/"+gone), 200)
		// gone's ingestion notices at its next step and ends without moving; kept moves on.
		if n := s.StepIngestion(); n != 1 || s.Ingesting() != 1 {
			t.Fatalf("moved %d, ingesting %d; want 1 and 1", n, s.Ingesting())
		}
		for s.Ingesting() > 0 {
			s.StepIngestion()
		}
		wantStatus(t, c.get("/v3/documents/"+gone), 404)
		wantStatus(t, c.get("/v3/documents/"+gone+"/chunks"), 404)
		hits := c.postJSON("/v3/retrieval/search", map[string]any{"query": "vanishing words"}).results()["chunk_search_results"].([]any)
		for _, h := range hits {
			if h.(map[string]any)["document_id"] == gone {
				t.Fatal("deleted document's chunks were stored")
			}
		}
		if st := c.get("/v3/documents/" + kept).results()["ingestion_status"]; st != "success" {
			t.Fatalf("kept: %v", st)
		}
	})
	t.Run("re-ingestion supersedes the running ingestion", func(t *testing.T) {
		r := c.upload("again.txt", []byte("first"), nil)
		id := r.results()["document_id"].(string)
		wantStatus(t, c.del("/v3/documents/"+id), 200)
		wantStatus(t, c.upload("again.txt", []byte("second"), nil), http.StatusAccepted)
		if n := s.Ingesting(); n != 2 {
			t.Fatalf("ingesting %d", n)
		}
		if n := s.StepIngestion(); n != 1 || s.Ingesting() != 1 {
			t.Fatalf("moved %d, ingesting %d: the first ingestion must end", n, s.Ingesting())
		}
	})
}

// TestIngestionOnItsOwn covers the timer path: with a short IngestDelay the document reaches
// a final state without StepIngestion.
func TestIngestionOnItsOwn(t *testing.T) {
	s := NewServer(t, Options{IngestDelay: time.Millisecond})
	c := newTC(t, s)
	started := s.IngestionStarted()
	id := c.upload("auto.txt", []byte("automatic"), nil).results()["document_id"].(string)
	select {
	case <-started:
	default:
		t.Fatal("the upload started no background ingestion")
	}
	select {
	case <-s.IngestionEnded(id):
	case <-time.After(10 * time.Second):
		t.Fatalf("ingestion still running, status %v", c.get("/v3/documents/" + id).results()["ingestion_status"])
	}
	if st := c.get("/v3/documents/" + id).results()["ingestion_status"]; st != "success" {
		t.Fatalf("status %v", st)
	}
	if n := s.Ingesting(); n != 0 {
		t.Fatalf("ingesting %d after success", n)
	}
}

func TestBinaryDocumentsAndChunking(t *testing.T) {
	s := NewServer(t, Options{ChunkSize: 100})
	c := newTC(t, s)
	pdf := append([]byte("%PDF-1.4\x00\x01\x02"), []byte("\x00Readable words inside a binary file\x00\xff")...)
	r := c.upload("paper.pdf", pdf, nil)
	wantStatus(t, r, http.StatusAccepted)
	id := r.results()["document_id"].(string)
	ch := c.get("/v3/documents/" + id + "/chunks")
	if !strings.Contains(fmt.Sprint(ch.list()), "Readable words inside a binary file") {
		t.Fatalf("%s", ch.raw)
	}
	dl := c.get("/v3/documents/" + id + "/download")
	if !bytes.Equal(dl.raw, pdf) || dl.header.Get("Content-Type") != "application/pdf" || dl.header.Get("Content-Length") != fmt.Sprint(len(pdf)) {
		t.Fatalf("download %q %v", dl.raw, dl.header)
	}

	long := strings.Repeat("This is a sentence that keeps going. ", 12) + "\n\n" + strings.Repeat("word ", 60)
	id = c.rawText(long, nil)
	chunks := c.get("/v3/documents/" + id + "/chunks").list()
	if len(chunks) < 4 {
		t.Fatalf("expected several chunks, got %d", len(chunks))
	}
	for i, it := range chunks {
		chk := it.(map[string]any)
		if n := len([]rune(chk["text"].(string))); n > 100 {
			t.Fatalf("chunk %d has %d runes", i, n)
		}
		meta := chk["metadata"].(map[string]any)
		if meta["chunk_order"] != float64(i) || meta["document_type"] != "txt" || meta["version"] != "v0" {
			t.Fatalf("chunk %d metadata %v", i, meta)
		}
		want := uuid5(uuid5(fmt.Sprintf("%s-%d-0", id, i)) + "_v0")
		if chk["id"] != want {
			t.Fatalf("chunk id %v want %s", chk["id"], want)
		}
		if _, ok := chk["vector"]; !ok {
			t.Fatal("vector key missing")
		}
	}
	page := c.get("/v3/documents/" + id + "/chunks?offset=1&limit=2")
	if len(page.list()) != 2 || page.list()[0].(map[string]any)["metadata"].(map[string]any)["chunk_order"] != float64(1) {
		t.Fatalf("%s", page.raw)
	}
	wantR2RError(t, c.get("/v3/documents/"+id+"/chunks?offset=999"), 404, "No chunks found for the given document ID.")
}

func TestDocumentReads(t *testing.T) {
	s := NewServer(t, Options{})
	admin := newTC(t, s)
	alice, _ := userClient(t, s, "alice@example.com")
	bob, _ := userClient(t, s, "bob@example.com")

	a1 := alice.rawText("alice one", nil)
	a2 := alice.rawText("alice two", map[string]any{"k": 1})
	b1 := bob.rawText("bob one", nil)

	t.Run("list is newest first with total_entries", func(t *testing.T) {
		r := alice.get("/v3/documents")
		wantStatus(t, r, 200)
		if r.body["total_entries"] != float64(2) || r.list()[0].(map[string]any)["id"] != a2 {
			t.Fatalf("%s", r.raw)
		}
		r = alice.get("/v3/documents?limit=1&offset=1")
		if r.body["total_entries"] != float64(2) || len(r.list()) != 1 || r.list()[0].(map[string]any)["id"] != a1 {
			t.Fatalf("%s", r.raw)
		}
		r = admin.get("/v3/documents")
		if r.body["total_entries"] != float64(3) {
			t.Fatalf("superuser sees %v", r.body["total_entries"])
		}
		r = admin.get("/v3/documents?owner_only=true")
		if r.body["total_entries"] != float64(0) {
			t.Fatalf("owner_only %v", r.body["total_entries"])
		}
		r = admin.get("/v3/documents?ids=" + a1 + "&ids=" + b1)
		if r.body["total_entries"] != float64(2) {
			t.Fatalf("ids %s", r.raw)
		}
		wantInternal(t, admin.get("/v3/documents?ids=nope"), "ValueError", "badly formed")
	})
	t.Run("validation", func(t *testing.T) {
		wantValidation(t, alice.get("/v3/documents?limit=0"), "query", "limit")
		wantValidation(t, alice.get("/v3/documents?limit=1001"), "query", "limit")
		wantValidation(t, alice.get("/v3/documents?limit=x"), "query", "limit")
		wantValidation(t, alice.get("/v3/documents?offset=-1"), "query", "offset")
		wantValidation(t, alice.get("/v3/documents?owner_only=maybe"), "query", "owner_only")
		wantValidation(t, alice.get("/v3/documents/not-a-uuid"), "path", "id")
		wantR2RError(t, alice.get("/v3/documents/not-a-uuid/download"), 422, "Invalid document ID format.")
	})
	t.Run("visibility", func(t *testing.T) {
		wantR2RError(t, bob.get("/v3/documents/"+a1), 404, "Document not found.")
		wantR2RError(t, bob.get("/v3/documents/"+a1+"/chunks"), 403, "Not authorized to access this document's chunks.")
		wantR2RError(t, bob.get("/v3/documents/"+a1+"/download"), 403, "Not authorized to access this document.")
		wantR2RError(t, bob.get("/v3/documents/"+uuid5("nothing")+"/download"), 404, "Document not found.")
		wantStatus(t, admin.get("/v3/documents/"+a1), 200)

		// Sharing through a collection Bob belongs to makes it visible.
		col := alice.postJSON("/v3/collections", map[string]any{"name": "share"}).results()["id"].(string)
		wantStatus(t, alice.do("POST", "/v3/collections/"+col+"/documents/"+a1, "", nil), 200)
		s.mu.Lock()
		s.st.users[uuid5("bob@example.com")].collectionIDs = append(s.st.users[uuid5("bob@example.com")].collectionIDs, col)
		s.mu.Unlock()
		wantStatus(t, bob.get("/v3/documents/"+a1), 200)
		wantStatus(t, bob.get("/v3/documents/"+a1+"/chunks"), 200)
		dl := bob.get("/v3/documents/" + a1 + "/download")
		if string(dl.raw) != "alice one" {
			t.Fatalf("download %q", dl.raw)
		}
		if n := bob.get("/v3/documents").body["total_entries"]; n != float64(2) {
			t.Fatalf("bob lists %v", n)
		}
		if n := bob.get("/v3/documents?owner_only=true").body["total_entries"]; n != float64(1) {
			t.Fatalf("bob owner_only %v", n)
		}
		// Members cannot delete or edit.
		wantR2RError(t, bob.del("/v3/documents/"+a1), 404, "Document not found or insufficient permissions")
		wantR2RError(t, bob.do("PATCH", "/v3/documents/"+a1+"/metadata", "application/json", strings.NewReader(`[{"x":1}]`)), 404, "Document not found.")
	})
	t.Run("metadata patch and put", func(t *testing.T) {
		r := alice.do("PATCH", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`[{"a":1},{"b":"x","a":2}]`))
		wantStatus(t, r, 200)
		meta := r.results()["metadata"].(map[string]any)
		if meta["a"] != float64(2) || meta["b"] != "x" || meta["k"] != float64(1) || meta["version"] != "v0" {
			t.Fatalf("patched %v", meta)
		}
		r = alice.do("PUT", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`[{"title":"Renamed"}]`))
		wantStatus(t, r, 200)
		if fmt.Sprint(r.results()["metadata"]) != "map[title:Renamed]" || r.results()["title"] != "Renamed" {
			t.Fatalf("put %v", r.results())
		}
		wantValidation(t, alice.do("PATCH", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`{"a":1}`)), "body")
		wantValidation(t, alice.do("PATCH", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`[1]`)), "body", 0)
		wantValidation(t, alice.do("PATCH", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`[`)), "body", 0)
		wantR2RError(t, alice.do("PUT", "/v3/documents/"+uuid5("none")+"/metadata", "application/json", strings.NewReader(`[]`)), 404, "Document not found.")
		wantStatus(t, admin.do("PATCH", "/v3/documents/"+a2+"/metadata", "application/json", strings.NewReader(`[{"by":"admin"}]`)), 200)
	})
	t.Run("delete", func(t *testing.T) {
		wantR2RError(t, alice.del("/v3/documents/"+uuid5("none")), 404, "Document not found")
		r := alice.del("/v3/documents/" + a2)
		wantStatus(t, r, 200)
		if r.results()["success"] != true {
			t.Fatalf("%s", r.raw)
		}
		wantStatus(t, alice.get("/v3/documents/"+a2), 404)
		wantStatus(t, admin.del("/v3/documents/"+b1), 200)
	})
}
