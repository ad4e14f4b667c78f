package kbsync

import (
	"fmt"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Bounds of an ingestion R2R has not finished, measured from when it started. R2R 3.6.6
// records no progress beyond a document's status, and after R2R stops in the middle of an
// ingestion (a crash, a restart) nothing finishes it: the document keeps its status (parsing,
// embedding, storing…) and every new upload of it is refused with 409.
const (
	// SlowAfter: an ingestion running longer is reported as stuck, with the way out, and
	// not waited for.
	SlowAfter = 10 * time.Minute
	// DeadAfter: an ingestion running longer will never finish (R2R's orchestrator gives
	// each ingestion step at most 60 minutes): its document is deleted and the file sent
	// again.
	DeadAfter = 60 * time.Minute
)

// IngestionAge describes how long R2R has been ingesting a document: since started, for
// age: "since 2026-11-26 14:05 UTC (42 min)"; "" when started is unknown.
func IngestionAge(started time.Time, age time.Duration) string {
	if started.IsZero() {
		return ""
	}
	return fmt.Sprintf("since %s UTC (%s)", started.UTC().Format("2006-01-02 15:04"), minutes(age))
}

// StuckText is the verdict on a document R2R has been ingesting for longer than SlowAfter:
// what is known, the likely cause, and the way out. deleteWith names the way to delete a
// document where the text is shown (a tool or a command).
func StuckText(documentID, status string, started time.Time, age time.Duration, deleteWith string) string {
	since := IngestionAge(started, age)
	if since != "" {
		since = " " + since
	}
	if status == "" {
		status = r2r.IngestionPending
	}
	return fmt.Sprintf("R2R has been ingesting document %s%s without finishing (status %s): the ingestion looks stuck, "+
		"as after R2R stopped or restarted in the middle of it, and R2R refuses a new upload of it meanwhile. "+
		"r2r-mcp sends the file again by itself once the ingestion is %s old; to do it now, delete the document (%s) and ingest the file again.",
		documentID, since, status, minutes(DeadAfter), deleteWith)
}

// minutes formats d for messages in whole minutes (at least 1).
func minutes(d time.Duration) string {
	return fmt.Sprintf("%d min", max(int(d/time.Minute), 1))
}

// DeadText is the verdict on a document R2R has been ingesting for longer than DeadAfter:
// the ingestion will never finish, and an ingest or sync of the file replaces it.
func DeadText(documentID, status string, started time.Time, age time.Duration) string {
	since := IngestionAge(started, age)
	if since != "" {
		since = " " + since
	}
	return fmt.Sprintf("R2R has been ingesting document %s%s without finishing (status %s): the ingestion is dead, "+
		"as after R2R stopped or restarted in the middle of it, and will never finish. Ingest the file again "+
		"(r2r_ingest_document, r2r_sync or `r2r-mcp sync`): r2r-mcp deletes this document and sends the file again.",
		documentID, since, status)
}
