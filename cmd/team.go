package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/r2r-mcp/r2r-mcp/auth/atomicfile"
	"github.com/r2r-mcp/r2r-mcp/cmd/jsonc"
	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/kbsync"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
	"github.com/r2r-mcp/r2r-mcp/tools/team"
)

type teamOptions struct {
	Dir      string // the repository (any directory in it); "" = the working directory
	JSON     bool
	Name     string // team init: the collection's name
	DryRun   bool   // team cleanup
	Memories bool   // team cleanup: departed members' memories too
	Users    []string

	r2rCmd
}

func newTeamCmd(deps Deps, runF func(*teamOptions) error) *cobra.Command {
	opts := &teamOptions{r2rCmd: r2rCmd{Deps: deps}}
	parent := &cobra.Command{
		Use:   "team",
		Short: "Share the repository's knowledge base with your team",
		Long: `Show the repository's team collection: its owner, its members, and whether you are one.

A team shares one R2R collection per repository, named by id in the repository's
.r2r-mcp.json (commit it). "team init" creates or adopts it, "team add" and "team remove"
manage its members (its owner only), "team cleanup" takes the documents of people who are
no longer members out of it.`,
		Example: `  r2r-mcp team
  r2r-mcp team init && git add .r2r-mcp.json && git commit -m "Share the knowledge base"
  r2r-mcp team add bob@example.com
  r2r-mcp team cleanup --dry-run`,
		Args: cobra.NoArgs,
		RunE: runE(opts, nil, runF, runTeamShow),
	}
	addTeamFlags(parent, opts)
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create (or adopt) the team collection and record its id in .r2r-mcp.json",
		Long: `Create the repository's team collection, or adopt your own collection of that name, and
write its id and your email (its owner) into .r2r-mcp.json at the repository's root, keeping
what else the file holds. Commit the file: everyone's r2r-mcp then uses that collection.

With a team collection configured already, nothing is written: it says what you are in it.`,
		Args: cobra.NoArgs,
		RunE: runE(opts, nil, runF, runTeamInit),
	}
	addTeamFlags(initCmd, opts)
	initCmd.Flags().StringVar(&opts.Name, "name", "", "the collection's name (default claude-code-<repository>)")
	addCmd := &cobra.Command{
		Use:   "add USER...",
		Short: "Add members (by email or R2R user id) to the team collection",
		Long: `Add members to the team collection; only its owner may. A user is named by R2R user id (a
teammate's "r2r-mcp team" prints theirs) or by email (R2R lets only a superuser look an
email up).`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(opts, func(args []string) error { opts.Users = args; return nil }, runF, runTeamAdd),
	}
	addTeamFlags(addCmd, opts)
	removeCmd := &cobra.Command{
		Use:   "remove USER...",
		Short: "Remove members from the team collection",
		Long: `Remove members from the team collection; only its owner may. Their documents stay in the
collection until "r2r-mcp team cleanup" takes them out.`,
		Args: cobra.MinimumNArgs(1),
		RunE: runE(opts, func(args []string) error { opts.Users = args; return nil }, runF, runTeamRemove),
	}
	addTeamFlags(removeCmd, opts)
	cleanupCmd := &cobra.Command{
		Use:   "cleanup",
		Short: "Take the documents of former members out of the team collection",
		Long: `Take every document whose owner is no longer a member (removed from the team, or deleted
from R2R) out of the team collection; only its owner may. R2R keeps the documents, owned by
whoever wrote them, in no collection of the team's, so nobody's search finds them. The
team's version of a file stays whoever wrote it: every sync checks it against the team's ref.

Memories of former members are team knowledge and stay unless --memories is given.`,
		Args: cobra.NoArgs,
		RunE: runE(opts, nil, runF, runTeamCleanup),
	}
	addTeamFlags(cleanupCmd, opts)
	cleanupCmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be taken out, change nothing")
	cleanupCmd.Flags().BoolVar(&opts.Memories, "memories", false, "take former members' memories out too")
	parent.AddCommand(initCmd, addCmd, removeCmd, cleanupCmd)
	return parent
}

