package r2rtest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// timeFormat is how pydantic serialises TIMESTAMPTZ values (microseconds, Z suffix).
const timeFormat = "2006-01-02T15:04:05.000000Z"

func ts(t time.Time) string { return t.UTC().Format(timeFormat) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonUnmarshal decodes with UseNumber so integers survive round trips.
func jsonUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func (c *call) writeJSON(status int, v any) {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(mustJSON(v))
}

// ok writes {"results": v} with status 200.
func (c *call) ok(v any) { c.writeJSON(http.StatusOK, map[string]any{"results": v}) }

// page writes a paginated list envelope.
func (c *call) page(items any, total int) {
	c.writeJSON(http.StatusOK, map[string]any{"results": items, "total_entries": total})
}

// fail writes R2R's business error shape {"message", "error_type"}.
func (c *call) fail(status int, format string, args ...any) {
	c.writeJSON(status, map[string]any{"message": fmt.Sprintf(format, args...), "error_type": "R2RException"})
}

// detail writes FastAPI's {"detail": str} shape.
func (c *call) detail(status int, msg string) {
	c.writeJSON(status, map[string]any{"detail": msg})
}

// internal writes the 500 shape R2R uses for unexpected exceptions inside an endpoint.
func (c *call) internal(handler, errType, msg string) {
	c.writeJSON(http.StatusInternalServerError, map[string]any{"detail": map[string]any{
		"message":    fmt.Sprintf("An error '%s' occurred during %s", msg, handler),
		"error":      msg,
		"error_type": errType,
	}})
}

// validationError is one entry of FastAPI's 422 detail list.
type validationError struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

func (c *call) invalid(errs ...validationError) {
	c.writeJSON(http.StatusUnprocessableEntity, map[string]any{"detail": errs})
}
