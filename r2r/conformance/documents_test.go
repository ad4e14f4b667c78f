package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
)

func (s *suite) collections(t *testing.T) {
	ctx := t.Context()
	s.collAName = "conf-" + s.sfx + "-a"
	t.Run("create", func(t *testing.T) {
		a, err := s.admin.CreateCollection(ctx, s.collAName, "conformance "+s.sfx)
		if err != nil {
			t.Fatal(err)
		}
		s.collA = a.ID
		s.cleanupCollection(a.ID)
		if !isUUID(a.ID) || a.Name != s.collAName || a.Description == nil || *a.Description != "conformance "+s.sfx {
			t.Errorf("created %+v", a)
		}
		if a.OwnerID == nil || *a.OwnerID != s.adminID {
			t.Errorf("owner_id %v, want %s", a.OwnerID, s.adminID)
		}
		if a.DocumentCount != 0 || a.CreatedAt.IsZero() || a.UpdatedAt.IsZero() {
			t.Errorf("created %+v", a)
		}
		b, err := s.admin.CreateCollection(ctx, "conf-"+s.sfx+"-b", "")
		if err != nil {
			t.Fatal(err)
		}
		s.collB = b.ID
		s.cleanupCollection(b.ID)
		if b.Description != nil {
			t.Errorf("description %q, want null when none was sent", *b.Description)
		}
	})
	need(t, s.collA, s.collB)
	t.Run("create_duplicate_name_409", func(t *testing.T) {
		_, err := s.admin.CreateCollection(ctx, s.collAName, "")
		e := wantStatus(t, err, http.StatusConflict, r2r.ErrConflict)
		wantMessage(t, e, "Collection with this ID already exists")
	})
	t.Run("superuser_lists_others_collections", func(t *testing.T) {
		me, err := s.user.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.admin.ListCollections(ctx, r2r.ListParams{IDs: me.CollectionIDs})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p.Items, func(c r2r.Collection) string { return c.ID }); !sameSet(got, me.CollectionIDs) {
			t.Errorf("superuser sees %v of the user's collections %v", got, me.CollectionIDs)
		}
	})
	t.Run("get", func(t *testing.T) {
		c, err := s.admin.GetCollection(ctx, s.collA)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != s.collA || c.Name != s.collAName {
			t.Errorf("got %+v", c)
		}
	})
	t.Run("by_name", func(t *testing.T) {
		c, err := s.admin.GetCollectionByName(ctx, s.collAName)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != s.collA {
			t.Errorf("by name: id %s, want %s", c.ID, s.collA)
		}
	})
	t.Run("by_name_unknown_404", func(t *testing.T) {
		_, err := s.admin.GetCollectionByName(ctx, "conf-"+s.sfx+"-missing")
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("by_name_of_other_owner_404", func(t *testing.T) {
		_, err := s.user.GetCollectionByName(ctx, s.collAName)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("list_total", func(t *testing.T) {
		p, err := s.admin.ListCollections(ctx, r2r.ListParams{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 || p.Total < 3 {
			t.Errorf("limit 1: %d items, total %d; want 1 item of at least 3", len(p.Items), p.Total)
		}
	})
	t.Run("list_filter_ids", func(t *testing.T) {
		p, err := s.admin.ListCollections(ctx, r2r.ListParams{IDs: []string{s.collA, s.collB}})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(p.Items, func(c r2r.Collection) string { return c.ID })
		if !sameSet(got, []string{s.collA, s.collB}) || p.Total != 2 {
			t.Errorf("ids filter: %v total %d", got, p.Total)
		}
	})
	t.Run("list_newest_first", func(t *testing.T) {
		p, err := s.admin.ListCollections(ctx, r2r.ListParams{IDs: []string{s.collA, s.collB}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p.Items, func(c r2r.Collection) string { return c.ID }); !slices.Equal(got, []string{s.collB, s.collA}) {
			t.Errorf("order %v, want the newer %s first", got, s.collB)
		}
	})
	t.Run("list_excludes_others_collections", func(t *testing.T) {
		p, err := s.user.ListCollections(ctx, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(p.Items, func(c r2r.Collection) bool { return c.ID == s.collA }) {
			t.Error("a non-member lists the superuser's collection")
		}
		if p.Total < 1 {
			t.Errorf("total %d: a user has a default collection", p.Total)
		}
	})
	t.Run("get_unknown_404", func(t *testing.T) {
		_, err := s.admin.GetCollection(ctx, uuid.NewString())
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("get_other_users_403", func(t *testing.T) {
		_, err := s.user.GetCollection(ctx, s.collA)
		wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden)
	})
	t.Run("same_name_other_owner_allowed", func(t *testing.T) {
		c, err := s.user.CreateCollection(ctx, s.collAName, "")
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupCollection(c.ID)
		if c.ID == s.collA {
			t.Error("two owners' collections of one name share an id")
		}
		got, err := s.user.GetCollectionByName(ctx, s.collAName)
		if err != nil || got.ID != c.ID {
			t.Errorf("by name as its owner: %v %v", got, err)
		}
	})
}

func (s *suite) cleanupCollection(id string) {
	s.top.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_ = s.admin.DeleteCollection(ctx, id)
	})
}

func (s *suite) cleanupDocument(id string) {
	s.top.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_ = s.admin.DeleteDocument(ctx, id)
	})
}

// Texts share the words of the queries of the search and RAG checks, so that every
// retrieval mode finds them.
func (s *suite) texts() {
	s.textBody = "Pelican migration notes " + s.sfx + ". Brown pelicans migrate along the coast every autumn.\n\n" +
		"The colony counts are recorded in the field journal."
	s.fileName = "conf-" + s.sfx + "-guide.md"
	s.fileBody = []byte("# Pelican guide " + s.sfx + "\n\nPelican migration follows the warm currents. " +
		"Juvenile pelicans leave the nesting islands last.\n")
	s.derivedName = "conf-" + s.sfx + "-derived.txt"
}

// fileTitle is the title r2r-mcp would give the file: its path in the project.
func (s *suite) fileTitle() string { return "docs/" + s.fileName }

func (s *suite) documents(t *testing.T) {
	ctx := t.Context()
	need(t, s.collA)
	s.texts()
	t.Run("create_text_with_id_metadata_mode", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{
			RawText:       s.textBody,
			ID:            id,
			Metadata:      map[string]any{"title": "conf-" + s.sfx + "-notes", "kind": "a", "suite": s.sfx},
			CollectionIDs: []string{s.collA},
			IngestionMode: "fast",
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.DocumentID != id || res.Message == "" {
			t.Errorf("ingestion response %+v, want document_id %s and a message", res, id)
		}
		s.docText = id
	})
	t.Run("create_file_with_id_metadata_mode", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		// collection_ids both as the form field and in the metadata (r2r-mcp sent both
		// once; see create_answer_means_ingested for what it sends now).
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{
			FileName: s.fileName,
			File:     s.fileBody,
			ID:       id,
			Metadata: map[string]any{"title": s.fileTitle(), "kind": "b", "suite": s.sfx,
				"collection_ids": []string{s.collA}},
			CollectionIDs: []string{s.collA},
			IngestionMode: "fast",
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.DocumentID != id {
			t.Errorf("document_id %s, want %s", res.DocumentID, id)
		}
		s.docFile = id
	})
	t.Run("create_file_derived_id", func(t *testing.T) {
		// R2R derives the id from the file name and the owner: uuid5(DNS, "<name>-<user id>").
		want := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(s.derivedName+"-"+s.adminID)).String()
		s.cleanupDocument(want)
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{
			FileName: s.derivedName,
			File:     []byte("Pelican derived notes " + s.sfx + ". Pelicans rest on sandbars.\n"),
			Metadata: map[string]any{"kind": "d", "suite": s.sfx},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.DocumentID != want {
			t.Errorf("document_id %s, want %s", res.DocumentID, want)
		}
		s.docDerived = res.DocumentID
	})
	t.Run("create_raw_202_envelope", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("raw_text", "Pelican outsider notes "+s.sfx+". Pelicans also visit inland lakes.")
		_ = w.WriteField("id", id)
		_ = w.WriteField("metadata", fmt.Sprintf(`{"kind":"c","suite":%q}`, s.sfx))
		_ = w.Close()
		st, _, body := s.raw(t, http.MethodPost, "/v3/documents", s.admin.Credentials(), w.FormDataContentType(), buf.Bytes())
		if st != http.StatusAccepted {
			t.Fatalf("status %d, want 202: %s", st, body)
		}
		res, _ := object(t, body)["results"].(map[string]any)
		if res["document_id"] != id || res["message"] == "" {
			t.Errorf("results %v", res)
		}
		if _, ok := res["task_id"]; !ok {
			t.Errorf("results %v: task_id is always present (null without an orchestrator)", res)
		}
		s.docOther = id
	})
	t.Run("create_answer_means_ingested", func(t *testing.T) {
		// As r2r-mcp sends a file: collection_ids once, as the form field. Without an
		// orchestrator R2R answers only once the ingestion has ended, and says so: the
		// document has succeeded and is in the collection, counted, when the answer arrives.
		c, err := s.admin.CreateCollection(ctx, "conf-"+s.sfx+"-answer", "")
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupCollection(c.ID)
		id := uuid.NewString()
		s.cleanupDocument(id)
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: "answer.md", File: []byte("# Answer\n\nPelicans nap at noon " + s.sfx + ".\n"),
			ID: id, Metadata: map[string]any{"title": "docs/answer.md"}, CollectionIDs: []string{c.ID}, IngestionMode: "fast"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Ingested() {
			t.Fatalf("answer %+v, want %q without a task id", res, r2r.IngestedMessage)
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.IngestionStatus != r2r.IngestionSuccess || !slices.Equal(d.CollectionIDs, []string{c.ID}) {
			t.Errorf("right after the answer: status %q, collection_ids %v; want success in %s", d.IngestionStatus, d.CollectionIDs, c.ID)
		}
		if got, err := s.admin.GetCollection(ctx, c.ID); err != nil || got.DocumentCount != 1 {
			t.Errorf("collection after the answer: %+v, %v; want document_count 1", got, err)
		}
	})
	t.Run("raw_text_over_the_form_field_cap", func(t *testing.T) {
		// R2R (Starlette) refuses a form field over 1 MiB before anything else, but takes
		// the same text as a .txt file part: r2r.CreateDocument sends it so.
		big := strings.Repeat("Pelicans glide low over the water. ", r2r.MaxFormField/35+1000) + "The albatross " + s.sfx + " ends it.\n"
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.WriteField("raw_text", big)
		_ = w.Close()
		st, _, body := s.raw(t, http.MethodPost, "/v3/documents", s.admin.Credentials(), w.FormDataContentType(), buf.Bytes())
		if st != http.StatusBadRequest || !strings.Contains(string(body), "Part exceeded maximum size of 1024KB.") {
			t.Errorf("raw_text of %d bytes: %d %s; want 400 Part exceeded maximum size of 1024KB.", len(big), st, body)
		}
		id := uuid.NewString()
		s.cleanupDocument(id)
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: big, ID: id,
			Metadata: map[string]any{"title": "src/big.go"}, IngestionMode: "fast"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Ingested() {
			s.waitIngested(t, id)
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.IngestionStatus != r2r.IngestionSuccess || d.DocumentType != "txt" || d.Title == nil || *d.Title != "src/big.go.txt" ||
			d.SizeInBytes == nil || *d.SizeInBytes != int64(len(big)) {
			t.Errorf("document %+v; want a txt document titled src/big.go.txt of %d bytes", d, len(big))
		}
	})
	need(t, s.docText, s.docFile, s.docOther, s.docDerived)
	all := []string{s.docText, s.docFile, s.docOther, s.docDerived}
	t.Run("ingestion_reaches_success", func(t *testing.T) {
		for _, id := range all {
			s.waitIngested(t, id)
		}
	})
	t.Run("download_raw_text", func(t *testing.T) {
		dl, err := s.admin.DownloadDocument(ctx, s.docText)
		if err != nil {
			t.Fatal(err)
		}
		if string(dl.Body) != s.textBody {
			t.Errorf("body %q, want the raw text", dl.Body)
		}
	})
	t.Run("duplicate_id_409", func(t *testing.T) {
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: "again", ID: s.docText})
		e := wantStatus(t, err, http.StatusConflict, r2r.ErrConflict)
		if !strings.Contains(e.Message, s.docText) {
			t.Errorf("message %q does not name the document", e.Message)
		}
	})
	t.Run("duplicate_409_still_replaces_stored_file", func(t *testing.T) {
		// R2R stores the upload before it finds the duplicate: the refused bytes become what
		// download returns, while the chunks stay those of the first upload.
		dl, err := s.admin.DownloadDocument(ctx, s.docText)
		if err != nil {
			t.Fatal(err)
		}
		if string(dl.Body) != "again" {
			t.Errorf("download after a refused duplicate: %q", dl.Body)
		}
		p, err := s.admin.ListDocumentChunks(ctx, s.docText, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 || !strings.Contains(p.Items[0].Text, "Pelican migration notes") {
			t.Errorf("chunks after a refused duplicate: %+v", p.Items)
		}
	})
	t.Run("get_text_document", func(t *testing.T) {
		d, err := s.admin.GetDocument(ctx, s.docText)
		if err != nil {
			t.Fatal(err)
		}
		if d.ID != s.docText || d.OwnerID != s.adminID || d.IngestionStatus != r2r.IngestionSuccess {
			t.Errorf("got %+v", d)
		}
		if !slices.Contains(d.CollectionIDs, s.collA) {
			t.Errorf("collection_ids %v, want %s", d.CollectionIDs, s.collA)
		}
		if d.Metadata["kind"] != "a" || d.Metadata["suite"] != s.sfx {
			t.Errorf("metadata %v", d.Metadata)
		}
		if d.Title == nil || *d.Title != "conf-"+s.sfx+"-notes" {
			t.Errorf("title %v, want the metadata title", d.Title)
		}
		if d.DocumentType != "txt" {
			t.Errorf("document_type %q, want txt", d.DocumentType)
		}
	})
	t.Run("get_file_document", func(t *testing.T) {
		d, err := s.admin.GetDocument(ctx, s.docFile)
		if err != nil {
			t.Fatal(err)
		}
		if d.DocumentType != "md" || d.Title == nil || *d.Title != s.fileTitle() {
			t.Errorf("document_type %q title %v, want md and the metadata title %q", d.DocumentType, d.Title, s.fileTitle())
		}
		if d.SizeInBytes == nil || *d.SizeInBytes != int64(len(s.fileBody)) {
			t.Errorf("size_in_bytes %v, want %d", d.SizeInBytes, len(s.fileBody))
		}
		if !slices.Contains(d.CollectionIDs, s.collA) {
			t.Errorf("collection_ids %v, want %s", d.CollectionIDs, s.collA)
		}
	})
	t.Run("collection_counts_and_sync_status", func(t *testing.T) {
		c, err := s.admin.GetCollection(ctx, s.collA)
		if err != nil {
			t.Fatal(err)
		}
		// Two documents are in it, but document_count is a counter that only the form field
		// raises: the document that also named the collection in metadata.collection_ids was
		// filed there before the count (see collection_documents/document_count_is_a_counter).
		// Ingestion leaves the graph statuses pending.
		if c.DocumentCount != 1 || c.UserCount != 1 || c.GraphSyncStatus != "pending" || c.GraphClusterStatus != "pending" {
			t.Errorf("collection after ingestion: %+v, want document_count 1, 1 user, graph statuses pending", c)
		}
	})
	t.Run("collection_ids_exact", func(t *testing.T) {
		me, err := s.admin.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			id   string
			want []string
		}{
			{s.docText, []string{s.collA}},       // the form field alone
			{s.docFile, []string{s.collA}},       // the form field and metadata.collection_ids
			{s.docDerived, me.CollectionIDs[:1]}, // none: the owner's default collection
		} {
			d, err := s.admin.GetDocument(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(d.CollectionIDs, tc.want) {
				t.Errorf("document %s: collection_ids %v, want %v", tc.id, d.CollectionIDs, tc.want)
			}
		}
	})
	t.Run("metadata_exact", func(t *testing.T) {
		for _, tc := range []struct {
			id   string
			want []string
		}{
			{s.docText, []string{"kind", "suite", "title", "version"}},
			{s.docFile, []string{"collection_ids", "kind", "suite", "title", "version"}},
		} {
			d, err := s.admin.GetDocument(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			keys := make([]string, 0, len(d.Metadata))
			for k := range d.Metadata {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if !slices.Equal(keys, tc.want) || d.Metadata["version"] != "v0" {
				t.Errorf("document %s: metadata %v, want the keys %v and version v0", tc.id, d.Metadata, tc.want)
			}
		}
	})
	t.Run("get_untitled_file_document", func(t *testing.T) {
		d, err := s.admin.GetDocument(ctx, s.docDerived)
		if err != nil {
			t.Fatal(err)
		}
		if d.DocumentType != "txt" || d.Title == nil || *d.Title != s.derivedName {
			t.Errorf("document_type %q title %v, want txt and the file name", d.DocumentType, d.Title)
		}
	})
	t.Run("timestamps", func(t *testing.T) {
		d, err := s.admin.GetDocument(ctx, s.docText)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		if d.CreatedAt.Before(now.Add(-24*time.Hour)) || d.CreatedAt.After(now.Add(24*time.Hour)) {
			t.Errorf("created_at %v is not about now (%v)", d.CreatedAt, now)
		}
		if d.UpdatedAt.Before(d.CreatedAt.Time) {
			t.Errorf("updated_at %v before created_at %v", d.UpdatedAt, d.CreatedAt)
		}
		st, _, body := s.raw(t, http.MethodGet, "/v3/documents/"+s.docText, s.admin.Credentials(), "", nil)
		if st != http.StatusOK {
			t.Fatalf("status %d", st)
		}
		res, _ := object(t, body)["results"].(map[string]any)
		rfc := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
		for _, k := range []string{"created_at", "updated_at"} {
			if v, _ := res[k].(string); !rfc.MatchString(v) {
				t.Errorf("document %s = %q, want RFC 3339 in UTC with Z", k, res[k])
			}
		}
		// The same form on collections and users.
		for _, path := range []string{"/v3/collections/" + s.collA, "/v3/users/me"} {
			_, _, body := s.raw(t, http.MethodGet, path, s.admin.Credentials(), "", nil)
			res, _ := object(t, body)["results"].(map[string]any)
			for _, k := range []string{"created_at", "updated_at"} {
				if v, _ := res[k].(string); !rfc.MatchString(v) {
					t.Errorf("%s: %s = %q, want RFC 3339 in UTC with Z", path, k, res[k])
				}
			}
		}
	})
	t.Run("list_filter_ids", func(t *testing.T) {
		p, err := s.admin.ListDocuments(ctx, r2r.ListParams{IDs: all})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(p.Items, func(d r2r.Document) string { return d.ID })
		if !sameSet(got, all) || p.Total != len(all) {
			t.Errorf("ids filter: %v total %d, want %v", got, p.Total, all)
		}
	})
	t.Run("list_pagination_total", func(t *testing.T) {
		var seen []string
		for off := 0; off <= len(all); off += 2 {
			p, err := s.admin.ListDocuments(ctx, r2r.ListParams{IDs: all, Offset: off, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			// The total counts the matches before offset and limit, but an empty page has
			// total 0: R2R counts with a window function over the page's rows.
			wantTotal := len(all)
			if off >= len(all) {
				wantTotal = 0
			}
			if p.Total != wantTotal {
				t.Errorf("offset %d: total %d, want %d", off, p.Total, wantTotal)
			}
			if want := min(2, len(all)-off); len(p.Items) != want {
				t.Errorf("offset %d limit 2: %d items, want %d", off, len(p.Items), want)
			}
			seen = append(seen, ids(p.Items, func(d r2r.Document) string { return d.ID })...)
		}
		if !sameSet(seen, all) || len(seen) != len(all) {
			t.Errorf("pages %v, want each of %v once", seen, all)
		}
	})
	t.Run("list_newest_first", func(t *testing.T) {
		p, err := s.admin.ListDocuments(ctx, r2r.ListParams{IDs: all})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(p.Items); i++ {
			if p.Items[i].CreatedAt.After(p.Items[i-1].CreatedAt.Time) {
				t.Errorf("item %d (%v) is newer than item %d (%v)", i, p.Items[i].CreatedAt, i-1, p.Items[i-1].CreatedAt)
			}
		}
	})
	t.Run("list_excludes_others_documents", func(t *testing.T) {
		p, err := s.user.ListDocuments(ctx, r2r.ListParams{IDs: all})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 0 || p.Total != 0 {
			t.Errorf("a non-owner lists %d of the superuser's documents (total %d)", len(p.Items), p.Total)
		}
	})
	// kbsync takes owner_id as proof of who wrote a document: R2R sets it to the uploading
	// account, whatever the request's metadata claims.
	t.Run("owner_is_the_uploader_whatever_the_metadata", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		if _, err := s.user.CreateDocument(ctx, r2r.DocumentCreate{RawText: "Claims another owner " + s.sfx + ".", ID: id,
			Metadata: map[string]any{"owner_id": s.adminID, "source": "r2r-mcp"}, IngestionMode: "fast"}); err != nil {
			t.Fatal(err)
		}
		s.waitIngestedAs(t, s.user, id)
		// Removed at once: later checks count the regular user's documents.
		defer func() { _ = s.admin.DeleteDocument(ctx, id) }()
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.OwnerID != s.userID {
			t.Errorf("owner_id %s, want the uploader %s (the metadata claimed %s)", d.OwnerID, s.userID, s.adminID)
		}
	})
	t.Run("chunks", func(t *testing.T) {
		p, err := s.admin.ListDocumentChunks(ctx, s.docFile, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 || p.Total != len(p.Items) {
			t.Fatalf("%d chunks, total %d", len(p.Items), p.Total)
		}
		var text strings.Builder
		for _, c := range p.Items {
			if !isUUID(c.ID) || c.DocumentID != s.docFile || c.OwnerID != s.adminID || c.Text == "" {
				t.Errorf("chunk %+v", c)
			}
			if !slices.Contains(c.CollectionIDs, s.collA) {
				t.Errorf("chunk collection_ids %v, want %s", c.CollectionIDs, s.collA)
			}
			if c.Metadata["kind"] != "b" {
				t.Errorf("chunk metadata %v: the document's metadata is copied to its chunks", c.Metadata)
			}
			text.WriteString(c.Text)
		}
		if !strings.Contains(text.String(), "Juvenile pelicans leave the nesting islands last.") {
			t.Errorf("chunks %q do not hold the file's text", text.String())
		}
	})
	t.Run("chunk_ids_are_deterministic", func(t *testing.T) {
		// uuid5(DNS, uuid5(DNS, "<document id>-<chunk order>-0") + "_v0"): the same
		// document id and text give the same chunk ids on every ingestion.
		p, err := s.admin.ListDocumentChunks(ctx, s.docText, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range p.Items {
			inner := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(fmt.Sprintf("%s-%d-0", s.docText, i))).String()
			if want := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(inner+"_v0")).String(); c.ID != want {
				t.Errorf("chunk %d id %s, want %s", i, c.ID, want)
			}
			if c.Metadata["chunk_order"] != float64(i) {
				t.Errorf("chunk %d chunk_order %v", i, c.Metadata["chunk_order"])
			}
		}
	})
	t.Run("chunks_pagination", func(t *testing.T) {
		p, err := s.admin.ListDocumentChunks(ctx, s.docText, r2r.ListParams{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 || p.Total < 1 {
			t.Errorf("limit 1: %d chunks, total %d", len(p.Items), p.Total)
		}
	})
	t.Run("chunks_offset_past_end_404", func(t *testing.T) {
		// R2R answers an empty page of chunks with 404, whatever the offset.
		p, err := s.admin.ListDocumentChunks(ctx, s.docText, r2r.ListParams{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.admin.ListDocumentChunks(ctx, s.docText, r2r.ListParams{Offset: p.Total, Limit: 1})
		e := wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		wantMessage(t, e, "No chunks found for the given document ID.")
	})
	t.Run("download_file", func(t *testing.T) {
		dl, err := s.admin.DownloadDocument(ctx, s.docFile)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dl.Body, s.fileBody) {
			t.Errorf("body %q, want the uploaded bytes", dl.Body)
		}
		// R2R stores the upload under the metadata title when there is one.
		if dl.FileName != s.fileTitle() {
			t.Errorf("file name %q, want the metadata title %q", dl.FileName, s.fileTitle())
		}
		if dl.ContentType == "" {
			t.Error("no Content-Type")
		}
	})
	t.Run("patch_metadata", func(t *testing.T) {
		d, err := s.admin.PatchDocumentMetadata(ctx, s.docOther, []map[string]any{{"extra": s.sfx}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Metadata["extra"] != s.sfx || d.Metadata["kind"] != "c" {
			t.Errorf("patched metadata %v, want extra added and kind kept", d.Metadata)
		}
		got, err := s.admin.GetDocument(ctx, s.docOther)
		if err != nil {
			t.Fatal(err)
		}
		if got.Metadata["extra"] != s.sfx {
			t.Errorf("metadata after the patch %v", got.Metadata)
		}
	})
	t.Run("get_unknown_404", func(t *testing.T) {
		_, err := s.admin.GetDocument(ctx, uuid.NewString())
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("get_malformed_id_422", func(t *testing.T) {
		_, err := s.admin.GetDocument(ctx, "not-a-uuid")
		e := wantStatus(t, err, http.StatusUnprocessableEntity, nil)
		if !strings.Contains(e.Message, "path.id") {
			t.Errorf("message %q does not name path.id", e.Message)
		}
	})
	t.Run("get_other_users_404", func(t *testing.T) {
		_, err := s.user.GetDocument(ctx, s.docText)
		e := wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		wantMessage(t, e, "Document not found.")
	})
	t.Run("chunks_other_users_403", func(t *testing.T) {
		_, err := s.user.ListDocumentChunks(ctx, s.docText, r2r.ListParams{})
		wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden)
	})
}

// knownStatuses are the ingestion statuses R2R reports.
var knownStatuses = []string{r2r.IngestionPending, r2r.IngestionParsing, r2r.IngestionExtract,
	r2r.IngestionChunking, r2r.IngestionEmbedding, r2r.IngestionAugment, r2r.IngestionStoring,
	r2r.IngestionEnriching, r2r.IngestionFailed, r2r.IngestionSuccess}

// waitIngested polls a document of the superuser until its ingestion ends, within the
// target's bound.
func (s *suite) waitIngested(t *testing.T, id string) {
	t.Helper()
	s.waitIngestedAs(t, s.admin, id)
}

func (s *suite) waitIngestedAs(t *testing.T, c *r2r.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), s.tg.ingestWait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		d, err := c.GetDocument(ctx, id)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("document %s: not ingested within %v", id, s.tg.ingestWait)
			}
			t.Fatalf("document %s: %v", id, err)
		}
		if !slices.Contains(knownStatuses, d.IngestionStatus) {
			t.Fatalf("document %s: unknown ingestion_status %q", id, d.IngestionStatus)
		}
		switch d.IngestionStatus {
		case r2r.IngestionSuccess:
			return
		case r2r.IngestionFailed:
			t.Fatalf("document %s: ingestion failed: %v", id, d.Metadata["failure"])
		}
		select {
		case <-ctx.Done():
			t.Fatalf("document %s: still %s after %v", id, d.IngestionStatus, s.tg.ingestWait)
		case <-tick.C:
		}
	}
}

func (s *suite) collectionDocuments(t *testing.T) {
	ctx := t.Context()
	need(t, s.collB, s.docOther)
	t.Run("add", func(t *testing.T) {
		if err := s.admin.AddDocumentToCollection(ctx, s.collB, s.docOther); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("add_again_409", func(t *testing.T) {
		err := s.admin.AddDocumentToCollection(ctx, s.collB, s.docOther)
		wantStatus(t, err, http.StatusConflict, r2r.ErrConflict)
	})
	t.Run("list", func(t *testing.T) {
		p, err := s.admin.ListCollectionDocuments(ctx, s.collB, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(p.Items, func(d r2r.Document) string { return d.ID })
		if !slices.Equal(got, []string{s.docOther}) || p.Total != 1 {
			t.Errorf("collection documents %v total %d, want [%s]", got, p.Total, s.docOther)
		}
	})
	t.Run("document_lists_collection", func(t *testing.T) {
		d, err := s.admin.GetDocument(ctx, s.docOther)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(d.CollectionIDs, s.collB) {
			t.Errorf("collection_ids %v, want %s", d.CollectionIDs, s.collB)
		}
	})
	t.Run("collection_counts_document", func(t *testing.T) {
		c, err := s.admin.GetCollection(ctx, s.collB)
		if err != nil {
			t.Fatal(err)
		}
		if c.DocumentCount != 1 {
			t.Errorf("document_count %d, want 1", c.DocumentCount)
		}
	})
	t.Run("list_other_users_403", func(t *testing.T) {
		_, err := s.user.ListCollectionDocuments(ctx, s.collB, r2r.ListParams{})
		wantStatus(t, err, http.StatusForbidden, r2r.ErrForbidden)
	})
	t.Run("add_unknown_document_404", func(t *testing.T) {
		err := s.admin.AddDocumentToCollection(ctx, s.collB, uuid.NewString())
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("remove", func(t *testing.T) {
		if err := s.admin.RemoveDocumentFromCollection(ctx, s.collB, s.docOther); err != nil {
			t.Fatal(err)
		}
		p, err := s.admin.ListCollectionDocuments(ctx, s.collB, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 0 || p.Total != 0 {
			t.Errorf("after removal: %d documents, total %d", len(p.Items), p.Total)
		}
		if _, err := s.admin.GetDocument(ctx, s.docOther); err != nil {
			t.Errorf("the document itself must stay: %v", err)
		}
	})
	t.Run("document_count_is_a_counter", func(t *testing.T) {
		c, err := s.admin.CreateCollection(ctx, "conf-"+s.sfx+"-count", "")
		if err != nil {
			t.Fatal(err)
		}
		s.cleanupCollection(c.ID)
		count := func(t *testing.T) int {
			t.Helper()
			got, err := s.admin.GetCollection(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.DocumentCount
		}
		// Named only in metadata.collection_ids: filed there, plus in the default
		// collection, without raising the count.
		id := uuid.NewString()
		s.cleanupDocument(id)
		if _, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: "Pelican counter notes " + s.sfx + ".", ID: id,
			Metadata: map[string]any{"collection_ids": []string{c.ID}}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngested(t, id)
		me, err := s.admin.Me(ctx)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(d.CollectionIDs, []string{c.ID, me.CollectionIDs[0]}) {
			t.Errorf("collection_ids %v, want [%s %s]", d.CollectionIDs, c.ID, me.CollectionIDs[0])
		}
		p, err := s.admin.ListCollectionDocuments(ctx, c.ID, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t); n != 0 || p.Total != 1 {
			t.Errorf("document_count %d with %d documents listed, want 0 and 1", n, p.Total)
		}
		// Deleting the document lowers the count anyway.
		if err := s.admin.DeleteDocument(ctx, id); err != nil {
			t.Fatal(err)
		}
		if n := count(t); n != -1 {
			t.Errorf("document_count %d after the deletion, want -1", n)
		}
	})
	t.Run("remove_again_404", func(t *testing.T) {
		err := s.admin.RemoveDocumentFromCollection(ctx, s.collB, s.docOther)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
}

func (s *suite) deletes(t *testing.T) {
	ctx := t.Context()
	need(t, s.docDerived, s.collB)
	t.Run("delete_document", func(t *testing.T) {
		if err := s.admin.DeleteDocument(ctx, s.docDerived); err != nil {
			t.Fatal(err)
		}
		_, err := s.admin.GetDocument(ctx, s.docDerived)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("delete_document_again_404", func(t *testing.T) {
		err := s.admin.DeleteDocument(ctx, s.docDerived)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("delete_other_users_document_404", func(t *testing.T) {
		need(t, s.docText)
		err := s.user.DeleteDocument(ctx, s.docText)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
	t.Run("delete_collection", func(t *testing.T) {
		if err := s.admin.DeleteCollection(ctx, s.collB); err != nil {
			t.Fatal(err)
		}
		_, err := s.admin.GetCollection(ctx, s.collB)
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
	})
}

func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, id(it))
	}
	return out
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

// ingestionOutcomes checks how R2R answers uploads it cannot or need not parse.
func (s *suite) ingestionOutcomes(t *testing.T) {
	ctx := t.Context()
	derived := func(name string) string {
		id := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(name+"-"+s.adminID)).String()
		s.cleanupDocument(id)
		return id
	}
	t.Run("invalid_utf8_500_and_failed", func(t *testing.T) {
		name := "conf-" + s.sfx + "-bad.txt"
		id := derived(name)
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name,
			File: []byte("ok text \xff\xfe broken\n"), Metadata: map[string]any{"suite": s.sfx}})
		const msg = "Error parsing document: 'utf-8' codec can't decode byte 0xff in position 8: invalid start byte"
		e := wantStatus(t, err, http.StatusInternalServerError, nil)
		if e.Message != msg || e.ErrorType != "R2RDocumentProcessingError" {
			t.Errorf("error %q (%s), want %q (R2RDocumentProcessingError)", e.Message, e.ErrorType, msg)
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.IngestionStatus != r2r.IngestionFailed || d.Metadata["failure"] != msg {
			t.Errorf("status %q failure %v, want failed with the parse error", d.IngestionStatus, d.Metadata["failure"])
		}
		if len(d.CollectionIDs) != 0 {
			t.Errorf("collection_ids %v: a document that failed to parse is in no collection", d.CollectionIDs)
		}
	})
	t.Run("file_too_large_413", func(t *testing.T) {
		// R2R's default limit for .txt is 2,000,000 bytes (r2r-mcp's ingest checks the same
		// limits before uploading).
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: "conf-" + s.sfx + "-big.txt",
			File: bytes.Repeat([]byte("a"), 2_000_001)})
		e := wantStatus(t, err, http.StatusRequestEntityTooLarge, nil)
		wantMessage(t, e, "File size exceeds maximum of 2000000 bytes for extension 'txt'.")
	})
	t.Run("unsupported_type_415", func(t *testing.T) {
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: "conf-" + s.sfx + ".xyz", File: []byte("x")})
		e := wantStatus(t, err, http.StatusUnsupportedMediaType, nil)
		wantMessage(t, e, "'xyz' is not a valid DocumentType.")
	})
	t.Run("create_chunks", func(t *testing.T) {
		// Pre-made chunks are stored as sent: no parsing, no splitting; the document is a txt
		// document with the metadata given.
		id := uuid.NewString()
		s.cleanupDocument(id)
		chunks := []string{"§ docs/conf-" + s.sfx + ".md › Pelicans\nPelican chunk one " + s.sfx + ". Pelicans dive for fish.",
			"§ docs/conf-" + s.sfx + ".md › Tides\nPelican chunk two " + s.sfx + ".\n\nTides turn twice a day."}
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{Chunks: chunks, ID: id,
			Metadata: map[string]any{"title": "docs/conf-" + s.sfx + ".md", "suite": s.sfx}, CollectionIDs: []string{s.collA}})
		if err != nil {
			t.Fatal(err)
		}
		if res.DocumentID != id {
			t.Errorf("document_id %s, want %s", res.DocumentID, id)
		}
		s.waitIngested(t, id)
		// The same id again: R2R's chunk workflow refuses it with a 409 it wraps in a 500,
		// which the client reports as a conflict.
		_, err = s.admin.CreateDocument(ctx, r2r.DocumentCreate{Chunks: chunks, ID: id,
			Metadata: map[string]any{"title": "docs/conf-" + s.sfx + ".md", "suite": s.sfx}, CollectionIDs: []string{s.collA}})
		e := wantStatus(t, err, http.StatusInternalServerError, r2r.ErrConflict)
		if !strings.Contains(e.Message, "was already ingested and is not in a failed state") {
			t.Errorf("duplicate chunks: %q", e.Message)
		}
		p, err := s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p.Items, func(c r2r.Chunk) string { return c.Text }); !slices.Equal(got, chunks) {
			t.Errorf("chunks %q, want %q", got, chunks)
		}
		// No chunk_order: R2R lists them ORDER BY a key they lack, so their order is not
		// guaranteed (r2r-mcp numbers its chunks in their context line).
		for _, c := range p.Items {
			if v, ok := c.Metadata["chunk_order"]; ok {
				t.Errorf("pre-made chunk has chunk_order %v", v)
			}
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.DocumentType != "txt" || d.Title == nil || *d.Title != "docs/conf-"+s.sfx+".md" || !slices.Contains(d.CollectionIDs, s.collA) {
			t.Errorf("document type %q, title %v, collections %v", d.DocumentType, d.Title, d.CollectionIDs)
		}
		hits := s.searchDocs(t, s.admin, r2r.ScopedFilters(s.collA, map[string]any{"document_id": map[string]any{"$eq": id}}), 10)
		// Search shows them behind R2R's title header, as it does parsed chunks.
		header := "Document Title: docs/conf-" + s.sfx + ".md\n\nText: "
		if len(hits) != 2 || hits[0].Text != header+chunks[0] || hits[1].Text != header+chunks[1] {
			t.Errorf("search hits %+v, want the two chunks as sent behind %q", hits, header)
		}
		// Gone before the searches that count collection A's documents.
		if err := s.admin.DeleteDocument(ctx, id); err != nil {
			t.Error(err)
		}
	})
	// R2R's recursive splitter with chunk_size 1024 and chunk_overlap 512, sent explicitly so
	// that the server's configuration does not matter: 30 lines of about 90 characters.
	pelicanLines := func(blankEvery int) string {
		var b strings.Builder
		for i := range 30 {
			fmt.Fprintf(&b, "Sentence number %02d talks about pelican colony %d and the tides of the bay near island %d.\n", i, i, i)
			if blankEvery > 0 && i%blankEvery == blankEvery-1 {
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	span := func(text string, from, to int) string {
		start := strings.Index(text, fmt.Sprintf("Sentence number %02d", from))
		end := strings.Index(text, fmt.Sprintf("island %d.\n", to)) + len(fmt.Sprintf("island %d.", to))
		return text[start:end]
	}
	chunksOf := func(t *testing.T, name, text string) []string {
		t.Helper()
		id := derived(name)
		if _, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, File: []byte(text),
			IngestionConfig: map[string]any{"chunk_size": 1024, "chunk_overlap": 512}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngested(t, id)
		p, err := s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return ids(p.Items, func(c r2r.Chunk) string { return c.Text })
	}
	t.Run("chunks_overlap", func(t *testing.T) {
		// Cut at line ends; each chunk starts 6 lines after the previous one and repeats
		// what fits in 512 characters.
		text := pelicanLines(0)
		want := []string{span(text, 0, 10), span(text, 6, 16), span(text, 12, 22), span(text, 18, 28), span(text, 24, 29)}
		if got := chunksOf(t, "conf-"+s.sfx+"-lines.txt", text); !slices.Equal(got, want) {
			t.Errorf("chunks:\n%q\nwant:\n%q", got, want)
		}
	})
	t.Run("chunks_split_at_blank_lines", func(t *testing.T) {
		// Paragraphs that fit are never cut, and a whole paragraph is longer than the
		// overlap, so nothing repeats.
		text := pelicanLines(10)
		want := []string{span(text, 0, 9), span(text, 10, 19), span(text, 20, 29)}
		if got := chunksOf(t, "conf-"+s.sfx+"-paragraphs.txt", text); !slices.Equal(got, want) {
			t.Errorf("chunks:\n%q\nwant:\n%q", got, want)
		}
	})
	// R2R renders Markdown with Python-Markdown and keeps the text of the HTML; HTML files
	// keep the text of their elements, without scripts, styles and comments; CSV rows are
	// parsed, and so chunked, one by one.
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"markdown_text", "doc.md", "# Title here\n\nIntro paragraph with **bold** and *italic* and `code` and a [link](http://x.y).\n\n" +
			"## Section two\n\n- item one\n- item two\n\n1. first\n2. second\n\n```go\nfunc main() {}\n```\n\n> quoted text\n\n" +
			"Last line &amp; entity <b>html</b>.\n",
			[]string{"Title here\nIntro paragraph with bold and italic and code and a link.\nSection two\n\nitem one\n\nitem two\n\n\n" +
				"first\n\nsecond\n\ngo\nfunc main() {}\n\nquoted text\n\nLast line & entity html."}},
		{"html_text", "page.html", "<html><head><title>T</title><style>p{color:red}</style><script>var x=1;</script></head>" +
			"<body><h1>Head</h1>\n<p>Para &amp; <b>bold</b></p><!-- c --><ul><li>a</li><li>b</li></ul></body></html>",
			[]string{"THead\nPara & boldab"}},
		{"json_text", "data.json", "{\"name\": \"pelican\", \"skip\": null, \"wingspan\": 2.0, \"big\": 1e20, \"small\": 0.00001, " +
			"\"count\": 3, \"ok\": true, \"meta\": {\"gone\": null, \"kept\": false}, \"flock\": [{\"id\": 1, \"note\": null}, \"solo\", 4.5]}",
			[]string{"name: pelican\nwingspan: 2.0\nbig: 1e+20\nsmall: 1e-05\ncount: 3\nok: True\nmeta:\n  kept: False\nflock:\n" +
				"    id: 1\n    note: None\n    solo\n    4.5"}},
		{"csv_rows", "table.csv", "name,kind\npelican,bird\n\"a, b\",x\n", []string{"name, kind", "pelican, bird", "a, b, x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := chunksOf(t, "conf-"+s.sfx+"-"+tc.file, tc.src); !slices.Equal(got, tc.want) {
				t.Errorf("chunks %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("invalid_json_400_and_failed", func(t *testing.T) {
		name := "conf-" + s.sfx + "-bad.json"
		id := derived(name)
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, File: []byte(`{"a": 1,`)})
		e := wantStatus(t, err, http.StatusBadRequest, nil)
		const prefix = "Failed to parse JSON data, likely due to invalid JSON: "
		if !strings.HasPrefix(e.Message, prefix) || e.ErrorType != "R2RException" {
			t.Errorf("error %q (%s), want %q… (R2RException)", e.Message, e.ErrorType, prefix)
		}
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := d.Metadata["failure"].(string); d.IngestionStatus != r2r.IngestionFailed || f != e.Message {
			t.Errorf("status %q failure %q, want failed with the error's message", d.IngestionStatus, f)
		}
	})
	t.Run("unknown_collection_created", func(t *testing.T) {
		// A collection_ids form value naming no collection creates it when ingestion ends,
		// owned by the uploader but without members.
		coll, id := uuid.NewString(), uuid.NewString()
		s.cleanupCollection(coll)
		s.cleanupDocument(id)
		if _, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: "Pelican new collection notes.", ID: id,
			CollectionIDs: []string{coll}}); err != nil {
			t.Fatal(err)
		}
		s.waitIngested(t, id)
		c, err := s.admin.GetCollection(ctx, coll)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != "My Collection" || c.Description == nil || *c.Description != "A collection started during N/A ingestion" ||
			c.OwnerID == nil || *c.OwnerID != s.adminID || c.UserCount != 0 || c.DocumentCount != 1 {
			t.Errorf("created %+v", c)
		}
	})
	t.Run("chunk_overlap_above_size_fails", func(t *testing.T) {
		name := "conf-" + s.sfx + "-overlap.txt"
		id := derived(name)
		_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, File: []byte("Pelicans.\n"),
			IngestionConfig: map[string]any{"chunk_size": 100, "chunk_overlap": 512}})
		e := wantStatus(t, err, http.StatusInternalServerError, nil)
		wantMessage(t, e, "Error parsing document: Got a larger chunk overlap (512) than chunk size (100), should be smaller.")
		if d, err := s.admin.GetDocument(ctx, id); err != nil || d.IngestionStatus != r2r.IngestionFailed {
			t.Errorf("document after the failure: %+v %v", d, err)
		}
	})
	// Every mode r2r-mcp offers is taken; any other spelling is a 422 with nothing stored
	// (sync refuses such an --ingestion-mode up front).
	for _, mode := range []string{"slow", "Fast", "hi_res"} {
		t.Run("ingestion_mode_"+mode+"_is_422", func(t *testing.T) {
			name := "conf-" + s.sfx + "-mode-" + mode + ".md"
			_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, IngestionMode: mode, File: []byte("# Mode\n\nHerons.\n")})
			e := wantStatus(t, err, http.StatusUnprocessableEntity, nil)
			if !strings.Contains(e.Message, "ingestion_mode") && !strings.Contains(e.Message, "'hi-res', 'ocr', 'fast' or 'custom'") {
				t.Errorf("422 message %q names neither the field nor the modes", e.Message)
			}
			if _, err := s.admin.GetDocument(ctx, derived(name)); !errors.Is(err, r2r.ErrNotFound) {
				t.Errorf("document after the 422: %v, want not found", err)
			}
		})
	}
	for _, mode := range kbsync.IngestionModes {
		t.Run("ingestion_mode_"+mode, func(t *testing.T) {
			name := "conf-" + s.sfx + "-mode-" + mode + ".md"
			id := derived(name)
			_, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, IngestionMode: mode,
				File: []byte("# Mode " + mode + "\n\nPelicans glide over the " + mode + " bay.\n")})
			if err != nil {
				t.Fatal(err)
			}
			s.waitIngested(t, id)
			p, err := s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Items) == 0 || !strings.Contains(p.Items[len(p.Items)-1].Text, "glide over the "+mode+" bay") {
				t.Errorf("chunks %+v", p.Items)
			}
		})
	}
	t.Run("empty_file_succeeds_without_chunks", func(t *testing.T) {
		name := "conf-" + s.sfx + "-empty.txt"
		id := derived(name)
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: name, File: []byte{}})
		if err != nil {
			t.Fatal(err)
		}
		if res.DocumentID != id {
			t.Errorf("document_id %s, want %s", res.DocumentID, id)
		}
		s.waitIngested(t, id)
		d, err := s.admin.GetDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.SizeInBytes == nil || *d.SizeInBytes != 0 {
			t.Errorf("size_in_bytes %v, want 0", d.SizeInBytes)
		}
		_, err = s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
		wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		dl, err := s.admin.DownloadDocument(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(dl.Body) != 0 || dl.FileName != name {
			t.Errorf("download %q named %q", dl.Body, dl.FileName)
		}
	})
	s.blankInputs(t)
}
