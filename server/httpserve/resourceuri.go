package httpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/r2r-mcp/r2r-mcp/tools"
)

// serveMCP hands a request to u's MCP handler, after answering a resources/read of a
// malformed URI itself as invalid params (tools.ResourceURIProblem), as the stdio front door
// does: mcp-go reports every error of a resource handler as an internal error.
func serveMCP(u *user, w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body) // bounded by serveUser's MaxBytesReader
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		if id, msg := malformedRead(body); err == nil && msg != "" {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: id,
				Error: mcp.NewJSONRPCErrorDetails(mcp.INVALID_PARAMS, msg, nil)})
			return
		}
	}
	u.mcp.ServeHTTP(w, r)
}

// malformedRead returns the id of a single resources/read message whose URI is malformed,
// and what is wrong with it; "" for every other message.
func malformedRead(body []byte) (mcp.RequestId, string) {
	var m struct {
		ID     mcp.RequestId `json:"id"`
		Method string        `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != string(mcp.MethodResourcesRead) || m.ID.IsNil() {
		return m.ID, ""
	}
	return m.ID, tools.ResourceURIProblem(m.Params.URI)
}

// errReader ends a body re-read after its first reading with that reading's error (nil:
// io.EOF).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}
