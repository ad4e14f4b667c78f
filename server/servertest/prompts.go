package servertest

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// ListPrompts returns the names and titles of the session's prompts.
func (s *Session) ListPrompts(ctx context.Context) (map[string]string, error) {
	res, err := s.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range res.Prompts {
		out[p.Name] = p.Title
	}
	return out, nil
}

// GetPrompt returns the text of prompt name's messages with args, one per line.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (string, error) {
	req := mcp.GetPromptRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := s.client.GetPrompt(ctx, req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range res.Messages {
		if tc, ok := m.Content.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}