func addTeamFlags(c *cobra.Command, o *teamOptions) {
	f := c.Flags()
	addURLFlag(f, &o.URL)
	f.StringVarP(&o.Dir, "dir", "C", "", "the repository (default: the working directory)")
	f.BoolVar(&o.JSON, "json", false, "print the result as JSON")
}

// teamTarget is a command's repository, R2R client and team collection.
type teamTarget struct {
	project project.Project
	client  *r2r.Client
	team    *team.Team // nil when no team collection is configured
}

// openTeam resolves the repository and, when .r2r-mcp.json names a collection id, the team.
func (o *teamOptions) openTeam(ctx context.Context) (*teamTarget, error) {
	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("find the working directory: %w", err)
		}
		dir = wd
	}
	pr, err := newProjectResolver(dir).Project(ctx)
	if err != nil {
		return nil, err
	}
	if project.NotAProject(pr.Root) {
		return nil, errors.New(project.NoProjectAdvice(pr.Root))
	}
	client, err := o.open(ctx)
	if err != nil {
		return nil, err
	}
	t := &teamTarget{project: pr, client: client}
	if pr.CollectionID != "" {
		if t.team, err = team.Describe(ctx, client, pr.CollectionID, pr.TeamOwner); err != nil {
			return nil, fmt.Errorf("reading the team collection %s: %w", pr.CollectionID, err)
		}
	}
	return t, nil
}

// noTeam is the error of a command that needs a team collection where none is configured.
func noTeam(pr project.Project) error {
	return fmt.Errorf("%s names no team collection; run `r2r-mcp team init` in %s first", project.ConfigFile, pr.Root)
}

func runTeamShow(o *teamOptions) error {
	t, err := o.openTeam(o.ctx())
	if err != nil {
		return err
	}
	if o.JSON {
		return json.NewEncoder(o.Deps.IO.Out).Encode(teamReport{Root: t.project.Root, Team: t.team})
	}
	if t.team == nil {
		fmt.Fprintf(o.Deps.IO.Out, "%s has no team collection: your syncs go to your own collection %s.\n"+
			"Run `r2r-mcp team init` to create the team's and share it.\n", t.project.Root, t.project.CollectionName)
		return nil
	}
	writeTeam(o.Deps.IO.Out, t.team)
	return nil
}

// teamReport is what `team --json` prints.
type teamReport struct {
	Root string     `json:"root"`
	Team *team.Team `json:"team"`
}

// writeTeam prints a team for people.
func writeTeam(w io.Writer, t *team.Team) {
	name := t.Name
	if name == "" {
		name = "(not visible to you)"
	}
	fmt.Fprintf(w, "Team collection  %s  %s\n", t.CollectionID, name)
	fmt.Fprintf(w, "Owner            %s\n", (team.Member{ID: t.OwnerID, Email: t.OwnerEmail}).Label())
	fmt.Fprintf(w, "You              %s (%s): %s\n", t.Me.Label(), t.Me.ID, t.Access)
	if t.Access == team.AccessNone {
		fmt.Fprintf(w, "\n%s\n", team.JoinAdvice(t))
		return
	}
	fmt.Fprintf(w, "Members (%d)\n", len(t.Members))
	for _, m := range t.Members {
		role := ""
		if m.Owner {
			role = "  owner"
		}
		fmt.Fprintf(w, "  %s  %s%s\n", m.ID, m.Email, role)
	}
	for _, warning := range t.Warnings() {
		fmt.Fprintf(w, "! %s\n", warning)
	}
}

