package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

type skillOptions struct {
	Dir   string
	Force bool // export: overwrite a local SKILL.md that differs
	r2rCmd
}

func newSkillCmd(deps Deps, runF func(verb string, o *skillOptions, args []string) error) *cobra.Command {
	parent := &cobra.Command{
		Use:   "skill",
		Short: "Share Claude Code skills (SKILL.md) with the team through the project's collection",
		Long: `A team skill is a SKILL.md (front matter name and description, then Markdown) kept in the
project's R2R collection. Every teammate's r2r-mcp serve offers each one as a prompt, which
Claude Code lists as a slash command. Adding a changed SKILL.md of the same name makes the
next version of it.`,
		Args: cobra.NoArgs,
	}
	opts := &skillOptions{r2rCmd: r2rCmd{Deps: deps}}
	run := func(verb string) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			opts.setContext(cmd.Context())
			if runF != nil {
				return runF(verb, opts, args)
			}
			return runSkill(verb, opts, args)
		}
	}
	common := func(f *pflag.FlagSet) {
		addURLFlag(f, &opts.URL)
		f.StringVar(&opts.Dir, "dir", "", "a directory of the project (default: the working directory)")
	}
	add := &cobra.Command{Use: "add FILE|DIR", Short: "Save a SKILL.md, or every */SKILL.md of a directory, for the team",
		Args: cobra.ExactArgs(1), RunE: run("add"), Example: "  r2r-mcp skill add .claude/skills/deploy/SKILL.md\n  r2r-mcp skill add .claude/skills"}
	list := &cobra.Command{Use: "list", Short: "List the team's skills", Args: cobra.NoArgs, RunE: run("list")}
	show := &cobra.Command{Use: "show NAME", Short: "Print one skill's SKILL.md", Args: cobra.ExactArgs(1), RunE: run("show")}
	remove := &cobra.Command{Use: "remove NAME", Short: "Delete a skill (for the whole team)", Args: cobra.ExactArgs(1), RunE: run("remove")}
	export := &cobra.Command{Use: "export", Short: "Write every team skill to .claude/skills/<name>/SKILL.md", Args: cobra.NoArgs, RunE: run("export")}
	export.Flags().BoolVar(&opts.Force, "force", false, "overwrite a local SKILL.md that differs from the team's")
	for _, c := range []*cobra.Command{add, list, show, remove, export} {
		common(c.Flags())
	}
	parent.AddCommand(add, list, show, remove, export)
	return parent
}

// skillTarget is the project, its collection's memory store (nil when the collection does
// not exist and create is false) and the R2R user the credentials act as.
type skillTarget struct {
	root  string
	coll  string
	store *memory.Store
	user  project.User
}

func (o *skillOptions) target(ctx context.Context, create bool) (skillTarget, error) {
	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return skillTarget{}, fmt.Errorf("find the working directory: %w", err)
		}
		dir = wd
	}
	projects := newProjectResolver(dir)
	pr, err := projects.Project(ctx)
	if err != nil {
		return skillTarget{}, err
	}
	client, err := o.open(ctx)
	if err != nil {
		return skillTarget{}, err
	}
	pc, err := projects.Collection(ctx, client, create)
	if err != nil {
		return skillTarget{}, fmt.Errorf("resolving the project's collection: %w", err)
	}
	t := skillTarget{root: pr.Root, coll: pc.Name}
	if pc.Exists() {
		t.store = &memory.Store{API: client, CollectionID: pc.ID}
	}
	if create {
		if t.user, err = projects.User(ctx, client); err != nil {
			return skillTarget{}, err
		}
	}
	return t, nil
}

