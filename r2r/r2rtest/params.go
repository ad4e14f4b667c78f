package r2rtest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// routeTable lists every emulated route. Patterns double as the route names used by Count,
// LastRequest and ForceStatus.
var routeTable = []routeDef{
	{"GET /v3/health", (*call).handleHealth},
	{"GET /v3/system/status", (*call).handleSystemStatus},

	{"POST /v3/users/login", (*call).handleLogin},
	{"POST /v3/users/refresh-token", (*call).handleRefresh},
	{"POST /v3/users/logout", (*call).handleLogout},
	{"GET /v3/users/me", (*call).handleMe},
	{"POST /v3/users", (*call).handleRegister},
	{"DELETE /v3/users/{id}", (*call).handleDeleteUser},
	{"POST /v3/users/{id}/api-keys", (*call).handleCreateAPIKey},
	{"GET /v3/users/{id}/api-keys", (*call).handleListAPIKeys},
	{"DELETE /v3/users/{id}/api-keys/{key_id}", (*call).handleDeleteAPIKey},
	{"GET /v3/users", (*call).handleListUsers},
	{"POST /v3/users/{id}/collections/{collection_id}", (*call).handleUserJoinCollection},

	{"POST /v3/documents", (*call).handleCreateDocument},
	{"GET /v3/documents", (*call).handleListDocuments},
	{"GET /v3/documents/{id}", (*call).handleGetDocument},
	{"GET /v3/documents/{id}/chunks", (*call).handleListChunks},
	{"GET /v3/documents/{id}/download", (*call).handleDownload},
	{"DELETE /v3/documents/{id}", (*call).handleDeleteDocument},
	{"DELETE /v3/documents/by-filter", (*call).handleDeleteByFilter},
	{"PATCH /v3/documents/{id}/metadata", (*call).handlePatchMetadata},
	{"PUT /v3/documents/{id}/metadata", (*call).handlePutMetadata},

	{"GET /v3/collections", (*call).handleListCollections},
	{"POST /v3/collections", (*call).handleCreateCollection},
	{"GET /v3/collections/{id}", (*call).handleGetCollection},
	{"POST /v3/collections/{id}", (*call).handleUpdateCollection},
	{"DELETE /v3/collections/{id}", (*call).handleDeleteCollection},
	// "/collections/{id}/documents", "/collections/{id}/users" and "/collections/name/{name}" overlap, which ServeMux
	// rejects; one pattern serves both (see logicalRoute).
	{"GET /v3/collections/{id}/{sub}", (*call).handleCollectionSub},
	{"POST /v3/collections/{id}/documents/{document_id}", (*call).handleAddDocumentToCollection},
	{"DELETE /v3/collections/{id}/documents/{document_id}", (*call).handleRemoveDocumentFromCollection},
	{"POST /v3/collections/{id}/users/{user_id}", (*call).handleAddCollectionUser},
	{"DELETE /v3/collections/{id}/users/{user_id}", (*call).handleRemoveCollectionUser},

	{"POST /v3/retrieval/search", (*call).handleSearch},
	{"POST /v3/retrieval/rag", (*call).handleRAG},

	{"GET /v3/indices", (*call).handleListIndices},
	{"POST /v3/indices", (*call).handleCreateIndex},
	{"DELETE /v3/indices/{table_name}/{index_name}", (*call).handleDeleteIndex},
}

