package conformance

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// blankInputs checks what R2R does with content that holds no text: a file that is empty or
// only whitespace, raw_text empty or of whitespace, chunks of whitespace. Only an empty
// raw_text (or no chunks) is refused; the others are stored, and none gives anything to
// search for: r2r-mcp sends none of them (confine's empty_file rule).
func (s *suite) blankInputs(t *testing.T) {
	ctx := t.Context()
	// An empty or whitespace-only file of any text type R2R parses is stored and succeeds
	// with no chunks at all (R2R 3.6.6 answers 202 "ingested successfully"; its chunk list
	// is a 404), however R2R parses the type.
	for _, c := range []struct{ name, body string }{
		{"empty_py", ""},             // an empty __init__.py
		{"empty_md", ""},             // an empty README stub
		{"blank_md", "  \n\t\n"},     // whitespace only
		{"blank_py", "\n \n"},        // a blank line or two
		{"nbsp_txt", "\u00a0\n"},     // Unicode spaces count as whitespace too
		{"crlf_txt", "\r\n\r\n\r\n"}, // Windows line ends
	} {
		t.Run("blank_file_succeeds_without_chunks/"+c.name, func(t *testing.T) {
			ext := c.name[len(c.name)-2:]
			if ext == "xt" {
				ext = "txt"
			}
			id := uuid.NewString()
			s.cleanupDocument(id)
			res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{FileName: "conf-" + s.sfx + "-" + c.name + "." + ext,
				File: []byte(c.body), ID: id, IngestionMode: "fast"})
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
			if d.IngestionStatus != r2r.IngestionSuccess || d.SizeInBytes == nil || *d.SizeInBytes != int64(len(c.body)) {
				t.Errorf("document %+v; want success, size_in_bytes %d", d, len(c.body))
			}
			_, err = s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
			wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		})
	}
	// An empty raw_text counts as none: 422, nothing stored (the typed client refuses an
	// empty DocumentCreate before sending, so this one goes raw).
	t.Run("empty_raw_text_is_422", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		st, body := s.rawCreate(t, map[string]string{"raw_text": "", "id": id})
		if st != http.StatusUnprocessableEntity || object(t, body)["message"] != "Either a `file`, `raw_text`, or `chunks` must be provided." {
			t.Errorf("raw_text \"\": %d %s; want 422 Either a `file`, `raw_text`, or `chunks` must be provided.", st, body)
		}
		if _, err := s.admin.GetDocument(ctx, id); err == nil {
			t.Errorf("a document %s was stored after the 422", id)
		}
	})
	// raw_text of whitespace is taken, and gives no chunk.
	for _, c := range []struct{ name, text string }{
		{"ascii", " \n\t\r\v\f "},
		{"unicode", "\u00a0\u3000"},
	} {
		t.Run("blank_raw_text_succeeds_without_chunks/"+c.name, func(t *testing.T) {
			id := uuid.NewString()
			s.cleanupDocument(id)
			res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{RawText: c.text, ID: id, IngestionMode: "fast"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Ingested() {
				s.waitIngested(t, id)
			}
			if d, err := s.admin.GetDocument(ctx, id); err != nil || d.IngestionStatus != r2r.IngestionSuccess {
				t.Errorf("document %+v, %v; want success", d, err)
			}
			_, err = s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
			wantStatus(t, err, http.StatusNotFound, r2r.ErrNotFound)
		})
	}
	// Chunks are stored as given, blank ones too (each embedded and searchable as what it
	// is: nothing).
	t.Run("blank_chunks_are_stored_as_given", func(t *testing.T) {
		id := uuid.NewString()
		s.cleanupDocument(id)
		want := []string{"   ", "", "\n\t"}
		res, err := s.admin.CreateDocument(ctx, r2r.DocumentCreate{Chunks: want, ID: id, IngestionMode: "fast"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Ingested() {
			s.waitIngested(t, id)
		}
		p, err := s.admin.ListDocumentChunks(ctx, id, r2r.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range p.Items {
			got = append(got, c.Text)
		}
		slices.Sort(got)
		sorted := slices.Clone(want)
		slices.Sort(sorted)
		if !slices.Equal(got, sorted) {
			t.Errorf("chunks %q, want %q", got, sorted)
		}
	})
	t.Run("no_chunks_is_422", func(t *testing.T) {
		chunks, _ := json.Marshal([]string{})
		st, body := s.rawCreate(t, map[string]string{"chunks": string(chunks)})
		if st != http.StatusUnprocessableEntity || object(t, body)["message"] != "Either a `file`, `raw_text`, or `chunks` must be provided." {
			t.Errorf("chunks []: %d %s; want 422", st, body)
		}
	})
}

// rawCreate posts fields as a multipart POST /v3/documents as the superuser.
func (s *suite) rawCreate(t *testing.T, fields map[string]string) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	_ = w.Close()
	st, _, body := s.raw(t, http.MethodPost, "/v3/documents", s.admin.Credentials(), w.FormDataContentType(), buf.Bytes())
	return st, body
}
