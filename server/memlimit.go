package server

import (
	"os"
	"runtime/debug"
)

// DefaultMemoryLimit is the Go runtime's soft memory limit serve sets unless GOMEMLIMIT
// says otherwise (160 MiB). What r2r-mcp keeps is bounded by its budgets (result cache,
// R2R bodies being read, files being uploaded); the soft limit makes the collector return
// the garbage of a burst (buffers of refused answers, say) before the heap doubles.
const DefaultMemoryLimit = 160 << 20

// ApplyMemoryLimit sets DefaultMemoryLimit as the runtime's soft memory limit when the
// GOMEMLIMIT environment variable is unset, and returns the limit in effect.
func ApplyMemoryLimit() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1) // reads the limit without changing it
	}
	debug.SetMemoryLimit(DefaultMemoryLimit)
	return DefaultMemoryLimit
}
