package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools/cleantext"
)

// PromptCompletions completes the prompt arguments whose values are known: collection
// names (read from R2R), sync's prune. Values are those starting with what was typed,
// case-insensitively, at most 100.
func PromptCompletions(d *Deps, readOnly bool) server.PromptCompletionProvider {
	d.setup()
	return promptCompleter{d: d, defs: d.promptDefs(readOnly)}
}

type promptCompleter struct {
	d    *Deps
	defs []promptDef
}

// CompletePromptArgument implements server.PromptCompletionProvider.
func (c promptCompleter) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	i := slices.IndexFunc(c.defs, func(p promptDef) bool { return p.prompt.Name == prompt })
	if i < 0 {
		return nil, fmt.Errorf("no prompt %q", cleantext.Runes(prompt, 64))
	}
	complete := c.defs[i].complete[arg.Name]
	if complete == nil {
		return &mcp.Completion{Values: []string{}}, nil
	}
	ctx, cancel := c.d.boundedCtx(ctx)
	defer cancel()
	all, err := complete(ctx, arg.Value)
	if err != nil {
		return nil, fmt.Errorf("cannot list the values of %s: %s", arg.Name, cleantext.Runes(Sanitize(err.Error()), 200))
	}
	values := []string{}
	typed := strings.ToLower(arg.Value)
	for _, v := range all {
		if strings.HasPrefix(strings.ToLower(v), typed) {
			values = append(values, v)
		}
	}
	out := &mcp.Completion{Values: values, Total: len(values)}
	if len(values) > maxCompletions {
		out.Values, out.HasMore = values[:maxCompletions], true
	}
	return out, nil
}

// ResourceCompletions completes the document_id of r2r://documents/{document_id} with the
// ids of the current project's documents (the first maxCompletions R2R lists) that start
// with what was typed.
func ResourceCompletions(d *Deps) server.ResourceCompletionProvider {
	d.setup()
	return resourceCompleter{d: d}
}

type resourceCompleter struct{ d *Deps }

// CompleteResourceArgument implements server.ResourceCompletionProvider.
func (c resourceCompleter) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	out := &mcp.Completion{Values: []string{}}
	if uri != DocumentTemplateURI || arg.Name != "document_id" {
		return out, nil
	}
	d := c.d
	ctx, cancel := d.boundedCtx(ctx)
	defer cancel()
	s, errRes := d.scopes.resolve(ctx, nil, "", false)
	if errRes != nil || s.missing() {
		return out, nil // no project collection: nothing to offer
	}
	o, _, err := d.documentPage(ctx, nil, d.loader, s, listParams{Limit: maxCompletions, Filter: "all"})
	if err != nil {
		return nil, fmt.Errorf("cannot list the project's documents: %s", cleantext.Runes(Sanitize(err.Error()), 200))
	}
	prefix := strings.ToLower(arg.Value)
	for _, doc := range o.Documents {
		if strings.HasPrefix(strings.ToLower(doc.DocumentID), prefix) {
			out.Values = append(out.Values, doc.DocumentID)
		}
	}
	out.Total, out.HasMore = len(out.Values), o.Total > len(o.Documents) && prefix == ""
	return out, nil
}

// boundedCtx bounds a prompt's or a completion's work like a tool call without a deadline
// of its own, with the credentials' advice at hand for errors.
func (d *Deps) boundedCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(withAuth(ctx, d.authState), d.CallTimeout)
}
