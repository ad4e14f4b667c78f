package tools

import (
	"context"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// untitled is shown for a document whose title neither its chunks nor R2R know.
const untitled = "(untitled)"

// fillTitles replaces untitled entries with the documents' own titles, looked up in one
// request. R2R copies a document's metadata into its chunks, so a hit carries a title only
// when the uploader set metadata.title (r2r-mcp's ingest does); documents ingested by other
// means have their title on the document only. Best effort: on an error the entries stay
// untitled, since the result itself is fine. docID and title address the i-th entry.
func (d *Deps) fillTitles(ctx context.Context, n int, docID func(i int) string, title func(i int) *string) {
	var ids []string
	seen := map[string]bool{}
	for i := range n {
		// Only real ids: R2R answers 500 to a malformed one in ids (r2r-api.md §2.3), and a
		// non-chunk citation may carry none.
		if id := docID(i); *title(i) == untitled && !seen[id] && uuid.Validate(id) == nil {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	page, err := d.Client.ListDocuments(ctx, r2r.ListParams{IDs: ids, Limit: len(ids)})
	if err != nil {
		d.logger().LogAttrs(ctx, slog.LevelDebug, "document titles not available", slog.String("error", err.Error()))
		return
	}
	titles := make(map[string]string, len(page.Items))
	for _, doc := range page.Items {
		if doc.Title != nil && strings.TrimSpace(*doc.Title) != "" && *doc.Title != "N/A" {
			titles[doc.ID] = Sanitize(*doc.Title)
		}
	}
	for i := range n {
		if t, ok := titles[docID(i)]; ok && *title(i) == untitled {
			*title(i) = t
		}
	}
}
