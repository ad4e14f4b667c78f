package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

type memoryOptions struct {
	Dir    string
	JSON   bool
	Format string // export: markdown or jsonl
	Kind   string
	Path   string
	Tag    string
	Author string
	Limit  int
	Yes    bool

	r2rCmd
}

func newMemoryCmd(deps Deps, runF func(verb string, o *memoryOptions, args []string) error) *cobra.Command {
	parent := &cobra.Command{
		Use:   "memory",
		Short: "List, show, forget and export the team memories of the project's collection",
		Long: `Team memories are what agents saved with r2r_remember: decisions, conventions, fixes,
gotchas, checkpoints and notes, one small document each in the project's R2R collection,
visible to everyone who can read it. These commands let people review them.`,
		Args: cobra.NoArgs,
	}
	opts := &memoryOptions{r2rCmd: r2rCmd{Deps: deps}}
	run := func(verb string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			opts.setContext(cmd.Context())
			if opts.Kind != "" && !slices.Contains(memory.Kinds, opts.Kind) {
				return fmt.Errorf("--kind must be one of %s", strings.Join(memory.Kinds, ", "))
			}
			if runF != nil {
				return opts.explain(runF(verb, opts, args))
			}
			return opts.explain(runMemory(verb, opts, args))
		}
	}
	common := func(f *pflag.FlagSet) {
		addURLFlag(f, &opts.URL)
		f.StringVar(&opts.Dir, "dir", "", "a directory of the project (default: the working directory)")
	}
	filters := func(f *pflag.FlagSet) {
		f.StringVar(&opts.Kind, "kind", "", "only memories of this kind ("+strings.Join(memory.Kinds, ", ")+")")
		f.StringVar(&opts.Path, "path", "", "only memories about this project file")
		f.StringVar(&opts.Tag, "tag", "", "only memories with this tag")
		f.StringVar(&opts.Author, "author", "", "only memories saved by this R2R user (email)")
	}
	list := &cobra.Command{Use: "list", Short: "List the memories, newest first", Args: cobra.NoArgs, RunE: run("list")}
	common(list.Flags())
	filters(list.Flags())
	list.Flags().IntVar(&opts.Limit, "limit", 50, "at most this many (0 = all)")
	list.Flags().BoolVar(&opts.JSON, "json", false, "print JSON lines, one memory each")
	show := &cobra.Command{Use: "show ID", Short: "Show one memory in full", Args: cobra.ExactArgs(1), RunE: run("show")}
	common(show.Flags())
	show.Flags().BoolVar(&opts.JSON, "json", false, "print it as JSON")
	forget := &cobra.Command{Use: "forget ID", Short: "Delete one memory (for the whole team)", Args: cobra.ExactArgs(1), RunE: run("forget")}
	common(forget.Flags())
	export := &cobra.Command{Use: "export", Short: "Print every memory in full, as Markdown or JSON lines", Args: cobra.NoArgs, RunE: run("export"),
		Example: `  r2r-mcp memory export > memories.md
  r2r-mcp memory export --format jsonl --kind decision`}
	common(export.Flags())
	filters(export.Flags())
	export.Flags().StringVar(&opts.Format, "format", "markdown", "markdown or jsonl")
	patterns := &cobra.Command{Use: "patterns", Short: "List the recurring error signatures among the team's fixes, with counts and newest fix",
		Args: cobra.NoArgs, RunE: run("patterns")}
	common(patterns.Flags())
	patterns.Flags().IntVar(&opts.Limit, "limit", 50, "at most this many signatures (0 = all)")
	patterns.Flags().BoolVar(&opts.JSON, "json", false, "print JSON lines, one signature each")
	parent.AddCommand(list, show, forget, export, patterns)
	return parent
}

// memoryTarget resolves the project's collection and a store on it; nil store when the
// collection does not exist yet.
func memoryTarget(ctx context.Context, o *memoryOptions) (*memory.Store, string, error) {
	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, "", fmt.Errorf("find the working directory: %w", err)
		}
		dir = wd
	}
	projects := newProjectResolver(dir)
	if _, err := projects.Project(ctx); err != nil {
		return nil, "", err
	}
	client, err := o.open(ctx)
	if err != nil {
		return nil, "", err
	}
	pc, err := projects.Collection(ctx, client, false)
	if err != nil {
		return nil, "", fmt.Errorf("resolving the project's collection: %w", err)
	}
	if !pc.Exists() {
		return nil, pc.Name, nil
	}
	return &memory.Store{API: client, CollectionID: pc.ID}, pc.Name, nil
}

