package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
	"github.com/r2r-mcp/r2r-mcp/tools/project"
)

// GroupMemory is the group of the team-memory tools.
const GroupMemory = "memory"

// Refusal kinds of the memory tools.
const (
	refuseSecretInMemory = "secret_in_memory"
	refuseNotAMemory     = "not_a_memory"
	refuseNotOwner       = "not_the_owner"
)

// RememberOutput is the structured result of r2r_remember.
type RememberOutput struct {
	ID    string `json:"id" required:"true" desc:"the memory's id (deterministic: the same content is the same memory); r2r_get_document reads it, r2r_forget deletes it"`
	Kind  string `json:"kind" required:"true" enum:"memoryKinds" desc:"the memory's kind"`
	Title string `json:"title" required:"true" desc:"its title"`
	// Status is saved or already_remembered.
	Status          string `json:"status" required:"true" enum:"saved,already_remembered" desc:"saved: stored now; already_remembered: the same memory existed, nothing was sent"`
	IngestionStatus string `json:"ingestion_status,omitempty" desc:"R2R's ingestion status of the memory, when known"`
	Superseded      string `json:"superseded_id,omitempty" desc:"the memory this one supersedes"`
	// Outcome is one of memory.Outcome*.
	Outcome      string `json:"superseded,omitempty" enum:"memoryOutcomes" desc:"what became of it: deleted (by R2R); hidden (another user's, which R2R keeps: recall, search and RAG leave it out for everyone); gone (no longer in the collection); pending (kept until this one is searchable); still_shown (R2R kept it and it is still found: see message)"`
	OldAuthor    string `json:"superseded_author,omitempty" desc:"who saved the superseded memory, when R2R kept it"`
	IDTaken      bool   `json:"id_taken,omitempty" desc:"true when the memory's usual id held another user's document, so it was saved under a new id"`
	Version      int    `json:"version,omitempty" desc:"a skill's version: 1, then one more for each change"`
	CollectionID string `json:"collection_id" required:"true" desc:"the collection the memory is in"`
	Message      string `json:"message" required:"true" desc:"what happened"`
}

func rememberDef() mcp.Tool {
	const title = "Remember for the team"
	return newTool("r2r_remember",
		mcp.WithToolTitle(title),
		mcp.WithDescription("Save one memory for everyone on the team who reads this project's collection: a decision and why, "+
			"a convention, the fix of an error (kind fix, with the error text), a gotcha, a checkpoint (what was done and what is next), or a note. "+
			"Returns its id at once. The same content saved again is the same memory. To correct a memory, save the new one with supersedes. "+
			"Never put secrets in a memory: one that looks like it holds one is refused."),
		searchHint("remember save note decision fix for the team"),
		annotations(title, false, true, true, false),
		withOutputSchema(outputSchema[RememberOutput]()),
		inputSchema[rememberParams](),
	)
}

// rememberParams are one r2r_remember call's arguments.
type rememberParams struct {
	Kind         string   `json:"kind" required:"true" enum:"memoryKinds" desc:"decision, convention, fix (an error and its fix), gotcha, checkpoint (done / next, to resume later), note, or skill (body: a SKILL.md, title: its name; a slash command for the team)"`
	Title        string   `json:"title" required:"true" min:"1" max:"memoryTitleChars" desc:"One line that says what the memory is, e.g. \"Use pgx, not lib/pq\""`
	Body         string   `json:"body" required:"true" min:"1" max:"memoryBodyBytes" desc:"The memory itself (at most 8 KiB): what, why, how; for a checkpoint what was done and what is next"`
	Error        string   `json:"error" max:"memoryErrorBytes" desc:"For kind fix: the error message the fix resolves, as it appears (so pasting it into r2r_recall finds the fix)"`
	Paths        []string `json:"paths" max:"memoryPaths" itemmin:"1" itemmax:"memoryPathChars" desc:"Project files the memory is about, relative to the project root; recall marks it as maybe stale once they change"`
	Tags         []string `json:"tags" max:"memoryTags" itemmin:"1" itemmax:"memoryTagChars" desc:"Free tags to filter recall by"`
	Supersedes   string   `json:"supersedes" min:"minShortID" max:"36" desc:"Id of a memory this one replaces (a UUID, or the short id r2r_recall showed). Once this one is searchable your own is deleted; another user's, which R2R lets only them delete, stays in R2R and is left out of everyone's recall, search and RAG"`
	CollectionID string   `json:"collection_id" max:"36" desc:"Collection ID (UUID) to save in; omit to use the current project's collection (created on first use)"`
}

