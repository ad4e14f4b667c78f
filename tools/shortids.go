package tools

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools/memory"
)

// maxShownIDs bounds the document ids remembered for short-id lookups: the oldest go first.
const maxShownIDs = 4096

// shownIDs remembers the document ids this server has shown the model (search hits, RAG
// sources, document listings, ingests), so that a tool taking a document_id also accepts the
// short form those results display ("doc e5156baf", "[e5156ba]") when it is a unique prefix
// of one of them.
type shownIDs struct {
	mu    sync.Mutex
	order []string // oldest first
	set   map[string]bool
}

// remember records full document ids.
func (s *shownIDs) remember(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		s.set = map[string]bool{}
	}
	for _, id := range ids {
		if len(id) != 36 || s.set[id] {
			continue
		}
		if len(s.order) == maxShownIDs {
			delete(s.set, s.order[0])
			s.order = s.order[1:]
		}
		s.order = append(s.order, id)
		s.set[id] = true
	}
}

// matching returns the remembered ids that start with prefix, sorted.
func (s *shownIDs) matching(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.order {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// minShortID is the shortest prefix accepted, for documents as for memories.
const minShortID = memory.MinShortID

// documentIDParam is the document_id parameter of the tools that take one: a UUID, or the
// short id a result of this session showed. purpose says what the id is for and where it
// comes from.
func documentIDParam(purpose string) mcp.ToolOption {
	return mcp.WithString("document_id", mcp.Required(), mcp.MinLength(minShortID), mcp.MaxLength(36),
		mcp.Description("Document ID (UUID) "+purpose+", or the short id (a unique prefix of at least 7 hex digits) "+
			"such a result showed"))
}

// documentParams are the arguments of a tool that takes one document.
type documentParams struct {
	DocumentID string `json:"document_id"`
}

func (p *documentParams) check(d *Deps) (err error) {
	p.DocumentID, err = d.documentID("document_id", p.DocumentID)
	return err
}

// documentID reads a document id argument: a full UUID, or the short id a search, RAG
// answer or listing of this session showed, when it is a unique prefix of one of those.
func (d *Deps) documentID(name, s string) (string, error) {
	if err := nonBlank(name, s); err != nil {
		return "", err
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 36 {
		return parseUUIDArg(name, s, documentIDHint)
	}
	if len(s) < minShortID || strings.Trim(s, "0123456789abcdef-") != "" {
		return "", argErr(name, "must be a document id (a UUID like 9fbe403b-c11c-5aae-8ade-ef22980c3ad1, or the "+
			"short id a search or listing showed, at least %d hex digits), got %q; %s", minShortID, s, documentIDHint)
	}
	matches := d.shown.matching(s)
	switch len(matches) {
	case 1:
		if _, err := uuid.Parse(matches[0]); err == nil {
			return matches[0], nil
		}
	case 0:
		return "", argErr(name, "short id %q matches no document this session has shown; pass the full document_id "+
			"from r2r_search or r2r_list_documents", s)
	}
	return "", argErr(name, "short id %q is ambiguous: it starts %s; pass the full document_id", s, quoteIDs(matches))
}

func quoteIDs(ids []string) string {
	if len(ids) > 5 {
		return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return strings.Join(ids, ", ")
}