func runMemory(verb string, o *memoryOptions, args []string) error {
	ctx := o.ctx()
	if o.Format != "" && o.Format != "markdown" && o.Format != "jsonl" {
		return fmt.Errorf("--format must be markdown or jsonl, not %q", cleantext.Terminal(o.Format))
	}
	st, coll, err := memoryTarget(ctx, o)
	if err != nil {
		return err
	}
	if st == nil {
		if verb == "show" || verb == "forget" {
			return fmt.Errorf("the project's collection %s does not exist yet, so it holds no memory %s", cleantext.Terminal(coll), cleantext.Terminal(args[0]))
		}
		fmt.Fprintf(o.Deps.IO.ErrOut, "The project's collection %s does not exist yet: no memories.\n", cleantext.Terminal(coll))
		return nil
	}
	id := ""
	if len(args) == 1 {
		if id, err = st.Resolve(ctx, args[0]); err != nil {
			return memoryErr(err, cleantext.Terminal(args[0]))
		}
	}
	switch verb {
	case "list":
		return memoryList(ctx, o, st)
	case "show":
		return memoryShow(ctx, o, st, id)
	case "forget":
		m, err := st.Forget(ctx, id)
		if err != nil {
			return memoryErr(err, id)
		}
		fmt.Fprintf(o.Deps.IO.Out, "Forgot %s %q (%s).\n", m.Kind, cleantext.Terminal(m.Title), m.ID)
		return nil
	case "export":
		return memoryExport(ctx, o, st)
	case "patterns":
		return memoryPatterns(ctx, o, st)
	}
	return fmt.Errorf("unknown memory command %q", verb)
}

// memoryErr words what the memory store could not do with memory id.
func memoryErr(err error, id string) error {
	var ie *memory.IDError
	switch {
	case errors.As(err, &ie):
		return ie
	case errors.Is(err, memory.ErrNotMemory):
		return fmt.Errorf("%s is not a memory of the project's collection (memory list shows them)", id)
	case errors.Is(err, r2r.ErrNotFound):
		// R2R's 404 also means "not yours": nothing is claimed about what R2R holds.
		return worded{fmt.Errorf("memory %s is already gone: R2R does not have it, or not for this account (404); "+
			"nothing was deleted, and memory list shows the project's memories: %w", id, err)}
	}
	return err
}

func (o *memoryOptions) query() memory.Query {
	q := memory.Query{Path: o.Path, Tag: o.Tag, Author: o.Author}
	if o.Kind != "" {
		q.Kinds = []string{o.Kind}
	}
	return q
}

func memoryList(ctx context.Context, o *memoryOptions, st *memory.Store) error {
	limit := o.Limit
	if limit <= 0 {
		limit = -1
	}
	l, err := st.List(ctx, o.query(), limit)
	if err != nil {
		return err
	}
	w := o.Deps.IO.Out
	now := time.Now()
	for _, m := range l.Memories {
		if o.JSON {
			if err := writeJSONLine(w, exportRecord(m, "")); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, "%s  %-10s  %-10s  %-20s  %s\n", m.ID, m.Kind, humanAge(now, m.Created), cleantext.Terminal(cleantext.Clip(m.Author, 20)),
			cleantext.Terminal(cleantext.Clip(m.Title, 80)))
	}
	if l.More {
		fmt.Fprintln(o.Deps.IO.ErrOut, "Older memories not listed (--limit 0 lists all).")
	}
	if l.Truncated {
		fmt.Fprintln(o.Deps.IO.ErrOut, "The collection holds more documents than a listing reads; the newest were read.")
	}
	return nil
}

func memoryShow(ctx context.Context, o *memoryOptions, st *memory.Store, id string) error {
	m, body, err := st.Get(ctx, id)
	if err != nil {
		return memoryErr(err, id)
	}
	if o.JSON {
		return writeJSONLine(o.Deps.IO.Out, exportRecord(m, body))
	}
	_, err = fmt.Fprint(o.Deps.IO.Out, markdownMemory(m, body))
	return err
}

func memoryExport(ctx context.Context, o *memoryOptions, st *memory.Store) error {
	l, err := st.List(ctx, o.query(), -1)
	if err != nil {
		return err
	}
	w := o.Deps.IO.Out
	for _, m := range l.Memories {
		body, err := st.Body(ctx, m) // the listing already has m: one request per memory
		if err != nil {
			return fmt.Errorf("reading memory %s: %w", m.ID, err)
		}
		if o.Format == "jsonl" {
			err = writeJSONLine(w, exportRecord(m, body))
		} else {
			_, err = fmt.Fprint(w, markdownMemory(m, body)+"\n")
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(o.Deps.IO.ErrOut, "Exported %d memories.\n", len(l.Memories))
	return nil
}