func (p *rememberParams) check(d *Deps) (err error) {
	if err = nonBlank("title", p.Title); err != nil {
		return err
	}
	if err = nonBlank("body", p.Body); err != nil {
		return err
	}
	if p.Supersedes != "" {
		if p.Supersedes, err = d.documentID("supersedes", p.Supersedes); err != nil {
			return err
		}
	}
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

func rememberTool(d *Deps) Tool {
	def := rememberDef()
	return Tool{Def: def, Group: GroupMemory, ReadOnly: false, Example: Example{Args: map[string]any{"kind": "decision", "title": "Use pgx, not lib/pq", "body": "pgx supports COPY and context cancellation."}}, run: bound(d, def, func(ctx context.Context, _ *call, _ mcp.CallToolRequest, p rememberParams) (*mcp.CallToolResult, error) {
		return d.remember(ctx, p), nil
	})}
}

// remember saves one memory. The draft is checked for secrets before anything is sent:
// a refused memory costs R2R no request at all.
func (d *Deps) remember(ctx context.Context, p rememberParams) *mcp.CallToolResult {
	pr, err := d.Projects.Project(ctx)
	if err != nil && !d.Projects.Remote() {
		return d.scopes.projectErrorResult(ctx, err)
	}
	draft, err := memory.Normalise(memory.Draft{Kind: p.Kind, Title: p.Title, Body: p.Body, Error: p.Error,
		Paths: relativePaths(pr, p.Paths), Tags: p.Tags, Supersedes: p.Supersedes})
	if err == nil {
		err = memory.Check(draft)
	}
	if err == nil {
		err = CheckSkillName(draft)
	}
	if res := memoryErrorResult(err); res != nil {
		return res
	}
	s, _, errRes := d.writeScope(ctx, &pr, p.CollectionID)
	if errRes != nil {
		return errRes
	}
	user, err := d.Projects.User(ctx, d.Client)
	if err != nil {
		return d.scopes.projectErrorResult(ctx, err)
	}
	st := memory.Stamp{UserID: user.ID, Time: d.now()}
	if root := localRoot(d, pr); root != "" {
		st.Commit = memory.Basis(ctx, root, pr.CollectionID != "")
	}
	saved, version, err := d.saveMemory(ctx, s.ID, draft, st)
	if res := memoryErrorResult(err); res != nil {
		return res
	}
	if err != nil {
		return r2rErrorResult(ctx, err, d.Client.BaseURL(), docNotFound(draft.Supersedes))
	}
	d.shown.remember(saved.ID)
	o := RememberOutput{ID: saved.ID, Kind: draft.Kind, Title: clipJSON(draft.Title, maxTitleBytes), Status: "saved",
		IngestionStatus: clipJSON(saved.Status, maxEnumBytes), Superseded: saved.Supersedes, Outcome: saved.Outcome,
		OldAuthor: clipJSON(Sanitize(saved.OldAuthor), maxTitleBytes), IDTaken: saved.IDTaken, CollectionID: s.ID, Version: version}
	if saved.Already {
		o.Status = "already_remembered"
	}
	o.Message = rememberMessage(o, s)
	return result(o.Message, o)
}

func rememberMessage(o RememberOutput, s *scope) string {
	var b strings.Builder
	if o.Status == "already_remembered" {
		fmt.Fprintf(&b, "Already remembered: the same %s %q is memory %s in %s; nothing was sent.", o.Kind, o.Title, o.ID, s.label())
	} else {
		fmt.Fprintf(&b, "Remembered %s %q as memory %s in %s", o.Kind, o.Title, o.ID, s.label())
		if o.Version > 0 {
			fmt.Fprintf(&b, ", version %d (a prompt of every teammate's session)", o.Version)
		}
		if o.IngestionStatus != "" && o.IngestionStatus != "success" {
			fmt.Fprintf(&b, " (R2R is indexing it: %s)", o.IngestionStatus)
		}
		b.WriteString(".")
	}
	if o.IDTaken {
		b.WriteString(" Its usual id held another user's document, which was left alone, so it has a new id.")
	}
	switch o.Outcome {
	case memory.OutcomeDeleted:
		fmt.Fprintf(&b, " It replaced memory %s, which R2R deleted.", o.Superseded)
	case memory.OutcomeHidden:
		fmt.Fprintf(&b, " Memory %s, which it supersedes, is hidden from the team's recall, search and RAG; R2R keeps it, as only its author %s (or an admin) can delete it.",
			o.Superseded, o.OldAuthor)
	case memory.OutcomeGone:
		fmt.Fprintf(&b, " Memory %s, which it supersedes, was no longer in the collection.", o.Superseded)
	case memory.OutcomePending:
		fmt.Fprintf(&b, " Memory %s, which it supersedes, was kept for now, since this one is not searchable yet; recall, search and RAG leave it out once this one is.", o.Superseded)
	case memory.OutcomeShown:
		fmt.Fprintf(&b, " Memory %s, which it supersedes, is still found: R2R keeps it, as only its author %s (or an admin) can delete it, "+
			"and this memory existed already without naming it. Ask %s to forget it.", o.Superseded, o.OldAuthor, o.OldAuthor)
	}
	return b.String()
}

// memoryErrorResult maps the memory package's refusals; nil for other errors (and nil).
func memoryErrorResult(err error) *mcp.CallToolResult {
	if me, ok := errors.AsType[*memory.Error](err); ok {
		if me.Secret {
			return refusal(refuseSecretInMemory, "Not remembered: "+me.Error()+".")
		}
		return invalidArgs(argErr(me.Field, "%s", me.Msg))
	}
	if no, ok := errors.AsType[*memory.NotOwnerError](err); ok {
		return refusal(refuseNotOwner, fmt.Sprintf("Not deleted: %s. To hide it from the team, save the corrected memory with supersedes %s.",
			Sanitize(no.Error()), no.ID))
	}
	if errors.Is(err, memory.ErrNotMemory) {
		return refusal(refuseNotAMemory, "Refused: "+err.Error()+". r2r_forget and supersedes act only on memories of the project's collection "+
			"(r2r_recall lists them); r2r_delete_document deletes ingested files.")
	}
	return nil
}

// memoryStore is the memory store of collection collID. A superseding save waits for the
// new memory at most until shortly before the call's deadline.
func (d *Deps) memoryStore(ctx context.Context, collID string) *memory.Store {
	wait := d.IngestWait // 0 = the store's own bound
	if dl, ok := ctx.Deadline(); ok {
		if left := max(time.Until(dl)-time.Second, time.Millisecond); wait <= 0 || left < wait {
			wait = left
		}
	}
	return &memory.Store{API: d.Client, CollectionID: collID, Wait: wait, Poll: d.PollInterval,
		OnWrite: func() { d.writes.wrote(collID) }}
}

// localRoot is the root of pr when it is a local project (git commands run there); "" on a
// remote server or outside a project.
func localRoot(d *Deps, pr project.Project) string {
	if d.Projects.Remote() || pr.Root == "" || project.NotAProject(pr.Root) {
		return ""
	}
	return pr.Root
}

// relativePaths makes absolute paths inside the project relative to its root; others are
// left for memory.Normalise to judge.
func relativePaths(pr project.Project, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p
		if pr.Root == "" || !filepath.IsAbs(p) {
			continue
		}
		if rel, err := filepath.Rel(pr.Root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			out[i] = filepath.ToSlash(rel)
		}
	}
	return out
}