func runSkill(verb string, o *skillOptions, args []string) error {
	ctx := o.ctx()
	t, err := o.target(ctx, verb == "add")
	if err != nil {
		return err
	}
	if t.store == nil {
		if verb == "show" || verb == "remove" {
			return fmt.Errorf("the project's collection %s does not exist yet, so it holds no skill %s", cleantext.Terminal(t.coll), cleantext.Terminal(args[0]))
		}
		fmt.Fprintf(o.Deps.IO.ErrOut, "The project's collection %s does not exist yet: no skills.\n", cleantext.Terminal(t.coll))
		return nil
	}
	switch verb {
	case "add":
		return skillAdd(ctx, o, t, args[0])
	case "list":
		return skillList(ctx, o, t.store)
	case "show":
		_, body, err := skillGet(ctx, t.store, args[0])
		if err == nil {
			_, err = fmt.Fprint(o.Deps.IO.Out, body+"\n")
		}
		return err
	case "remove":
		m, err := t.store.RemoveSkill(ctx, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(o.Deps.IO.Out, "Removed skill %s (v%d, %s).\n", m.Title, max(m.Version, 1), m.ID)
		return nil
	case "export":
		return skillExport(ctx, o, t)
	}
	return fmt.Errorf("unknown skill command %q", verb)
}

// skillFiles are the SKILL.md files arg names: the file itself, DIR/SKILL.md, or each
// DIR/*/SKILL.md.
func skillFiles(arg string) ([]string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{arg}, nil
	}
	if _, err := os.Stat(filepath.Join(arg, "SKILL.md")); err == nil {
		return []string{filepath.Join(arg, "SKILL.md")}, nil
	}
	files, err := filepath.Glob(filepath.Join(arg, "*", "SKILL.md"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s holds no SKILL.md, nor */SKILL.md", arg)
	}
	return files, err
}

func skillAdd(ctx context.Context, o *skillOptions, t skillTarget, arg string) error {
	files, err := skillFiles(arg)
	if err != nil {
		return err
	}
	var failed error
	for _, f := range files {
		if err := skillAddFile(ctx, o, t, f); err != nil {
			fmt.Fprintf(o.Deps.IO.ErrOut, "%s: %v\n", cleantext.Terminal(f), err)
			failed = errors.New("some skills were not saved")
		}
	}
	return failed
}

func skillAddFile(ctx context.Context, o *skillOptions, t skillTarget, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	d, err := memory.Normalise(memory.Draft{Kind: memory.KindSkill, Body: string(b)})
	if err == nil {
		err = memory.Check(d)
	}
	if err == nil {
		err = tools.CheckSkillName(d)
	}
	if err != nil {
		return err
	}
	saved, v, err := t.store.SaveSkill(ctx, d, memory.Stamp{UserID: t.user.ID, Time: time.Now()})
	if err != nil {
		return err
	}
	switch {
	case saved.Already:
		fmt.Fprintf(o.Deps.IO.Out, "Skill %s v%d is unchanged (%s).\n", d.Title, v, saved.ID)
	case v > 1:
		fmt.Fprintf(o.Deps.IO.Out, "Updated skill %s to v%d (%s).\n", d.Title, v, saved.ID)
	default:
		fmt.Fprintf(o.Deps.IO.Out, "Added skill %s v1 (%s).\n", d.Title, saved.ID)
	}
	return nil
}

func skillGet(ctx context.Context, st *memory.Store, name string) (memory.Memory, string, error) {
	m, ok, err := st.Skill(ctx, name)
	if err == nil && !ok {
		err = fmt.Errorf("no skill named %q in the project's collection (skill list shows them): %w", cleantext.Terminal(name), r2r.ErrNotFound)
	}
	if err != nil {
		return memory.Memory{}, "", err
	}
	body, err := st.Body(ctx, m)
	return m, body, err
}

func skillList(ctx context.Context, o *skillOptions, st *memory.Store) error {
	skills, truncated, err := st.Skills(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, m := range skills {
		fmt.Fprintf(o.Deps.IO.Out, "%-30s v%-3d %-10s %-20s %s\n", m.Title, max(m.Version, 1), humanAge(now, m.Created),
			cleantext.Terminal(cleantext.Clip(m.Author, 20)), cleantext.Terminal(cleantext.Clip(m.Description, 80)))
	}
	if truncated {
		fmt.Fprintln(o.Deps.IO.ErrOut, "The collection holds more documents than a listing reads; the newest were read.")
	}
	return nil
}

// skillExport writes each team skill to .claude/skills/<name>/SKILL.md of the project; a
// local file that differs is kept unless --force.
func skillExport(ctx context.Context, o *skillOptions, t skillTarget) error {
	skills, _, err := t.store.Skills(ctx)
	if err != nil {
		return err
	}
	kept := 0
	for _, m := range skills {
		body, err := t.store.Body(ctx, m)
		if err != nil {
			return fmt.Errorf("reading skill %s: %w", m.Title, err)
		}
		if _, err := memory.ParseSkill(body); err != nil { // the name is a safe directory name
			fmt.Fprintf(o.Deps.IO.ErrOut, "Skipped %s: %v\n", cleantext.Terminal(m.Title), err)
			continue
		}
		path := filepath.Join(t.root, ".claude", "skills", m.Title, "SKILL.md")
		cur, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(bytes.TrimSpace(cur), []byte(body)):
			continue
		case err == nil && !o.Force:
			fmt.Fprintf(o.Deps.IO.ErrOut, "Kept %s: it differs from the team's v%d (--force overwrites it).\n", path, max(m.Version, 1))
			kept++
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(body+"\n"), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(o.Deps.IO.Out, "Wrote %s (v%d).\n", path, max(m.Version, 1))
	}
	if kept > 0 {
		return fmt.Errorf("%d local skills differ from the team's and were kept", kept)
	}
	return nil
}
