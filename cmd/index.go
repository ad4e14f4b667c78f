package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/searchindex"
)

// defaultIndexTimeout bounds the build: R2R builds the index inside the request.
const defaultIndexTimeout = 30 * time.Minute

type indexOptions struct {
	JSON    bool
	Timeout time.Duration

	r2rCmd
}

// indexReport is what index create prints on stdout.
type indexReport struct {
	Index   string `json:"index"`
	Created bool   `json:"created"`
	Chunks  int64  `json:"chunks"`
}

func newIndexCmd(deps Deps, runF func(*indexOptions) error) *cobra.Command {
	parent := &cobra.Command{
		Use:   "index",
		Short: "Manage R2R's vector index on the chunks' embeddings",
		Args:  cobra.NoArgs,
	}
	opts := &indexOptions{r2rCmd: r2rCmd{Deps: deps}}
	c := &cobra.Command{
		Use:   "create",
		Short: "Build an HNSW vector index on R2R's chunks through R2R's API",
		Long: `Build the vector index R2R's semantic search uses, through R2R's API (POST /v3/indices):
HNSW on the chunks' embeddings with the cosine measure R2R searches with, built
concurrently so ingestion and search go on meanwhile. Without it R2R compares every query
with every chunk; "r2r-mcp doctor" and r2r_status say when R2R holds ` + fmt.Sprint(searchindex.Threshold) + ` chunks or
more and has none. The index covers all of R2R's chunks, every user's, so only an R2R
superuser may build it.

Nothing is created when a cosine vector index exists already. R2R builds the index inside
the request: on tens of thousands of chunks it takes minutes (--timeout). R2R has no API for
a full-text index; its own GIN index on the chunks' text exists from the start.

Prints the index name (or JSON with --json) on stdout.`,
		Example: `  r2r-mcp index create
  r2r-mcp index create --json --timeout 1h`,
		Args: cobra.NoArgs,
		RunE: runE(opts, positiveTimeout(&opts.Timeout), runF, runIndexCreate),
	}
	f := c.Flags()
	addURLFlag(f, &opts.URL)
	f.BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	f.DurationVar(&opts.Timeout, "timeout", defaultIndexTimeout, "time limit of the build")
	parent.AddCommand(c)
	return parent
}

func runIndexCreate(o *indexOptions) error {
	ctx := o.ctx()
	client, err := o.open(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	me, err := client.Me(ctx)
	if err != nil {
		return fmt.Errorf("reading your R2R account: %w", err)
	}
	if !me.IsSuperuser {
		return fmt.Errorf("%s is not an R2R superuser; %w", me.Email, searchindex.ErrNotSuperuser)
	}
	before, err := searchindex.Check(ctx, client)
	if err != nil {
		return fmt.Errorf("listing R2R's indexes: %w", err)
	}
	rep := indexReport{Index: before.Index, Chunks: before.Chunks}
	if before.Index == "" {
		fmt.Fprintf(o.Deps.IO.ErrOut, "Building an HNSW index on about %d chunks; R2R answers when it is built (minutes on a large corpus)…\n", before.Chunks)
		start := time.Now()
		if err := client.CreateChunkVectorIndex(ctx); err != nil {
			return explainIndexError(err)
		}
		after, err := searchindex.Check(ctx, client)
		if err != nil {
			return fmt.Errorf("listing R2R's indexes after the build: %w", err)
		}
		if after.Index == "" {
			return errors.New("R2R reported the index built but does not list it; check R2R's log")
		}
		rep = indexReport{Index: after.Index, Created: true, Chunks: after.Chunks}
		fmt.Fprintf(o.Deps.IO.ErrOut, "Built in %s.\n", time.Since(start).Round(time.Second))
	} else {
		fmt.Fprintf(o.Deps.IO.ErrOut, "A vector index exists already; nothing to do.\n")
	}
	if o.JSON {
		return json.NewEncoder(o.Deps.IO.Out).Encode(rep)
	}
	_, err = fmt.Fprintln(o.Deps.IO.Out, rep.Index)
	return err
}

// explainIndexError words a failed build for the terminal; what it does not word itself is
// worded as every command's R2R failure is (r2rCmd.explain).
func explainIndexError(err error) error {
	err = searchindex.Explain(err)
	if errors.Is(err, context.DeadlineExceeded) {
		return worded{fmt.Errorf("the build did not finish within --timeout; R2R may still be building it (run this command again later to see): %w", err)}
	}
	var re *r2r.Error
	if errors.As(err, &re) && re.StatusCode >= 500 {
		return worded{fmt.Errorf("R2R could not build the index (see R2R's log): %w", err)}
	}
	return fmt.Errorf("creating the index: %w", err)
}
