package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/servertest"
)

// The end-to-end tests build the real binary once per test run (servertest.Build) and
// drive it over real stdio, with real MCP clients, against the R2R emulator.

func TestMain(m *testing.M) { servertest.Main(m) }

// ctxFor returns a context bounded by limit for one end-to-end scenario.
func ctxFor(t testing.TB, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}
