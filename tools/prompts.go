package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// Prompts are what a person asks of the knowledge base by name: clients list them as
// commands (Claude Code: /mcp__r2r__ask). Each renders one user message that names the
// tool to call, its arguments, and how to present what it returns. Claude Code hands a
// prompt only the first word of each argument, so a prompt whose text is a sentence takes
// that sentence as its only argument and tells the model to read the full text the user
// typed when the argument looks cut short.

// Prompt argument bounds: a prompt's text reaches the model, so what a user typed is clipped.
const (
	maxPromptArgChars = maxQueryChars
	maxCompletions    = 100 // the MCP limit on completion values
)

// promptDef is one prompt: its definition, its handler, and the completion of each
// argument whose values are known.
type promptDef struct {
	prompt   mcp.Prompt
	render   func(ctx context.Context, args map[string]string) (string, error)
	complete map[string]func(ctx context.Context, prefix string) ([]string, error)
}

// Prompts returns the prompts of the tools of d: ask, search and resume always, sync and
// remember unless readOnly (their tools are not offered then).
func Prompts(d *Deps, readOnly bool) []server.ServerPrompt {
	d.setup()
	defs := d.promptDefs(readOnly)
	out := make([]server.ServerPrompt, len(defs))
	for i, p := range defs {
		out[i] = server.ServerPrompt{Prompt: p.prompt, Handler: d.promptHandler(p)}
	}
	return out
}

func (d *Deps) promptDefs(readOnly bool) []promptDef {
	defs := []promptDef{d.askPrompt(), d.searchPrompt(), resumePrompt()}
	if !readOnly {
		defs = append(defs, d.syncPrompt(), rememberPrompt())
	}
	return defs
}

func (d *Deps) askPrompt() promptDef {
	return promptDef{
		prompt: mcp.NewPrompt("ask",
			mcp.WithPromptTitle("Ask the knowledge base"),
			mcp.WithPromptDescription("Answer a question from the project's documents, with citations"),
			mcp.WithArgument("question", mcp.RequiredArgument(),
				mcp.ArgumentDescription("The question, in your own words")),
		),
		render: func(_ context.Context, a map[string]string) (string, error) {
			q := a["question"]
			return "Answer this question from the project's R2R knowledge base:\n\n" + q + "\n\n" +
				"Call r2r_rag_query with " + jsonArgs("question", q) + ". " +
				"Give the answer with its [shortid] citations, then list each cited source as title and short id. " +
				"If I asked for sources, passages or where something is written rather than for an answer, call r2r_search with " +
				jsonArgs("query", q) + " instead and list the hits. If the knowledge base has nothing on it, say so; do not answer from memory." +
				cutShort("question"), nil
		},
	}
}

func (d *Deps) searchPrompt() promptDef {
	return promptDef{
		prompt: mcp.NewPrompt("search",
			mcp.WithPromptTitle("Search the knowledge base"),
			mcp.WithPromptDescription("Find the project documents and passages that match a query"),
			mcp.WithArgument("query", mcp.RequiredArgument(),
				mcp.ArgumentDescription("What to look for: words, an identifier, an error message")),
		),
		render: func(_ context.Context, a map[string]string) (string, error) {
			q := a["query"]
			return "Search the project's R2R knowledge base for:\n\n" + q + "\n\n" +
				"Call r2r_search with " + jsonArgs("query", q) + ". " +
				"Show the hits best first, one per line: title (and section), short id, and the matching passage. " +
				"Do not answer beyond what the passages say; offer r2r_get_document to read a whole document. " +
				"If nothing matches, say so and suggest other words." + cutShort("query"), nil
		},
	}
}