// ForgetOutput is the structured result of r2r_forget.
type ForgetOutput struct {
	ID      string `json:"id" required:"true" desc:"id of the deleted memory"`
	Kind    string `json:"kind" required:"true" enum:"memoryKinds" desc:"its kind"`
	Title   string `json:"title" required:"true" desc:"its title"`
	Deleted bool   `json:"deleted" required:"true" desc:"true: R2R deleted the memory"`
	Message string `json:"message" required:"true" desc:"what was deleted"`
}

func forgetTool(d *Deps, sc *scoper) Tool {
	const title = "Forget a memory"
	def := newTool("r2r_forget",
		mcp.WithToolTitle(title),
		mcp.WithDescription("Delete one of your memories of the project's collection by id, for the whole team. Only memories: ingested files are refused "+
			"(r2r_delete_document deletes those), and so is a teammate's memory, which R2R lets only its author delete (the refusal names them). "+
			"To correct a memory rather than drop it, use r2r_remember with supersedes."),
		searchHint("forget delete a team memory"),
		annotations(title, false, true, true, false),
		withOutputSchema(outputSchema[ForgetOutput]()),
		inputSchema[forgetParams](),
	)
	return Tool{Def: def, Group: GroupMemory, ReadOnly: false, Example: Example{Args: map[string]any{"memory_id": "5f0e6a54-2f27-4f59-9d1c-0d3c1e6b7a11"}, Error: "not_a_memory"}, run: bound(d, def, func(ctx context.Context, c *call, _ mcp.CallToolRequest, p forgetParams) (*mcp.CallToolResult, error) {
		s, errRes := sc.resolve(ctx, c, p.CollectionID, false)
		if errRes != nil {
			return errRes, nil
		}
		if s.missing() {
			return refusal(refuseNotAMemory, fmt.Sprintf("Not deleted: the project's collection %s does not exist yet, so it holds no memory %s.", s.Name, p.MemoryID)), nil
		}
		m, err := d.memoryStore(ctx, s.ID).Forget(ctx, p.MemoryID)
		if res := memoryErrorResult(err); res != nil {
			return res, nil
		}
		if err != nil {
			return r2rErrorResult(ctx, err, d.Client.BaseURL(), errHints{NotFound: fmt.Sprintf("Memory %s was not found (404); r2r_recall lists the project's memories.", p.MemoryID)}), nil
		}
		o := ForgetOutput{ID: p.MemoryID, Kind: m.Kind, Title: clipJSON(Sanitize(m.Title), maxTitleBytes), Deleted: true}
		o.Message = fmt.Sprintf("Forgot %s %q (memory %s) in %s.", o.Kind, o.Title, o.ID, s.label())
		return result(o.Message, o), nil
	})}
}

// forgetParams are one r2r_forget call's arguments.
type forgetParams struct {
	MemoryID     string `json:"memory_id" required:"true" min:"minShortID" max:"36" desc:"Id of the memory to delete: a UUID, or the short id r2r_recall showed"`
	CollectionID string `json:"collection_id" max:"36" desc:"Collection ID (UUID) the memory is in; omit for the current project's collection"`
}

func (p *forgetParams) check(d *Deps) (err error) {
	if p.MemoryID, err = d.documentID("memory_id", p.MemoryID); err != nil {
		return err
	}
	p.CollectionID, err = optUUID("collection_id", p.CollectionID, collectionIDHint)
	return err
}

// memoryCounts is "5 (2 fix, 3 decision)", kinds in memory.Kinds order; "none" for none.
func memoryCounts(counts map[string]int) string {
	total := 0
	var parts []string
	for _, k := range memory.Kinds {
		if n := counts[k]; n > 0 {
			total += n
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if total == 0 {
		return "none"
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}
