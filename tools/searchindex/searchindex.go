// Package searchindex decides whether R2R's chunks need a vector index and words that
// verdict once for doctor, r2r_status and `r2r-mcp index`.
package searchindex

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// Threshold is the chunk count from which searching without a vector index is slow enough
// to matter: without one, R2R compares the query with every chunk's embedding (a search at
// 56,000 chunks took 600 ms; with an HNSW index and R2R's own full-text index, 339 ms).
const Threshold = 20_000

// Command is the command that creates the index.
const Command = "r2r-mcp index create"

// Verdict is what R2R's index list says about its chunks.
type Verdict struct {
	// Chunks is Postgres's estimate of the chunks R2R holds (all users', not one
	// collection's); 0 until Postgres has analyzed the table.
	Chunks int64
	// Index names the vector index on the chunks, "" when there is none.
	Index string
}

// NeedsIndex reports whether the chunks are many and have no vector index.
func (v Verdict) NeedsIndex() bool { return v.Index == "" && v.Chunks >= Threshold }

// Advice is the one-line next step when NeedsIndex, else "".
func (v Verdict) Advice() string {
	if !v.NeedsIndex() {
		return ""
	}
	return fmt.Sprintf("R2R holds about %d chunks and no vector index, so every search compares the query with all of them; run %q to build one",
		v.Chunks, Command)
}

// Summary describes the verdict in one line.
func (v Verdict) Summary() string {
	switch {
	case v.Index != "":
		return fmt.Sprintf("vector index %s on about %d chunks", v.Index, v.Chunks)
	case v.NeedsIndex():
		return v.Advice()
	}
	return fmt.Sprintf("about %d chunks, no vector index (none needed below %d)", v.Chunks, Threshold)
}

// FromList derives the verdict from R2R's index list.
func FromList(l *r2r.VectorIndexList) Verdict {
	var v Verdict
	for _, e := range l.Indices {
		ix := e.Index
		if ix.TableName != "chunks" {
			continue
		}
		v.Chunks = max(v.Chunks, ix.RowEstimate)
		if v.Index == "" && ix.IsChunkVectorIndex() {
			v.Index = ix.Name
		}
	}
	return v
}

// Check lists R2R's indexes and returns the verdict.
func Check(ctx context.Context, c *r2r.Client) (Verdict, error) {
	l, err := c.ListIndices(ctx)
	if err != nil {
		return Verdict{}, Explain(err)
	}
	return FromList(l), nil
}

// ErrNotAllowed is returned (wrapped) when R2R refuses the index routes to this account.
var ErrNotAllowed = errors.New("R2R refused its index routes to this account (403): ask an R2R superuser to run \"" + Command + "\"")

// ErrNotSuperuser is returned (wrapped, after the account's email) when the account is not
// a superuser: R2R lets any user build an index, yet the index covers every user's chunks.
var ErrNotSuperuser = errors.New("the vector index covers every user's chunks in R2R, so r2r-mcp builds it only for a superuser: " +
	"ask an R2R superuser to run \"" + Command + "\"")

// Explain turns R2R's refusal of the index routes into ErrNotAllowed; other errors pass.
func Explain(err error) error {
	var re *r2r.Error
	if errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%w: %s", ErrNotAllowed, re.Message)
	}
	return err
}
