package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/cache/redisl2"
	"github.com/r2r-mcp/r2r-mcp/tools/analytics"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

type analyticsOptions struct {
	r2rCmd
	Since      time.Duration
	Top        int
	JSON       bool
	Offline    bool
	RedisURL   string
	Collection string
	Dir        string // where serve keeps the user's analytics; "" = analytics.DefaultDir()
	Now        func() time.Time
}

func newAnalyticsCmd(deps Deps, runF func(*analyticsOptions) error) *cobra.Command {
	opts := &analyticsOptions{r2rCmd: r2rCmd{Deps: deps}}
	since := "7d"
	c := &cobra.Command{
		Use:   "analytics",
		Short: "Show what the knowledge base could not answer",
		Long: `Report the project's searches and RAG questions over a period: how many, the cache hit
rate, the searches and questions that found nothing or only weak hits (the documentation
gaps, with how often each was asked), the documents most often returned, the team's
memories by kind and how often each kind was recalled, and how far the index is behind the
working tree (what "r2r-mcp sync --dry-run" would do).

serve keeps these in the user cache directory (r2r-mcp/analytics); serve --http with
--redis-url keeps them per team collection in Redis: read those with --redis-url and
--collection. --offline skips the questions to R2R (memories, index lag).`,
		Example: `  r2r-mcp analytics                 # the last 7 days of this project
  r2r-mcp analytics --since 30d --json
  r2r-mcp analytics --redis-url redis://127.0.0.1:6379/0 --collection 3f1c…`,
		Args: cobra.NoArgs,
		RunE: runE(opts, func([]string) error {
			d, err := parseDays(since)
			if err != nil {
				return fmt.Errorf("--since: %w", err)
			}
			opts.Since = d
			if opts.Top < 1 || opts.Top > 100 {
				return fmt.Errorf("--top must be between 1 and 100, not %d", opts.Top)
			}
			if (opts.RedisURL == "") != (opts.Collection == "") {
				return errors.New("--redis-url and --collection go together: the team's analytics are kept per collection")
			}
			return nil
		}, runF, runAnalytics),
	}
	f := c.Flags()
	addURLFlag(f, &opts.URL)
	f.StringVar(&since, "since", since, "the period: the last N days (7d) or a duration (36h); at most 30d are kept")
	f.IntVar(&opts.Top, "top", 10, "gaps and documents listed (1-100)")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&opts.Offline, "offline", false, "do not ask R2R (no memory counts, no index lag)")
	f.StringVar(&opts.RedisURL, "redis-url", "", "read a team's analytics from the Redis of serve --http (with --collection); a URL with a password belongs in R2R_MCP_REDIS_URL")
	f.StringVar(&opts.Collection, "collection", "", "the team collection whose analytics to read (with --redis-url)")
	return c
}

// parseDays reads "7d" as 7 days, anything else as a Go duration.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(strings.TrimSpace(s), "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d < 1 {
			return 0, fmt.Errorf("want a number of days such as 7d, not %q", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want 7d or a duration such as 36h, not %q", s)
	}
	return d, nil
}

func runAnalytics(o *analyticsOptions) error {
	ctx := o.ctx()
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	until := now().UTC()
	r, err := o.read(ctx, until)
	if err != nil {
		return err
	}
	if !o.Offline && o.RedisURL == "" {
		o.addR2R(ctx, &r)
	}
	if o.JSON {
		enc := json.NewEncoder(o.Deps.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	_, err = fmt.Fprintln(o.Deps.IO.Out, r.Text())
	return err
}

// read summarises the kept events of the project (or the team collection).
func (o *analyticsOptions) read(ctx context.Context, until time.Time) (analytics.Report, error) {
	var store analytics.Store
	var key, name string
	if o.RedisURL != "" {
		rs, err := redisl2.Open(o.RedisURL, redisl2.Options{Timeout: 5 * time.Second})
		if err != nil {
			return analytics.Report{}, fmt.Errorf("--redis-url: %w", err)
		}
		defer rs.Close()
		store, key, name = &analytics.TeamStore{List: rs}, "team:"+o.Collection, "collection "+o.Collection
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return analytics.Report{}, err
		}
		pr, err := newProjectResolver(wd).Project(ctx)
		if err != nil {
			return analytics.Report{}, err
		}
		dir := o.Dir
		if dir == "" {
			if dir, err = analytics.DefaultDir(); err != nil {
				return analytics.Report{}, err
			}
		}
		store, key, name = &analytics.FileStore{Dir: dir}, pr.Root, pr.Name
	}
	events, err := store.Read(key)
	if err != nil {
		return analytics.Report{}, fmt.Errorf("reading the analytics: %w", err)
	}
	r := analytics.Summarize(events, until.Add(-o.Since), until, o.Top)
	r.Project = name
	return r, nil
}

// addR2R adds the team's memories by kind and the index lag (a sync's dry run); what R2R
// could not answer is said in the note, the rest of the report stands.
func (o *analyticsOptions) addR2R(ctx context.Context, r *analytics.Report) {
	so := &syncOptions{r2rCmd: o.r2rCmd, DryRun: true, Concurrency: 4, Mode: "fast"}
	t, err := resolveSync(ctx, so)
	if err != nil {
		r.Note = "Memories and index lag not shown: " + err.Error()
		return
	}
	if unlock, err := kbsync.Lock(t.stateDir, t.key); err == nil {
		plan, perr := t.syncer.Plan(ctx)
		unlock()
		if perr == nil {
			r.IndexLag = &analytics.IndexLag{New: len(plan.Upload), Changed: len(plan.Replace), Removed: len(plan.Delete), Kept: plan.Stale}
		} else {
			r.Note = "Index lag not shown: " + perr.Error()
		}
	} else {
		r.Note = "Index lag not shown: a sync of this project is running."
	}
	client, err := o.open(ctx)
	if err != nil || t.syncer.Writer.Scope.CollectionID == "" {
		return
	}
	if counts, truncated, err := (&memory.Store{API: client, CollectionID: t.syncer.Writer.Scope.CollectionID}).Counts(ctx); err == nil && !truncated {
		r.Memories = counts
	}
}