func runTeamInit(o *teamOptions) error {
	ctx := o.ctx()
	t, err := o.openTeam(ctx)
	if err != nil {
		return err
	}
	if t.team != nil {
		fmt.Fprintf(o.Deps.IO.ErrOut, "%s already names the team collection; nothing written.\n", project.ConfigFile)
		writeTeam(o.Deps.IO.Out, t.team)
		return nil
	}
	name := o.Name
	if name == "" {
		name = t.project.CollectionName
	}
	col, created, err := team.Adopt(ctx, t.client, name)
	if err != nil {
		return fmt.Errorf("creating the team collection %q: %w", name, err)
	}
	me, err := t.client.Me(ctx)
	if err != nil {
		return err
	}
	path := filepath.Join(t.project.Root, project.ConfigFile)
	if err := writeTeamConfig(path, col.ID, me.Email); err != nil {
		return err
	}
	verb := "Adopted your collection"
	if created {
		verb = "Created the collection"
	}
	fmt.Fprintf(o.Deps.IO.ErrOut, "%s %q (%s) as the team's and wrote its id to %s.\n", verb, col.Name, col.ID, path)
	fmt.Fprintf(o.Deps.IO.ErrOut, "Next:\n  git add %s && git commit -m \"Share the R2R knowledge base\"\n"+
		"  each teammate: r2r-mcp login, then r2r-mcp team (it prints the command that adds them, for you to run)\n",
		project.ConfigFile)
	if o.JSON {
		return json.NewEncoder(o.Deps.IO.Out).Encode(map[string]any{"collection_id": col.ID, "name": col.Name, "created": created, "config_file": path})
	}
	_, err = fmt.Fprintln(o.Deps.IO.Out, col.ID)
	return err
}

// writeTeamConfig records the team collection's id and owner in the configuration at path,
// keeping the rest of the file (its include/exclude lists, comments, layout).
func writeTeamConfig(path, collectionID, ownerEmail string) error {
	src, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		src = []byte("{}\n")
	case err != nil:
		return fmt.Errorf("reading %s: %w", path, err)
	case len(src) > project.MaxConfigBytes:
		return fmt.Errorf("%s is larger than %d KiB; it should hold only r2r-mcp's settings", path, project.MaxConfigBytes>>10)
	}
	out, _, err := jsonc.Merge(src, false, []string{"collection"}, collectionID)
	if err == nil {
		out, _, err = jsonc.Merge(out, false, []string{"owner"}, ownerEmail)
	}
	if err != nil {
		return fmt.Errorf("%s is not valid JSON (%v); fix or remove it, then run this again", path, err)
	}
	return atomicfile.Write(path, out, 0o644)
}

// ownerTeam opens the team and checks the caller owns it (what managing members takes).
func (o *teamOptions) ownerTeam(ctx context.Context) (*teamTarget, error) {
	t, err := o.openTeam(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case t.team == nil:
		return nil, noTeam(t.project)
	case t.team.Access == team.AccessNone:
		return nil, errors.New(team.JoinAdvice(t.team))
	case t.team.Access != team.AccessOwner:
		return nil, fmt.Errorf("only the team collection's owner (%s) can change its members or take documents out of it",
			(team.Member{ID: t.team.OwnerID, Email: t.team.OwnerEmail}).Label())
	}
	return t, nil
}

func runTeamAdd(o *teamOptions) error {
	return o.eachUser(func(ctx context.Context, t *teamTarget, m team.Member) (string, error) {
		if m.Email != "" && isMember(t.team, m.ID) {
			return m.Label() + " is a member already", nil
		}
		if err := t.client.AddUserToCollection(ctx, t.team.CollectionID, m.ID); err != nil {
			if errors.Is(err, r2r.ErrNotFound) {
				return "", fmt.Errorf("R2R has no user %s", m.Label())
			}
			return "", err
		}
		return "added " + m.Label(), nil
	})
}