func (d *Deps) syncPrompt() promptDef {
	var args []mcp.PromptOption
	remote := d.Projects.Remote()
	if remote {
		args = append(args, mcp.WithArgument("directory", mcp.RequiredArgument(),
			mcp.ArgumentDescription("Absolute path on the server host of the directory to sync (inside an --allow-dir root)")))
	}
	args = append(args,
		mcp.WithArgument("prune", mcp.ArgumentDescription(`"yes" to also delete the documents of files no longer in the project; default no`)),
		mcp.WithArgument("collection", mcp.ArgumentDescription("Collection name or id to sync into; default the project's collection")),
	)
	return promptDef{
		prompt: mcp.NewPrompt("sync", append([]mcp.PromptOption{
			mcp.WithPromptTitle("Sync the project into the knowledge base"),
			mcp.WithPromptDescription("Upload new and changed project files to R2R: a dry run first, then the real sync"),
		}, args...)...),
		render: d.renderSync,
		complete: map[string]func(context.Context, string) ([]string, error){
			"prune":      func(context.Context, string) ([]string, error) { return []string{"yes", "no"}, nil },
			"collection": d.collectionNames,
		},
	}
}

func rememberPrompt() promptDef {
	return promptDef{
		prompt: mcp.NewPrompt("remember",
			mcp.WithPromptTitle("Remember for the team"),
			mcp.WithPromptDescription("Save what was learned (a decision, a fix, a convention, a gotcha) as a team memory of the project"),
			mcp.WithArgument("note", mcp.RequiredArgument(),
				mcp.ArgumentDescription("What to remember, in your own words: the decision and why, the fix and the error it resolves, …")),
			mcp.WithArgument("kind", mcp.ArgumentDescription("One of "+strings.Join(memory.TextKinds, ", ")+"; default: the model picks")),
		),
		render: func(_ context.Context, a map[string]string) (string, error) {
			kind := "the kind that fits (" + strings.Join(memory.TextKinds, ", ") + ")"
			if k := strings.ToLower(a["kind"]); k != "" {
				if !slices.Contains(memory.TextKinds, k) {
					return "", fmt.Errorf("kind must be one of %s, got %q", strings.Join(memory.TextKinds, ", "), a["kind"])
				}
				kind = "kind " + jsonArgs("kind", k)
			}
			return "Save this for everyone on the team who works on this project:\n\n" + a["note"] + "\n\n" +
				"Call r2r_remember with " + kind + ", a one-line title, and a body that stands on its own: what, why, and where. " +
				"For a fix, put the exact error text in error; name the project files it is about in paths. Leave out secrets and personal data. " +
				"Then tell me its id, or that it was already remembered." + cutShort("note"), nil
		},
		complete: map[string]func(context.Context, string) ([]string, error){
			"kind": func(context.Context, string) ([]string, error) { return memory.TextKinds, nil },
		},
	}
}

func resumePrompt() promptDef {
	return promptDef{
		prompt: mcp.NewPrompt("resume",
			mcp.WithPromptTitle("Resume where we left off"),
			mcp.WithPromptDescription("Read the newest checkpoint the team saved for this project and pick the work up from it"),
			mcp.WithArgument("topic", mcp.ArgumentDescription("The task or area to resume; default the newest checkpoint of any")),
		),
		render: func(_ context.Context, a map[string]string) (string, error) {
			args := map[string]any{"kind": memory.KindCheckpoint, "limit": 3}
			if t := a["topic"]; t != "" {
				args["query"] = t
			}
			return "Resume the work from the project's last checkpoint.\n\n" +
				"Call r2r_recall with " + marshalArgs(args) + " and read the best match in full with r2r_get_document. " +
				"Tell me what was done, what is next and who saved it when; say so if it is marked may be stale. " +
				"Then propose the next step and wait for my go-ahead. If there is no checkpoint, say so.", nil
		},
	}
}

