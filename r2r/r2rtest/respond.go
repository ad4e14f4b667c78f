package r2rtest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"
)

// Timestamp forms for Options.TimeFormat. R2R 3.6.6 sends TimeFormatZ (conformance test
// documents/timestamps); the others exercise clients against proxies and other versions.
const (
	// TimeFormatZ is how pydantic v2 serialises TIMESTAMPTZ values: microseconds and a Z
	// suffix, 2025-11-06T12:34:56.123456Z (the default).
	TimeFormatZ = "z"
	// TimeFormatOffset is Python's isoformat(): 2025-11-06T12:34:56.123456+00:00.
	TimeFormatOffset = "offset"
	// TimeFormatNaive has no offset at all, as a TIMESTAMP without time zone would give:
	// 2025-11-06T12:34:56.123456.
	TimeFormatNaive = "naive"
)

var timeLayouts = map[string]string{
	TimeFormatZ:      "2006-01-02T15:04:05.000000Z",
	TimeFormatOffset: "2006-01-02T15:04:05.000000+00:00",
	TimeFormatNaive:  "2006-01-02T15:04:05.000000",
}

// tsLocked formats t in UTC the way Options.TimeFormat says.
func (e *Emulator) tsLocked(t time.Time) string {
	return t.UTC().Format(timeLayouts[e.opts.TimeFormat])
}

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

// page writes a paginated list envelope. R2R counts the total with a window function
// (COUNT(*) OVER ()) over the rows of the page, so a page past the end has total 0
// (conformance test TestLive/documents/list_pagination_total).
func (c *call) page(items any, total int) {
	if v := reflect.ValueOf(items); v.Kind() == reflect.Slice && v.Len() == 0 {
		total = 0
	}
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