func runTeamRemove(o *teamOptions) error {
	return o.eachUser(func(ctx context.Context, t *teamTarget, m team.Member) (string, error) {
		switch {
		case m.ID == t.team.OwnerID:
			return "", errors.New("the owner cannot be removed from their own collection")
		case !isMember(t.team, m.ID):
			return m.Label() + " is not a member", nil
		}
		if err := t.client.RemoveUserFromCollection(ctx, t.team.CollectionID, m.ID); err != nil {
			return "", err
		}
		return "removed " + m.Label() + " (run `r2r-mcp team cleanup` to take their documents out)", nil
	})
}

// eachUser runs fn for every user named on the command line, as the collection's owner.
func (o *teamOptions) eachUser(fn func(context.Context, *teamTarget, team.Member) (string, error)) error {
	ctx := o.ctx()
	t, err := o.ownerTeam(ctx)
	if err != nil {
		return err
	}
	failed := 0
	for _, who := range o.Users {
		m, err := team.FindUser(ctx, t.client, t.team, who)
		if err == nil {
			var msg string
			if msg, err = fn(ctx, t, m); err == nil {
				fmt.Fprintln(o.Deps.IO.Out, msg)
				continue
			}
		}
		failed++
		fmt.Fprintf(o.Deps.IO.ErrOut, "%s: %v\n", who, err)
	}
	if failed > 0 {
		return SilentError
	}
	return nil
}

func isMember(t *team.Team, id string) bool {
	for _, m := range t.Members {
		if m.ID == id {
			return true
		}
	}
	return false
}

// departed is one document of a former member.
type departed struct {
	ID     string `json:"document_id"`
	Title  string `json:"title"`
	Owner  string `json:"owner_id"`
	Memory bool   `json:"memory,omitempty"`
}

func runTeamCleanup(o *teamOptions) error {
	ctx := o.ctx()
	t, err := o.ownerTeam(ctx)
	if err != nil {
		return err
	}
	docs, err := departedDocuments(ctx, t, o.Memories)
	if err != nil {
		return err
	}
	removed := 0
	for _, d := range docs {
		if o.DryRun {
			continue
		}
		if err := t.client.RemoveDocumentFromCollection(ctx, t.team.CollectionID, d.ID); err != nil && !errors.Is(err, r2r.ErrNotFound) {
			return fmt.Errorf("taking %s (%s) out of the collection after %d of %d: %w", d.Title, d.ID, removed, len(docs), err)
		}
		removed++
	}
	if o.JSON {
		return json.NewEncoder(o.Deps.IO.Out).Encode(map[string]any{"documents": docs, "removed": removed, "dry_run": o.DryRun})
	}
	for _, d := range docs {
		fmt.Fprintf(o.Deps.IO.Out, "%s  %s  (owner %s)\n", d.ID, d.Title, d.Owner)
	}
	verb := "Took"
	if o.DryRun {
		verb = "Would take"
	}
	fmt.Fprintf(o.Deps.IO.ErrOut, "%s %d document(s) of former members out of the team collection.\n", verb, len(docs))
	return nil
}

// departedDocuments lists the team collection's documents whose owner is not a member.
func departedDocuments(ctx context.Context, t *teamTarget, memories bool) ([]departed, error) {
	members := map[string]bool{t.team.OwnerID: true}
	for _, m := range t.team.Members {
		members[m.ID] = true
	}
	var out []departed
	err := kbsync.EachDocument(ctx, t.client, t.team.CollectionID, func(d r2r.Document) {
		if members[d.OwnerID] || d.Metadata[kbsync.MetaLayer] == kbsync.LayerTeam {
			// A member's, or the team's version of a file whoever wrote it (every sync
			// checks it against the team's ref).
			return
		}
		_, isMemory := d.Metadata[memory.MetaKind]
		if isMemory && !memories {
			return
		}
		title := ""
		if d.Title != nil {
			title = cleantext.Terminal(*d.Title)
		}
		out = append(out, departed{ID: d.ID, Title: title, Owner: d.OwnerID, Memory: isMemory})
	})
	return out, err
}