// renderSync is the sync prompt's text: a dry run, the plan shown, the real run unless it
// deletes documents the user has not agreed to lose, then the job followed to its end.
func (d *Deps) renderSync(ctx context.Context, a map[string]string) (string, error) {
	args := map[string]any{}
	if dir := a["directory"]; dir != "" {
		args["directory"] = dir
	}
	switch strings.ToLower(strings.TrimSpace(a["prune"])) {
	case "", "no", "false":
	case "yes", "true":
		args["prune"] = true
	default:
		return "", fmt.Errorf(`prune must be "yes" or "no", got %q`, a["prune"])
	}
	var b strings.Builder
	b.WriteString("Bring the project's R2R collection in step with its files.\n\n")
	note := ""
	if c := strings.TrimSpace(a["collection"]); c != "" {
		id, err := d.collectionID(ctx, c)
		switch {
		case err != nil:
			return "", err
		case id == "":
			note = fmt.Sprintf("I asked for the collection %q: find its collection_id with r2r_list_collections and pass it to both calls; if there is none, ask me which collection to use.\n\n", c)
		default:
			args["collection_id"] = id
		}
	}
	b.WriteString(note)
	dry := map[string]any{"dry_run": true}
	for k, v := range args {
		dry[k] = v
	}
	fmt.Fprintf(&b, "1. Call r2r_sync with %s and show me the plan: how many files it would upload, replace and delete, and the files it refuses with their reasons.\n", marshalArgs(dry))
	fmt.Fprintf(&b, "2. If the plan deletes documents, ask me before going on. Otherwise call r2r_sync with %s.\n", marshalArgs(args))
	fmt.Fprintf(&b, "3. Follow the job with r2r_sync_status (the job_id from step 2, wait_seconds %d) until it has finished, "+
		"then report what was uploaded, replaced, deleted and what failed.", maxStatusWait)
	return b.String(), nil
}

// collectionID is the id of the collection the user named by c, an id or a name; "" when
// no collection among the first maxCompletions has that name.
func (d *Deps) collectionID(ctx context.Context, c string) (string, error) {
	if u, err := uuid.Parse(c); err == nil && len(c) == 36 {
		return u.String(), nil
	}
	page, _, err := d.loadCollections(ctx, nil, d.loader, 0, maxCompletions)
	if err != nil {
		return "", nil // the model looks it up itself
	}
	var found []string
	for _, col := range page.Items {
		if col.Name == c {
			found = append(found, col.CollectionID)
		}
	}
	if len(found) != 1 {
		return "", nil
	}
	return found[0], nil
}

// collectionNames are the names of the collections the credential sees that start with prefix.
func (d *Deps) collectionNames(ctx context.Context, prefix string) ([]string, error) {
	page, _, err := d.loadCollections(ctx, nil, d.loader, 0, maxCompletions)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range page.Items {
		if !slices.Contains(names, c.Name) && c.Name != "" {
			names = append(names, c.Name)
		}
	}
	return names, nil
}

// promptHandler checks the required arguments, clips what was typed and renders the
// message, within the deadline of a tool call.
func (d *Deps) promptHandler(p promptDef) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := map[string]string{}
		for _, a := range p.prompt.Arguments {
			v := strings.TrimSpace(req.Params.Arguments[a.Name])
			if a.Required && v == "" {
				return nil, fmt.Errorf("the %s prompt needs its %s argument", p.prompt.Name, a.Name)
			}
			args[a.Name] = cleantext.Runes(Sanitize(v), maxPromptArgChars)
		}
		for name := range req.Params.Arguments {
			if !slices.ContainsFunc(p.prompt.Arguments, func(a mcp.PromptArgument) bool { return a.Name == name }) {
				return nil, fmt.Errorf("the %s prompt has no argument %q", p.prompt.Name, cleantext.Runes(name, 64))
			}
		}
		ctx, cancel := d.boundedCtx(ctx)
		defer cancel()
		text, err := p.render(ctx, args)
		if err != nil {
			return nil, err
		}
		return mcp.NewGetPromptResult(p.prompt.Description,
			[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
	}
}

// jsonArgs is {"name": value} as JSON.
func jsonArgs(name, value string) string { return marshalArgs(map[string]any{name: value}) }

// marshalArgs is m as JSON, with <, > and & as they are (the model reads it).
func marshalArgs(m map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cutShort tells the model what to do when a client passed only part of the argument.
func cutShort(arg string) string {
	return "\n\n(If the " + arg + " above looks cut short, use the full text I typed after the command.)"
}
