package r2r

import (
	"context"
	"net/http"
)

// SystemStatus is R2R's answer to GET /v3/system/status.
type SystemStatus struct {
	// StartTime is when the R2R process started, by R2R's clock (the clock its documents'
	// updated_at are stamped with).
	StartTime     Time    `json:"start_time"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// SystemStatus asks R2R when it started (GET /v3/system/status). R2R 3.6.6 answers only a
// superuser; anyone else gets 403 (ErrForbidden).
func (c *Client) SystemStatus(ctx context.Context) (*SystemStatus, error) {
	return result[SystemStatus](ctx, c, &Call{Op: "system status", Method: http.MethodGet, Path: "/v3/system/status",
		Idempotent: true})
}
