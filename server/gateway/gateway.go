// Package gateway is the REST face of the tool registry for programs that do not speak MCP:
// GET /mcp/tools lists the tools as published over MCP, and POST /mcp/invoke
// {"tool", "arguments"} calls one through the MCP server itself (a tools/call message), so
// validation, middleware and handlers are exactly those of MCP clients. An error result's
// class becomes the HTTP status: 400 invalid arguments, 401 authentication, 429 rate
// limited, 503 circuit breaker open, 502 R2R error, 500 anything else.
package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/r2r-mcp/r2r-mcp/tools"
	"github.com/r2r-mcp/r2r-mcp/tools/toolerr"
)

// MaxRequestBytes bounds an invoke request's body.
const MaxRequestBytes = 1 << 20

// ToolsResponse is GET /mcp/tools's answer: the registry's definitions as MCP publishes
// them (name, title, description, inputSchema, outputSchema, annotations).
type ToolsResponse struct {
	Tools []mcp.Tool `json:"tools"`
}

// InvokeRequest is POST /mcp/invoke's body.
type InvokeRequest struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

// InvokeResponse is POST /mcp/invoke's answer: the result's text, its structured value and,
// for a failed call, the error.
type InvokeResponse struct {
	Tool       string `json:"tool,omitempty"`
	Text       string `json:"text"`
	Structured any    `json:"structured,omitempty"`
	Error      *Error `json:"error,omitempty"`
	// ArgumentsRead lists the arguments sent in a loose form that the server read as their
	// tool's schema says (a near-miss name, a value alias, a JSON string), as MCP clients
	// get them in the result's _meta.
	ArgumentsRead any `json:"arguments_read,omitempty"`
}

// Error is a failed call's class, as in an MCP error result's _meta.
type Error struct {
	Type       string   `json:"type"`
	Code       int      `json:"code"`
	Retryable  bool     `json:"retryable"`
	RetryAfter *float64 `json:"retry_after,omitempty"`
	Status     int      `json:"status,omitempty"` // R2R's HTTP status
	Message    string   `json:"message,omitempty"`
}

// New returns the handler of GET /mcp/tools and POST /mcp/invoke for the tools defs of srv.
func New(srv *mcpserver.MCPServer, defs []mcp.Tool) http.Handler {
	g := &gateway{srv: srv, defs: defs, known: map[string]bool{}}
	for _, d := range defs {
		g.known[d.Name] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mcp/tools", g.list)
	mux.HandleFunc("POST /mcp/invoke", g.invoke)
	return mux
}

type gateway struct {
	srv   *mcpserver.MCPServer
	defs  []mcp.Tool
	known map[string]bool
}

func (g *gateway) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ToolsResponse{Tools: g.defs})
}

func (g *gateway) invoke(w http.ResponseWriter, r *http.Request) {
	var in InvokeRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		WriteError(w, http.StatusBadRequest, Error{Type: "invalid_request", Code: toolerr.CodeInvalidParams,
			Message: "The body must be one JSON object {\"tool\": \"<name>\", \"arguments\": {...}}: " + err.Error()})
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		WriteError(w, http.StatusBadRequest, Error{Type: "invalid_request", Code: toolerr.CodeInvalidParams,
			Message: "The body must hold exactly one JSON object."})
		return
	}
	if !g.known[in.Tool] {
		WriteError(w, http.StatusNotFound, Error{Type: "unknown_tool", Code: toolerr.CodeInvalidParams,
			Message: fmt.Sprintf("No tool %q here; GET /mcp/tools lists the tools.", in.Tool)})
		return
	}
	if in.Arguments == nil {
		in.Arguments = map[string]any{}
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": in.Tool, "arguments": in.Arguments}})
	if err != nil {
		WriteError(w, http.StatusBadRequest, Error{Type: "invalid_request", Code: toolerr.CodeInvalidParams, Message: err.Error()})
		return
	}
	raw, err := json.Marshal(g.srv.HandleMessage(r.Context(), msg))
	if err != nil {
		WriteError(w, http.StatusInternalServerError, Error{Type: "internal", Code: toolerr.CodeInternal, Message: err.Error()})
		return
	}
	var reply struct {
		Result *mcp.CallToolResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil || (reply.Result == nil && reply.Error == nil) {
		WriteError(w, http.StatusInternalServerError, Error{Type: "internal", Code: toolerr.CodeInternal,
			Message: "the MCP server gave no result"})
		return
	}
	if reply.Error != nil {
		status := http.StatusInternalServerError
		if reply.Error.Code == mcp.INVALID_PARAMS {
			status = http.StatusBadRequest
		}
		WriteError(w, status, Error{Type: "protocol", Code: reply.Error.Code, Message: reply.Error.Message})
		return
	}
	writeResult(w, in.Tool, reply.Result)
}

// writeResult answers with a tool's result; an error result gets its class's status.
func writeResult(w http.ResponseWriter, tool string, res *mcp.CallToolResult) {
	out := InvokeResponse{Tool: tool, Text: text(res), Structured: res.StructuredContent}
	if res.Meta != nil {
		out.ArgumentsRead = res.Meta.AdditionalFields[tools.ArgumentsMetaKey]
	}
	if !res.IsError {
		writeJSON(w, http.StatusOK, out)
		return
	}
	info, ok := toolerr.Of(res)
	if !ok {
		info = toolerr.Info{Type: "error", Code: toolerr.CodeInternal}
	}
	out.Error = &Error{Type: info.Type, Code: info.Code, Retryable: info.Retryable, RetryAfter: info.RetryAfter, Status: info.Status}
	if info.RetryAfter != nil {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(*info.RetryAfter+0.999))))
	}
	writeJSON(w, StatusOf(info.Code), out)
}

// StatusOf is the HTTP status of an error result's code.
func StatusOf(code int) int {
	switch code {
	case toolerr.CodeInvalidParams:
		return http.StatusBadRequest
	case toolerr.CodeAuth:
		return http.StatusUnauthorized
	case toolerr.CodeRateLimited:
		return http.StatusTooManyRequests
	case toolerr.CodeBreakerOpen:
		return http.StatusServiceUnavailable
	case toolerr.CodeR2RAPI:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// CodeOf is the error code of an HTTP status the transport answers itself.
func CodeOf(status int) int {
	switch status {
	case http.StatusBadRequest, http.StatusNotFound:
		return toolerr.CodeInvalidParams
	case http.StatusUnauthorized, http.StatusForbidden:
		return toolerr.CodeAuth
	case http.StatusTooManyRequests:
		return toolerr.CodeRateLimited
	case http.StatusServiceUnavailable:
		return toolerr.CodeR2RAPI
	}
	return toolerr.CodeInternal
}

func text(res *mcp.CallToolResult) string {
	var b bytes.Buffer
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// WriteError answers with an error body {"error": {...}} and status.
func WriteError(w http.ResponseWriter, status int, e Error) {
	writeJSON(w, status, InvokeResponse{Text: e.Message, Error: &e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