// logicalRoute maps a ServeMux pattern to the R2R route name used for counters.
func logicalRoute(pattern string, r *http.Request) string {
	if pattern != "GET /v3/collections/{id}/{sub}" {
		return pattern
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 4 && parts[3] == "documents" {
		return "GET /v3/collections/{id}/documents" // FastAPI tries this route first
	}
	if len(parts) == 4 && parts[3] == "users" {
		return "GET /v3/collections/{id}/users"
	}
	if len(parts) == 4 && parts[2] == "name" {
		return "GET /v3/collections/name/{name}"
	}
	return ""
}

func (c *call) handleCollectionSub() {
	switch c.route {
	case "GET /v3/collections/{id}/documents":
		c.handleListCollectionDocuments()
	case "GET /v3/collections/{id}/users":
		c.handleListCollectionUsers()
	case "GET /v3/collections/name/{name}":
		c.handleGetCollectionByName()
	}
}

func (c *call) handleHealth() { c.ok(map[string]any{"message": "ok"}) }

// uuidParam validates a UUID path parameter like FastAPI does (422 on failure) and returns
// its canonical lowercase form.
func (c *call) uuidParam(name string) (string, bool) {
	raw := c.pathValue(name)
	u, err := uuid.Parse(raw)
	if err != nil {
		c.invalid(validationError{Type: "uuid_parsing", Loc: []any{"path", name},
			Msg: "Input should be a valid UUID, " + uuidReason(err), Input: raw,
			Ctx: map[string]any{"error": uuidReason(err)}})
		return "", false
	}
	return u.String(), true
}

func uuidReason(err error) string {
	return strings.TrimPrefix(err.Error(), "invalid UUID ")
}

// listParams are offset/limit (and ids) parsed from the query string.
type listParams struct {
	offset, limit int
	ids           []string
	ownerOnly     bool
}

// parseList validates offset (>= 0), limit (1..1000, default 100), repeated ids and
// owner_only like FastAPI would, answering 422 with the detail list on failure.
func (c *call) parseList(withIDs bool) (listParams, bool) {
	q := c.r.URL.Query()
	p := listParams{offset: 0, limit: 100}
	var errs []validationError
	if v := q.Get("offset"); q.Has("offset") {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			errs = append(errs, intParsing("offset", v))
		case n < 0:
			errs = append(errs, validationError{Type: "greater_than_equal", Loc: []any{"query", "offset"},
				Msg: "Input should be greater than or equal to 0", Input: v, Ctx: map[string]any{"ge": 0}})
		default:
			p.offset = n
		}
	}
	if v := q.Get("limit"); q.Has("limit") {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			errs = append(errs, intParsing("limit", v))
		case n < 1:
			errs = append(errs, validationError{Type: "greater_than_equal", Loc: []any{"query", "limit"},
				Msg: "Input should be greater than or equal to 1", Input: v, Ctx: map[string]any{"ge": 1}})
		case n > 1000:
			errs = append(errs, validationError{Type: "less_than_equal", Loc: []any{"query", "limit"},
				Msg: "Input should be less than or equal to 1000", Input: v, Ctx: map[string]any{"le": 1000}})
		default:
			p.limit = n
		}
	}
	if q.Has("owner_only") {
		b, ok := parseBool(q.Get("owner_only"))
		if !ok {
			errs = append(errs, validationError{Type: "bool_parsing", Loc: []any{"query", "owner_only"},
				Msg: "Input should be a valid boolean, unable to interpret input", Input: q.Get("owner_only")})
		}
		p.ownerOnly = b
	}
	if withIDs {
		for i, v := range q["ids"] {
			u, err := uuid.Parse(v)
			if err != nil {
				errs = append(errs, validationError{Type: "uuid_parsing", Loc: []any{"query", "ids", i},
					Msg: "Input should be a valid UUID, " + uuidReason(err), Input: v,
					Ctx: map[string]any{"error": uuidReason(err)}})
				continue
			}
			p.ids = append(p.ids, u.String())
		}
	}
	if len(errs) > 0 {
		c.invalid(errs...)
		return p, false
	}
	return p, true
}

func intParsing(name, v string) validationError {
	return validationError{Type: "int_parsing", Loc: []any{"query", name},
		Msg: "Input should be a valid integer, unable to parse string as an integer", Input: v}
}

// parseBool accepts pydantic's lax boolean spellings.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on", "t", "y":
		return true, true
	case "false", "0", "no", "off", "f", "n":
		return false, true
	}
	return false, false
}

// window applies offset/limit to n items and returns the slice bounds.
func window(n, offset, limit int) (int, int) {
	if offset > n {
		offset = n
	}
	end := offset + limit
	if end > n {
		end = n
	}
	return offset, end
}
