package kbsync

import (
	"context"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// StartReporter is an API that can say when its R2R started (r2r.Client does; R2R 3.6.6
// answers a superuser only).
type StartReporter interface {
	SystemStatus(ctx context.Context) (*r2r.SystemStatus, error)
}

var _ StartReporter = (*r2r.Client)(nil)

// orphaned reports an ingestion that R2R restarted under: it is not finished, and it began
// (doc's updated_at) before the running R2R started. R2R 3.6.6 ingests within the process
// that took the upload and resumes nothing after a restart, so such an ingestion is dead at
// once; both times are R2R's own, so no clock of this host is compared with R2R's. False
// when R2R will not say when it started.
func (w *Writer) orphaned(ctx context.Context, doc *r2r.Document) bool {
	if Terminal(doc.IngestionStatus) || doc.UpdatedAt.IsZero() {
		return false
	}
	start := w.r2rStart(ctx)
	return !start.IsZero() && doc.UpdatedAt.Before(start)
}

// r2rStart is when the Writer's R2R started, asked once; zero when it cannot be known (the
// API cannot ask, or R2R refused: not a superuser).
func (w *Writer) r2rStart(ctx context.Context) time.Time {
	r := w.run()
	r.startMu.Lock()
	defer r.startMu.Unlock()
	if !r.startAsked {
		if sr, ok := w.API.(StartReporter); ok {
			if st, err := sr.SystemStatus(ctx); err == nil {
				r.start = st.StartTime.Time
			}
			r.startAsked = ctx.Err() == nil
		} else {
			r.startAsked = true
		}
	}
	return r.start
}
